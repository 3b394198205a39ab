/* make_tables: NIST PSTAR CSV -> the simulator's HDF5 material table.
 *
 *   make_tables data/pstar_water.csv data/pstar_water.h5
 *   make_tables --key KEY data/materials/KEY.csv data/materials/KEY.h5
 *
 * Without --key the table is liquid water's, written exactly as it always was
 * (data/pstar_water.h5). With --key the material's constants come from the
 * material library (physics/material.h): its name, nominal density, I and the
 * radiation length of the Fermi-Rossi column, and further root attributes
 * record the library key, Z/A, X0, XS and the composition.
 *
 * The CSV is parsed strictly because it is the one place where a typo would
 * turn into a wrong range for every run: anything unexpected stops the
 * generator with file:line and the column's name. The output is written to a
 * temporary name, read back through the simulator's own reader, and only then
 * renamed over the target, so a failed run never leaves a half-written table.
 * Exit status: 0 ok, 1 usage, 2 bad input, 3 I/O failure (see error.h). */
#include "base/error.h"
#include "physics/material.h"
#include "physics/material_library.h"
#include "physics/scattering_power.h"
#include "physics/tables.h"

#include <hdf5.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the CSV holds and what it does not say in machine-readable form. */
#define MATERIAL "water (liquid)"
#define DENSITY_G_CM3 1.0
#define I_EV 75.0
#define GENERATOR "scripts/make_tables.c"

#define NCOLS 7
/* CSV column j is dataset j of tables_datasets; the last dataset, the
 * scattering power, is computed rather than read. */
static const char *const CSV_HEADER[NCOLS] = {
    "kinetic_energy_MeV",
    "electronic_stopping_MeV_cm2_per_g",
    "nuclear_stopping_MeV_cm2_per_g",
    "total_stopping_MeV_cm2_per_g",
    "csda_range_g_per_cm2",
    "projected_range_g_per_cm2",
    "detour_factor",
};

typedef struct csv_table {
    int n, cap;
    double *col[TABLES_NDATASETS];
    char source[2048];
} csv_table;

static void csv_free(csv_table *c)
{
    for (int k = 0; k < TABLES_NDATASETS; k++)
        free(c->col[k]);
    memset(c, 0, sizeof *c);
}

static void chomp(char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
        s[--n] = '\0';
}

static int grow(csv_table *c, smx_error *err)
{
    if (c->n < c->cap)
        return 0;
    int cap = c->cap ? 2 * c->cap : 64;
    for (int k = 0; k < TABLES_NDATASETS; k++) {
        double *p = realloc(c->col[k], (size_t)cap * sizeof *p);
        if (!p)
            return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory");
        c->col[k] = p;
    }
    c->cap = cap;
    return 0;
}

/* One data row: exactly NCOLS fields, each a complete finite number > 0. */
static int parse_row(char *line, const char *file, long lineno, double v[NCOLS], smx_error *err)
{
    char *p = line;
    for (int j = 0; j < NCOLS; j++) {
        char *end = strchr(p, ',');
        if (j < NCOLS - 1 && !end)
            return smx_fail(err, SMX_EXIT_INPUT, "%s:%ld: %d columns; expected %d", file, lineno,
                            j + 1, NCOLS);
        if (j == NCOLS - 1 && end)
            return smx_fail(err, SMX_EXIT_INPUT, "%s:%ld: more than %d columns", file, lineno,
                            NCOLS);
        if (end)
            *end = '\0';
        char *stop;
        errno = 0;
        v[j] = strtod(p, &stop);
        if (*p == '\0' || *stop != '\0' || errno == ERANGE || !isfinite(v[j]))
            return smx_fail(err, SMX_EXIT_INPUT, "%s:%ld: column '%s': '%s' is not a number", file,
                            lineno, CSV_HEADER[j], p);
        if (!(v[j] > 0.0))
            return smx_fail(err, SMX_EXIT_INPUT, "%s:%ld: column '%s': %g is not positive", file,
                            lineno, CSV_HEADER[j], v[j]);
        p = end ? end + 1 : p;
    }
    return 0;
}

