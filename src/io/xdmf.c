#include "io/xdmf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *xdmf_path_for(const char *h5_path)
{
    size_t n = strlen(h5_path);
    if (n > 3 && strcmp(h5_path + n - 3, ".h5") == 0)
        n -= 3;
    char *s = malloc(n + sizeof ".xdmf");
    if (!s)
        return NULL;
    memcpy(s, h5_path, n);
    memcpy(s + n, ".xdmf", sizeof ".xdmf");
    return s;
}

/* File names may contain XML metacharacters; an unescaped '&' would make the
 * whole sidecar unreadable. */
static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

/* The map is written as a flat 3-D image in VTK's x-y plane, the way VTK and
 * medical images store pixels: one node per cell, at the cell's centre, with the
 * cell's value (Center="Node"), x along VTK's x and depth z along VTK's y. A
 * flat image is what ParaView shows face-on by default (its "Slice"
 * representation, which paints each node's value over its whole cell); a
 * 2DCoRectMesh lands in the y-z plane and is seen edge-on, and a mesh one cell
 * thick opens as an outline. Cell-centred values on a flat mesh cannot be read
 * by the Xdmf (version 2) reader, hence the nodes at the centres.
 *
 * XDMF lists CoRectMesh dimensions slowest first, and the readers map them to
 * VTK's z, y, x in that order: node counts "1 nz nx", origin and spacing
 * "out-of-plane z x". The out-of-plane axis has one node; its spacing is unused
 * and written as dx. */
static void emit(FILE *f, const char *h5_name, const xdmf_mesh *m, const xdmf_field *fields,
                 int n_fields)
{
    fputs("<?xml version=\"1.0\" ?>\n"
          "<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n"
          "<Xdmf Version=\"2.0\">\n"
          "  <Domain>\n"
          "    <Grid Name=\"dose\" GridType=\"Uniform\">\n",
          f);
    fprintf(f, "      <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"1 %lld %lld\"/>\n",
            (long long)m->nz, (long long)m->nx);
    fputs("      <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n", f);
    fprintf(f,
            "        <DataItem Name=\"Origin\" Dimensions=\"3\" NumberType=\"Float\" "
            "Precision=\"8\" Format=\"XML\">0 %.17g %.17g</DataItem>\n",
            m->z0_mm + 0.5 * m->dz_mm, m->x0_mm + 0.5 * m->dx_mm);
    fprintf(f,
            "        <DataItem Name=\"Spacing\" Dimensions=\"3\" NumberType=\"Float\" "
            "Precision=\"8\" Format=\"XML\">%.17g %.17g %.17g</DataItem>\n",
            m->dx_mm, m->dz_mm, m->dx_mm);
    fputs("      </Geometry>\n", f);
    for (int i = 0; i < n_fields; i++) {
        fputs("      <Attribute Name=\"", f);
        put_escaped(f, fields[i].name);
        fputs("\" AttributeType=\"Scalar\" Center=\"Node\">\n", f);
        fprintf(f,
                "        <DataItem Dimensions=\"1 %lld %lld\" NumberType=\"%s\" "
                "Precision=\"%d\" Format=\"HDF\">",
                (long long)m->nz, (long long)m->nx,
                fields[i].number_type ? fields[i].number_type : "Float", fields[i].precision);
        put_escaped(f, h5_name);
        fputc(':', f);
        put_escaped(f, fields[i].h5_path);
        fputs("</DataItem>\n      </Attribute>\n", f);
    }
    fputs("    </Grid>\n  </Domain>\n</Xdmf>\n", f);
}

int xdmf_write(const char *path, const char *h5_name, const xdmf_mesh *m, const xdmf_field *fields,
               int n_fields, smx_error *err)
{
    char *tmp = NULL;
    if (asprintf(&tmp, "%s.partial-%ld", path, (long)getpid()) < 0)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        int rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot create: %s", tmp, strerror(errno));
        free(tmp);
        return rc;
    }
    emit(f, h5_name, m, fields, n_fields);
    /* A full disk shows up only at flush or close, so both are checked. */
    int bad = ferror(f);
    if (fclose(f) != 0)
        bad = 1;
    if (bad) {
        int e = errno;
        unlink(tmp);
        int rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: write failed: %s", tmp,
                          e ? strerror(e) : "I/O error");
        free(tmp);
        return rc;
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        int rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot rename %s into place: %s", path, tmp,
                          strerror(e));
        free(tmp);
        return rc;
    }
    free(tmp);
    return SMX_OK;
}