static int parse_csv(const char *file, csv_table *c, smx_error *err)
{
    FILE *f = fopen(file, "r");
    if (!f)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot open: %s", file, strerror(errno));
    char *line = NULL;
    size_t linecap = 0;
    long lineno = 0;
    int rc = 0;

    while (rc == 0 && getline(&line, &linecap, f) >= 0) {
        lineno++;
        chomp(line);
        if (lineno == 1) {
            /* The comment is the provenance of every number below; a CSV
             * without it is not one we know how to cite. */
            if (line[0] != '#') {
                rc = smx_fail(err, SMX_EXIT_INPUT,
                              "%s:1: expected a '#' comment line naming the source", file);
                break;
            }
            const char *s = line + 1;
            while (*s == ' ' || *s == '\t')
                s++;
            if (*s == '\0' || strlen(s) >= sizeof c->source) {
                rc = smx_fail(err, SMX_EXIT_INPUT,
                              "%s:1: source comment is empty or longer than %zu characters", file,
                              sizeof c->source - 1);
                break;
            }
            strcpy(c->source, s);
            continue;
        }
        if (lineno == 2) {
            char *p = line;
            for (int j = 0; j < NCOLS && rc == 0; j++) {
                size_t len = strcspn(p, ",");
                if (len != strlen(CSV_HEADER[j]) || strncmp(p, CSV_HEADER[j], len) != 0 ||
                    (j < NCOLS - 1 ? p[len] != ',' : p[len] != '\0'))
                    rc = smx_fail(err, SMX_EXIT_INPUT,
                                  "%s:2: header column %d is '%.*s'; expected '%s' (and %d "
                                  "columns in all)",
                                  file, j + 1, (int)len, p, CSV_HEADER[j], NCOLS);
                p += len + (p[len] == ',');
            }
            continue;
        }
        if (line[0] == '\0') {
            rc = smx_fail(err, SMX_EXIT_INPUT, "%s:%ld: empty line", file, lineno);
            break;
        }
        double v[NCOLS];
        if ((rc = parse_row(line, file, lineno, v, err)) || (rc = grow(c, err)))
            break;
        if (c->n > 0) {
            const double *E = c->col[0], *R = c->col[4];
            if (!(v[0] > E[c->n - 1]))
                rc = smx_fail(err, SMX_EXIT_INPUT,
                              "%s:%ld: column '%s': %g does not exceed the previous row's %g "
                              "(energies must be strictly ascending)",
                              file, lineno, CSV_HEADER[0], v[0], E[c->n - 1]);
            else if (!(v[4] > R[c->n - 1]))
                rc = smx_fail(err, SMX_EXIT_INPUT,
                              "%s:%ld: column '%s': %g does not exceed the previous row's %g "
                              "(range must grow with energy)",
                              file, lineno, CSV_HEADER[4], v[4], R[c->n - 1]);
        }
        if (rc == 0 && v[6] > 1.2)
            rc = smx_fail(err, SMX_EXIT_INPUT, "%s:%ld: column '%s': %g is above 1.2", file, lineno,
                          CSV_HEADER[6], v[6]);
        if (rc)
            break;
        for (int j = 0; j < NCOLS; j++)
            c->col[j][c->n] = v[j];
        c->n++;
    }
    if (rc == 0 && ferror(f))
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: read error: %s", file, strerror(errno));
    if (rc == 0 && c->n < 2)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: %d data rows; at least 2 are needed", file, c->n);
    free(line);
    fclose(f);
    return rc;
}

/* ---- HDF5 writing ---- */

/* Fixed-length UTF-8 string: smaller than a variable-length one and
 * byte-for-byte reproducible (no global-heap addresses in the file). */
static int put_string_attr(hid_t obj, const char *name, const char *value)
{
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = -1;
    int ok = t >= 0 && sp >= 0 && H5Tset_size(t, strlen(value) + 1) >= 0 &&
             H5Tset_strpad(t, H5T_STR_NULLTERM) >= 0 && H5Tset_cset(t, H5T_CSET_UTF8) >= 0 &&
             (a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
             H5Awrite(a, t, value) >= 0;
    if (a >= 0 && H5Aclose(a) < 0)
        ok = 0;
    if (sp >= 0 && H5Sclose(sp) < 0)
        ok = 0;
    if (t >= 0 && H5Tclose(t) < 0)
        ok = 0;
    return ok ? 0 : -1;
}

static int put_double_attr(hid_t obj, const char *name, double value)
{
    hid_t sp = H5Screate(H5S_SCALAR), a = -1;
    int ok = sp >= 0 &&
             (a = H5Acreate2(obj, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
             H5Awrite(a, H5T_NATIVE_DOUBLE, &value) >= 0;
    if (a >= 0 && H5Aclose(a) < 0)
        ok = 0;
    if (sp >= 0 && H5Sclose(sp) < 0)
        ok = 0;
    return ok ? 0 : -1;
}

static int put_dataset(hid_t fid, hid_t dcpl, const tables_dataset_spec *spec, const double *v,
                       int n)
{
    hsize_t dim = (hsize_t)n;
    hid_t sp = H5Screate_simple(1, &dim, NULL), d = -1;
    int ok = sp >= 0 &&
             (d = H5Dcreate2(fid, spec->name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, dcpl,
                             H5P_DEFAULT)) >= 0 &&
             H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0 &&
             put_string_attr(d, "units", spec->units) == 0 &&
             put_string_attr(d, "description", spec->description) == 0;
    if (d >= 0 && H5Dclose(d) < 0)
        ok = 0;
    if (sp >= 0 && H5Sclose(sp) < 0)
        ok = 0;
    return ok ? 0 : -1;
}

/* The composition as text: "H 0.111894, O 0.888106" (Z for elements without a symbol here). */
static void composition_text(const material_props *m, char *buf, size_t cap)
{
    static const char *const sym[] = { "",   "H",  "He", "Li", "Be", "B",  "C",  "N",
                                       "O",  "F",  "Ne", "Na", "Mg", "Al", "Si", "P",
                                       "S",  "Cl", "Ar", "K",  "Ca", "Sc", "Ti", "V",
                                       "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn" };
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < m->n_elements && used < cap; i++) {
        int Z = m->elements[i].Z;
        char z[16];
        if (Z > 0 && Z < (int)(sizeof sym / sizeof sym[0]))
            snprintf(z, sizeof z, "%s", sym[Z]);
        else
            snprintf(z, sizeof z, "Z=%d", Z);
        int n = snprintf(buf + used, cap - used, "%s%s %.6f", i ? ", " : "", z, m->elements[i].w);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* mat NULL: liquid water's legacy attributes; else the library material's. */
static int write_h5(const char *path, const csv_table *c, const material_props *mat, smx_error *err)
{
    char model[512];
    if (mat)
        snprintf(model, sizeof model,
                 "Fermi-Rossi, projected (one-plane) angle: T/rho = (Es/(p v))^2 / X0, "
                 "Es = %.1f MeV (Rossi's 21.2 MeV for the space angle / sqrt 2), "
                 "X0 = %.2f g/cm2 (%s; Tsai's formula over the composition), "
                 "p v = E (E + 2 m)/(E + m), m = %.6f MeV (proton)",
                 SMX_FR_ES_MEV, mat->X0_g_cm2, mat->name, SMX_PROTON_MASS_MEV);
    else
        snprintf(model, sizeof model,
                 "Fermi-Rossi, projected (one-plane) angle: T/rho = (Es/(p v))^2 / X0, "
                 "Es = %.1f MeV (Rossi's 21.2 MeV for the space angle / sqrt 2), "
                 "X0 = %.2f g/cm2 (water), p v = E (E + 2 m)/(E + m), m = %.6f MeV (proton)",
                 SMX_FR_ES_MEV, SMX_X0_WATER_G_CM2, SMX_PROTON_MASS_MEV);
    char composition[1024];
    if (mat)
        composition_text(mat, composition, sizeof composition);

    /* Without timestamps in the object headers the same input gives the same bytes. */
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE), dcpl = H5Pcreate(H5P_DATASET_CREATE), fid = -1;
    int ok = fcpl >= 0 && dcpl >= 0 && H5Pset_obj_track_times(fcpl, 0) >= 0 &&
             H5Pset_obj_track_times(dcpl, 0) >= 0 &&
             (fid = H5Fcreate(path, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT)) >= 0;
    ok = ok && put_string_attr(fid, "filetype", TABLES_FILETYPE) == 0 &&
         put_string_attr(fid, "format_version", TABLES_FORMAT_VERSION) == 0 &&
         put_string_attr(fid, "material", mat ? mat->name : MATERIAL) == 0 &&
         put_double_attr(fid, "density_g_cm3", mat ? mat->density_g_cm3 : DENSITY_G_CM3) == 0 &&
         put_double_attr(fid, "mean_excitation_energy_eV", mat ? mat->I_eV : I_EV) == 0 &&
         put_string_attr(fid, "source", c->source) == 0 &&
         put_string_attr(fid, "scattering_model", model) == 0 &&
         put_string_attr(fid, "generator", GENERATOR) == 0;
    /* Provenance of a library table; the reader does not need these (format 1.x
     * readers ignore attributes they do not know). */
    if (mat)
        ok = ok && put_string_attr(fid, "library_key", mat->key) == 0 &&
             put_double_attr(fid, "Z_over_A", mat->Z_over_A) == 0 &&
             put_double_attr(fid, "radiation_length_g_cm2", mat->X0_g_cm2) == 0 &&
             put_double_attr(fid, "scattering_length_g_cm2", mat->XS_g_cm2) == 0 &&
             put_string_attr(fid, "composition_mass_fractions", composition) == 0 &&
             put_string_attr(fid, "stopping_power_origin", mat->stopping_origin) == 0;
    for (int k = 0; ok && k < TABLES_NDATASETS; k++)
        ok = put_dataset(fid, dcpl, &tables_datasets[k], c->col[k], c->n) == 0;
    if (fid >= 0 && H5Fclose(fid) < 0)
        ok = 0;
    if (dcpl >= 0)
        H5Pclose(dcpl);
    if (fcpl >= 0)
        H5Pclose(fcpl);
    return ok ? 0 : smx_fail(err, SMX_EXIT_RUNTIME, "%s: HDF5 write failed", path);
}

/* Reads the new file back with the simulator's reader: it must accept it and
 * return the very doubles that were written. */
static int verify(const char *path, const csv_table *c, smx_error *err)
{
    tables t;
    int rc = tables_load(&t, path, err);
    if (rc)
        return rc;
    if (t.n != c->n)
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: read back %d rows, wrote %d", path, t.n, c->n);
    for (int k = 0; rc == 0 && k < TABLES_NDATASETS; k++)
        if (memcmp(tables_column(&t, k), c->col[k], (size_t)c->n * sizeof(double)) != 0)
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: dataset '%s' reads back different", path,
                          tables_datasets[k].name);
    tables_free(&t);
    return rc;
}

int main(int argc, char **argv)
{
    const char *key = NULL;
    if (argc == 5 && strcmp(argv[1], "--key") == 0) {
        key = argv[2];
        argv += 2;
        argc -= 2;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: make_tables [--key KEY] INPUT.csv OUTPUT.h5\n");
        return SMX_EXIT_USAGE;
    }
    const char *in = argv[1], *out = argv[2];
    smx_error err = { 0 };
    csv_table c = { 0 };
    char tmp[4096];
    int fd, rc, have_tmp = 0;
    const material_props *mat = NULL;

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    if (key && !(mat = material_library_props(key))) {
        rc = smx_fail(&err, SMX_EXIT_USAGE,
                      "--key '%s' is not a material library key "
                      "(physics/material_library.h)",
                      key);
        goto done;
    }
    if ((rc = parse_csv(in, &c, &err)))
        goto done;
    for (int i = 0; i < c.n; i++)
        c.col[7][i] =
            scattering_power_fermi_rossi(c.col[0][i], mat ? mat->X0_g_cm2 : SMX_X0_WATER_G_CM2);

    /* Same directory as the target, so the final rename cannot cross filesystems. */
    if (snprintf(tmp, sizeof tmp, "%s.partial-XXXXXX", out) >= (int)sizeof tmp) {
        rc = smx_fail(&err, SMX_EXIT_INPUT, "%s: path too long", out);
        goto done;
    }
    fd = mkstemp(tmp);
    if (fd < 0) {
        rc = smx_fail(&err, SMX_EXIT_RUNTIME, "%s: cannot create: %s", tmp, strerror(errno));
        goto done;
    }
    have_tmp = 1;
    /* mkstemp creates 0600; a data file others read should get the usual mode. */
    mode_t um = umask(0);
    umask(um);
    if (fchmod(fd, 0666 & ~um) != 0 || close(fd) != 0) {
        rc = smx_fail(&err, SMX_EXIT_RUNTIME, "%s: %s", tmp, strerror(errno));
        goto done;
    }
    if ((rc = write_h5(tmp, &c, mat, &err)) || (rc = verify(tmp, &c, &err)))
        goto done;
    if (rename(tmp, out) != 0) {
        rc = smx_fail(&err, SMX_EXIT_RUNTIME, "%s: cannot rename to %s: %s", tmp, out,
                      strerror(errno));
        goto done;
    }
    have_tmp = 0;
    printf("%s: %d energies, %g to %g MeV, from %s\n", out, c.n, c.col[0][0], c.col[0][c.n - 1],
           in);
done:
    if (have_tmp)
        unlink(tmp);
    csv_free(&c);
    if (rc)
        fprintf(stderr, "make_tables: %s\n", err.msg);
    return rc;
}
