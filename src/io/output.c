/* HDF5 result writer. The layout is documented in schemas/output.md; keep the two
 * in step. Every dataset goes through put_dataset(), which also writes its units
 * and description, so no object can be written without them. */
#include "io/output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <hdf5.h>

#include "io/xdmf.h"

#define MEV_TO_J 1.602176634e-13
#define RAD_TO_DEG (180.0 / 3.14159265358979323846)
/* A reader decompresses a whole chunk to get any value in it; this bounds that
 * cost for partial reads of very wide planes. */
#define PSI_CHUNK_MAX_BYTES (4u << 20)

struct output {
    hid_t file;
    char *final_path;
    char *temp_path;
    int overwrite;
    int setup_done, result_done;
    int placed; /* the file already has its final name; abort must not touch it */
    xdmf_mesh mesh;
};

/* ---- HDF5 error handling --------------------------------------------------
 * HDF5 prints its whole error stack to stderr by default; we report one line
 * instead. The previous handler is restored on the way out because tables.c and
 * the tests share the library state. */
typedef struct h5quiet {
    H5E_auto2_t func;
    void *data;
} h5quiet;

static h5quiet quiet_begin(void)
{
    h5quiet q = { NULL, NULL };
    H5Eget_auto2(H5E_DEFAULT, &q.func, &q.data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return q;
}

static void quiet_end(h5quiet q)
{
    H5Eset_auto2(H5E_DEFAULT, q.func, q.data);
}

/* Walking upward, entry 0 is where the error was first detected: the most useful
 * text. For system errors it is a long record with a timestamp; only its
 * "error message = '...'" part (strerror) is kept. */
static herr_t first_cause(unsigned n, const H5E_error2_t *e, void *data)
{
    char *out = data;
    if (n != 0 || !e->desc)
        return 0;
    const char *key = "error message = '";
    const char *m = strstr(e->desc, key);
    if (m) {
        m += strlen(key);
        const char *end = strchr(m, '\'');
        snprintf(out, 256, "%.*s", end ? (int)(end - m) : 255, m);
    } else {
        snprintf(out, 256, "%s", e->desc);
    }
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

static int h5_fail(const output *o, smx_error *err, const char *action, const char *object)
{
    char cause[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_cause, cause);
    H5Eclear2(H5E_DEFAULT);
    return smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot %s %s (in %s)%s%s", o->final_path,
                    action, object, o->temp_path, cause[0] ? ": " : "", cause);
}

static void close_id(hid_t *id, herr_t (*closer)(hid_t))
{
    if (*id >= 0)
        closer(*id);
    *id = H5I_INVALID_HID;
}

/* Closing a dataset writes out whatever HDF5 still holds for it, so on the
 * success path its close is an I/O operation like any other and is checked. */
static int close_dataset(output *o, hid_t *ds, const char *object, int rc, smx_error *err)
{
    if (*ds >= 0 && H5Dclose(*ds) < 0 && rc == SMX_OK)
        rc = h5_fail(o, err, "write", object);
    *ds = H5I_INVALID_HID;
    return rc;
}

/* ---- attributes ---------------------------------------------------------- */

/* Replaces an existing attribute: `complete` and the table hash are written
 * twice, and an attribute cannot change its type in place. */
static int put_attr(output *o, hid_t loc, const char *where, const char *name,
                    hid_t ftype, hid_t mtype, const void *value, smx_error *err)
{
    char object[512];
    snprintf(object, sizeof object, "attribute '%s' of %s", name, where);
    hid_t space = H5I_INVALID_HID, attr = H5I_INVALID_HID;
    int rc = SMX_OK;
    htri_t exists = H5Aexists(loc, name);
    if (exists < 0 || (exists > 0 && H5Adelete(loc, name) < 0)) {
        rc = h5_fail(o, err, "replace", object);
        goto done;
    }
    if ((space = H5Screate(H5S_SCALAR)) < 0 ||
        (attr = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(attr, mtype, value) < 0)
        rc = h5_fail(o, err, "write", object);
done:
    close_id(&attr, H5Aclose);
    close_id(&space, H5Sclose);
    return rc;
}

/* Fixed-length, NUL-terminated UTF-8: readable by h5dump, h5py and plain C
 * without variable-length memory management. */
static hid_t string_type(size_t len)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return t;
    if (H5Tset_size(t, len + 1) < 0 || H5Tset_strpad(t, H5T_STR_NULLTERM) < 0 ||
        H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

static int attr_str(output *o, hid_t loc, const char *where, const char *name,
                    const char *value, smx_error *err)
{
    if (!value)
        value = "";
    hid_t t = string_type(strlen(value));
    if (t < 0) {
        char object[512];
        snprintf(object, sizeof object, "attribute '%s' of %s", name, where);
        return h5_fail(o, err, "make the string type of", object);
    }
    int rc = put_attr(o, loc, where, name, t, t, value, err);
    H5Tclose(t);
    return rc;
}

static int attr_int(output *o, hid_t loc, const char *where, const char *name, int value,
                    smx_error *err)
{
    return put_attr(o, loc, where, name, H5T_STD_I32LE, H5T_NATIVE_INT, &value, err);
}

static int attr_f64(output *o, hid_t loc, const char *where, const char *name, double value,
                    smx_error *err)
{
    return put_attr(o, loc, where, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, err);
}

/* ---- groups and datasets ------------------------------------------------- */

static int open_group(output *o, const char *path, hid_t *g, smx_error *err)
{
    htri_t exists = H5Lexists(o->file, path, H5P_DEFAULT);
    if (exists > 0)
        *g = H5Gopen2(o->file, path, H5P_DEFAULT);
    else if (exists == 0)
        *g = H5Gcreate2(o->file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    else
        *g = H5I_INVALID_HID;
    if (*g < 0)
        return h5_fail(o, err, "create group", path);
    return SMX_OK;
}

enum value_kind {
    V_F64,   /* data: const double * */
    V_F32,   /* data: const float * */
    V_I32,   /* data: const int * */
    V_TEXT,  /* data: const char *, rank 0 */
    V_TEXTS  /* data: const char *const *, rank 1 */
};

/* One dataset declaration. dcpl and dapl 0 mean H5P_DEFAULT (contiguous, default
 * chunk cache); axes, when set, names what each dimension runs over, slowest first. */
typedef struct dset {
    hid_t parent;
    const char *parent_path;
    const char *name;
    int kind;
    int rank;
    hsize_t dims[4];
    const void *data;
    const char *units;
    const char *description;
    const char *axes;
    hid_t dcpl;
    hid_t dapl;
} dset;

/* Strings of a V_TEXTS dataset packed into one fixed-width buffer. */
static char *pack_strings(const char *const *s, hsize_t n, size_t *width)
{
    size_t w = 0;
    for (hsize_t i = 0; i < n; i++)
        if (s[i] && strlen(s[i]) > w)
            w = strlen(s[i]);
    *width = w;
    char *buf = calloc(n ? n : 1, w + 1);
    if (buf)
        for (hsize_t i = 0; i < n; i++)
            if (s[i])
                memcpy(buf + i * (w + 1), s[i], strlen(s[i]));
    return buf;
}

/* Creates (replacing any existing link), writes, and labels one dataset. With
 * keep non-NULL the open dataset is returned for extra attributes. */
static int put_dataset(output *o, const dset *d, hid_t *keep, smx_error *err)
{
    char object[512];
    snprintf(object, sizeof object, "dataset %s/%s",
             strcmp(d->parent_path, "/") == 0 ? "" : d->parent_path, d->name);
    hid_t space = H5I_INVALID_HID, ds = H5I_INVALID_HID, str = H5I_INVALID_HID;
    hid_t ftype = H5I_INVALID_HID, mtype = H5I_INVALID_HID;
    char *packed = NULL;
    const void *buf = d->data;
    hsize_t count = 1;
    int rc = SMX_OK;
    if (keep)
        *keep = H5I_INVALID_HID;
    for (int i = 0; i < d->rank; i++)
        count *= d->dims[i];

    switch (d->kind) {
    case V_F64: ftype = H5T_IEEE_F64LE; mtype = H5T_NATIVE_DOUBLE; break;
    case V_F32: ftype = H5T_IEEE_F32LE; mtype = H5T_NATIVE_FLOAT; break;
    case V_I32: ftype = H5T_STD_I32LE; mtype = H5T_NATIVE_INT; break;
    case V_TEXT: {
        const char *s = d->data ? d->data : "";
        str = string_type(strlen(s));
        buf = s;
        break;
    }
    case V_TEXTS: {
        size_t w = 0;
        packed = pack_strings(d->data, count, &w);
        if (!packed) {
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing %s",
                          o->final_path, object);
            goto done;
        }
        str = string_type(w);
        buf = packed;
        break;
    }
    }
    if (d->kind == V_TEXT || d->kind == V_TEXTS) {
        if (str < 0) {
            rc = h5_fail(o, err, "make the string type of", object);
            goto done;
        }
        ftype = mtype = str;
    }

    htri_t exists = H5Lexists(d->parent, d->name, H5P_DEFAULT);
    if (exists < 0 || (exists > 0 && H5Ldelete(d->parent, d->name, H5P_DEFAULT) < 0)) {
        rc = h5_fail(o, err, "replace", object);
        goto done;
    }
    space = d->rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(d->rank, d->dims, NULL);
    if (space < 0 ||
        (ds = H5Dcreate2(d->parent, d->name, ftype, space, H5P_DEFAULT,
                         d->dcpl ? d->dcpl : H5P_DEFAULT, d->dapl ? d->dapl : H5P_DEFAULT)) < 0) {
        rc = h5_fail(o, err, "create", object);
        goto done;
    }
    /* Zero-length datasets (a run of 0 steps) exist but have nothing to write. */
    if (count > 0 && H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        rc = h5_fail(o, err, "write", object);
        goto done;
    }
    rc = attr_str(o, ds, object, "units", d->units, err);
    if (!rc)
        rc = attr_str(o, ds, object, "description", d->description, err);
    if (!rc && d->axes)
        rc = attr_str(o, ds, object, "axes", d->axes, err);
    if (!rc && keep) {
        *keep = ds;
        ds = H5I_INVALID_HID;
    }
done:
    rc = close_dataset(o, &ds, object, rc, err);
    close_id(&space, H5Sclose);
    close_id(&str, H5Tclose);
    free(packed);
    return rc;
}

/* ---- safe file handling --------------------------------------------------- */

static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static char *incomplete_path(const char *final_path)
{
    size_t n = strlen(final_path);
    if (n > 3 && strcmp(final_path + n - 3, ".h5") == 0)
        n -= 3;
    char *s = NULL;
    if (asprintf(&s, "%.*s.incomplete.h5", (int)n, final_path) < 0)
        return NULL;
    return s;
}

static int refuse_existing(const char *final_path, smx_error *err)
{
    return smx_fail(err, SMX_EXIT_INPUT,
                    "%s: exists; refusing to overwrite (set output.overwrite: true or pass "
                    "--overwrite)", final_path);
}

int output_check_target(const char *final_path, int overwrite, smx_error *err)
{
    if (!final_path || !final_path[0])
        return smx_fail(err, SMX_EXIT_INPUT, "output file name is empty (output.file)");
    size_t n = strlen(final_path);
    if (final_path[n - 1] == '/')
        return smx_fail(err, SMX_EXIT_INPUT, "%s: names a directory, not an output file",
                        final_path);
    struct stat st;
    if (stat(final_path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return smx_fail(err, SMX_EXIT_INPUT, "%s: is a directory, not an output file",
                            final_path);
        if (!overwrite)
            return refuse_existing(final_path, err);
    }
    char *dir = dir_of(final_path);
    if (!dir)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", final_path);
    int rc = SMX_OK;
    if (stat(dir, &st) != 0)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: output directory %s: %s", final_path, dir,
                      strerror(errno));
    else if (!S_ISDIR(st.st_mode))
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: %s is not a directory", final_path, dir);
    /* The temporary file and the rename both need write and search permission. */
    else if (access(dir, W_OK | X_OK) != 0)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: output directory %s is not writable: %s",
                      final_path, dir, strerror(errno));
    free(dir);
    return rc;
}

/* HDF5 1.10 frees a file's state when H5Fclose fails part-way (on a full disk)
 * yet leaves its id registered, and the library's exit handler then crashes on
 * it; a failed H5Fflush leaves the cache unable to flush ever again, so probing
 * with a flush does not help either. Hence a file to be kept is closed only when
 * the disk has room for everything its metadata cache may still write, and one
 * being thrown away is unlinked and truncated first, which frees that room. */
static int room_to_close(const output *o, double *need, double *have)
{
    size_t max_size = 0, min_clean = 0, cur_size = 0;
    int entries = 0;
    struct statvfs sv;
    *need = *have = 0;
    if (H5Fget_mdc_size(o->file, &max_size, &min_clean, &cur_size, &entries) < 0 ||
        statvfs(o->temp_path, &sv) != 0)
        return 1; /* cannot tell: let the close try */
    *need = (double)cur_size + (double)(1u << 20);
    *have = (double)sv.f_bavail * (double)sv.f_frsize;
    return *have >= *need;
}

/* The measures above cover a full disk, not a file-size limit (EFBIG), where the
 * close can still fail. What then crashes is HDF5's own exit handler, which has
 * nothing left to do: every file is closed explicitly before exit. Switching it
 * off (before HDF5 initialises, hence a constructor) keeps such a run's exit
 * status the documented one instead of a segfault. Only programs that link this
 * writer are affected. */
__attribute__((constructor)) static void no_hdf5_exit_handler(void)
{
    H5dont_atexit();
}

static void discard_file(output *o)
{
    if (unlink(o->temp_path) != 0 && errno != ENOENT)
        smx_warn("%s: could not remove %s: %s\n", o->final_path, o->temp_path,
                 strerror(errno));
    hid_t fapl = H5Fget_access_plist(o->file);
    void *handle = NULL;
    if (fapl >= 0 && H5Pget_driver(fapl) == H5FD_SEC2 &&
        H5Fget_vfd_handle(o->file, fapl, &handle) >= 0 && handle) {
        int fd = *(int *)handle;
        if (ftruncate(fd, 0) != 0)
            smx_warn("%s: could not truncate %s: %s\n", o->final_path, o->temp_path,
                     strerror(errno));
    }
    if (fapl >= 0)
        H5Pclose(fapl);
    H5Fclose(o->file);
    o->file = H5I_INVALID_HID;
}

static void output_free(output *o)
{
    if (!o)
        return;
    if (o->file >= 0)
        H5Fclose(o->file);
    free(o->final_path);
    free(o->temp_path);
    free(o);
}

static int open_impl(output **out, const char *final_path, int overwrite, smx_error *err)
{
    *out = NULL;
    int rc = output_check_target(final_path, overwrite, err);
    if (rc)
        return rc;
    output *o = calloc(1, sizeof *o);
    if (!o)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", final_path);
    o->file = H5I_INVALID_HID;
    o->overwrite = overwrite;
    o->final_path = strdup(final_path);
    if (!o->final_path ||
        asprintf(&o->temp_path, "%s.partial-%ld", final_path, (long)getpid()) < 0) {
        o->temp_path = NULL;
        output_free(o);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", final_path);
    }

    /* STRONG closes any object an error path might have left open, so closing
     * the file always really closes it before the rename. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
        o->file = H5Fcreate(o->temp_path, H5F_ACC_EXCL, H5P_DEFAULT, fapl);
    /* Before H5Pclose: every API call starts by clearing the error stack. */
    if (o->file < 0)
        rc = h5_fail(o, err, "create", "the temporary file");
    if (fapl >= 0)
        H5Pclose(fapl);
    if (rc) {
        output_free(o);
        return rc;
    }
    rc = attr_str(o, o->file, "/", "filetype", OUTPUT_FILETYPE, err);
    if (!rc)
        rc = attr_str(o, o->file, "/", "format_version", OUTPUT_FORMAT_VERSION, err);
    if (!rc)
        rc = attr_int(o, o->file, "/", "complete", 0, err);
    if (rc) {
        discard_file(o);
        output_free(o);
        return rc;
    }
    *out = o;
    return SMX_OK;
}

int output_open(output **o, const char *final_path, int overwrite, smx_error *err)
{
    h5quiet q = quiet_begin();
    int rc = open_impl(o, final_path, overwrite, err);
    quiet_end(q);
    return rc;
}

const char *output_temp_path(const output *o)
{
    return o ? o->temp_path : NULL;
}

static int not_open(const output *o, smx_error *err, const char *what)
{
    if (o && o->file >= 0)
        return SMX_OK;
    return smx_fail(err, SMX_EXIT_RUNTIME, "%s: %s called on an output that is not open",
                    o && o->final_path ? o->final_path : "output", what);
}

static void remember_mesh(output *o, const grid *g)
{
    o->mesh.nz = g->nz;
    o->mesh.nx = g->nx;
    o->mesh.z0_mm = g->z.edges[0];
    o->mesh.x0_mm = g->x.edges[0];
    o->mesh.dz_mm = g->dz;
    o->mesh.dx_mm = g->dx;
}

static int check_grid(const output *o, const grid *g, smx_error *err)
{
    if (g->ne < 1 || g->nth < 1 || g->nz < 1 || g->nx < 1 || g->E.n != g->ne ||
        g->theta.n != g->nth || g->z.n != g->nz || g->x.n != g->nx)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s: inconsistent grid (ne %lld, nth %lld, nz %lld, nx %lld)",
                        o->final_path, (long long)g->ne, (long long)g->nth,
                        (long long)g->nz, (long long)g->nx);
    return SMX_OK;
}

/* ---- setup: axes and plan ---------------------------------------------- */

static int write_axis(output *o, hid_t grp, const char *stem, const char *units,
                      const char *what, const axis *a, double scale, smx_error *err)
{
    size_t n = (size_t)a->n;
    double *c = malloc(n * sizeof *c), *e = malloc((n + 1) * sizeof *e);
    if (!c || !e) {
        free(c);
        free(e);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /axes",
                        o->final_path);
    }
    for (size_t i = 0; i < n; i++)
        c[i] = a->centres[i] * scale;
    for (size_t i = 0; i <= n; i++)
        e[i] = a->edges[i] * scale;
    char name[64], desc[256];
    snprintf(name, sizeof name, "%s_centres_%s", stem, units);
    snprintf(desc, sizeof desc, "%s bin centres", what);
    int rc = put_dataset(o, &(dset){ .parent = grp, .parent_path = "/axes", .name = name,
                                     .kind = V_F64, .rank = 1, .dims = { n }, .data = c,
                                     .units = units, .description = desc }, NULL, err);
    snprintf(name, sizeof name, "%s_edges_%s", stem, units);
    snprintf(desc, sizeof desc, "%s bin edges, ascending (n + 1 values)", what);
    if (!rc)
        rc = put_dataset(o, &(dset){ .parent = grp, .parent_path = "/axes", .name = name,
                                     .kind = V_F64, .rank = 1, .dims = { n + 1 }, .data = e,
                                     .units = units, .description = desc }, NULL, err);
    free(c);
    free(e);
    return rc;
}

static int setup_impl(output *o, const plan *p, const grid *g, const tables *t,
                      smx_error *err)
{
    int rc = not_open(o, err, "output_write_setup");
    if (!rc)
        rc = check_grid(o, g, err);
    if (rc)
        return rc;
    hid_t grp = H5I_INVALID_HID;
    char *resolved = NULL;

    if ((rc = open_group(o, "/axes", &grp, err)))
        goto done;
    if ((rc = write_axis(o, grp, "energy", "MeV", "Kinetic energy", &g->E, 1.0, err)) ||
        (rc = write_axis(o, grp, "theta", "deg",
                         "Direction, from +x towards +z (90 deg = along depth)", &g->theta,
                         RAD_TO_DEG, err)) ||
        (rc = write_axis(o, grp, "x", "mm", "Lateral position (0 = beam axis)", &g->x, 1.0,
                         err)) ||
        (rc = write_axis(o, grp, "z", "mm", "Depth (0 = entrance plane)", &g->z, 1.0, err)))
        goto done;
    close_id(&grp, H5Gclose);

    if ((rc = open_group(o, "/plan", &grp, err)))
        goto done;
    rc = put_dataset(o, &(dset){ .parent = grp, .parent_path = "/plan", .name = "yaml_text",
                                 .kind = V_TEXT, .data = p->yaml_text, .units = "",
                                 .description = "The plan file, verbatim" }, NULL, err);
    if (rc)
        goto done;
    resolved = plan_resolved_text(p);
    if (!resolved) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot capture the resolved plan: %s",
                      o->final_path, strerror(errno));
        goto done;
    }
    rc = put_dataset(o, &(dset){ .parent = grp, .parent_path = "/plan", .name = "resolved",
                                 .kind = V_TEXT, .data = resolved, .units = "",
                                 .description = "Every plan key with the value used "
                                                "(defaults and --set applied), one "
                                                "'key.path: value' line each" },
                     NULL, err);
    if (rc)
        goto done;

    if ((rc = attr_str(o, o->file, "/", "plan_file", p->path, err)) ||
        (rc = attr_str(o, o->file, "/", "table_file", t ? t->path : p->table_path, err)) ||
        (t && t->sha256[0] &&
         (rc = attr_str(o, o->file, "/", "table_sha256", t->sha256, err))))
        goto done;
    remember_mesh(o, g);
    o->setup_done = 1;
done:
    close_id(&grp, H5Gclose);
    free(resolved);
    return rc;
}

int output_write_setup(output *o, const plan *p, const grid *g, const tables *t,
                       smx_error *err)
{
    h5quiet q = quiet_begin();
    int rc = setup_impl(o, p, g, t, err);
    quiet_end(q);
    return rc;
}

/* ---- psi snapshots -------------------------------------------------------- */

static int snapshot_impl(output *o, const grid *g, int step, const float *psi,
                         smx_error *err)
{
    int rc = not_open(o, err, "output_write_snapshot");
    if (!rc)
        rc = check_grid(o, g, err);
    if (rc)
        return rc;
    if (step < 0 || step > 999999)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: snapshot step %d outside 0..999999",
                        o->final_path, step);
    hid_t grp = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, dapl = H5I_INVALID_HID;
    hid_t ds = H5I_INVALID_HID;
    char name[32], where[64];
    snprintf(name, sizeof name, "step_%06d", step);
    snprintf(where, sizeof where, "/psi/%s", name);

    if ((rc = open_group(o, "/psi", &grp, err)))
        goto done;
    if ((rc = attr_str(o, grp, "/psi", "description",
                       "Phase-space snapshots psi[energy][theta][z][x], one dataset "
                       "step_NNNNNN per saved step (0 = after the source)", err)))
        goto done;

    /* One (E, theta) plane per chunk matches both how the solver stores psi and
     * how it is usually read (a z-x map); very wide planes are split along z so a
     * chunk never exceeds PSI_CHUNK_MAX_BYTES. */
    hsize_t chunk[4] = { 1, 1, (hsize_t)g->nz, (hsize_t)g->nx };
    const hsize_t max_vals = PSI_CHUNK_MAX_BYTES / sizeof(float);
    if (chunk[3] > max_vals)
        chunk[3] = max_vals;
    if (chunk[2] * chunk[3] > max_vals)
        chunk[2] = max_vals / chunk[3];
    if ((dcpl = H5Pcreate(H5P_DATASET_CREATE)) < 0 || H5Pset_chunk(dcpl, 4, chunk) < 0 ||
        H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0 ||
        /* No chunk cache: each chunk is written once, and writing it during
         * H5Dwrite (not later, at close) makes a full disk fail right there. */
        (dapl = H5Pcreate(H5P_DATASET_ACCESS)) < 0 ||
        H5Pset_chunk_cache(dapl, 0, 0, 1.0) < 0) {
        rc = h5_fail(o, err, "set up chunking and compression for", where);
        goto done;
    }
    char desc[128];
    snprintf(desc, sizeof desc, "psi after %d step(s)", step);
    rc = put_dataset(o, &(dset){ .parent = grp, .parent_path = "/psi", .name = name,
                                 .kind = V_F32, .rank = 4,
                                 .dims = { (hsize_t)g->ne, (hsize_t)g->nth, (hsize_t)g->nz,
                                           (hsize_t)g->nx },
                                 .data = psi, .units = "weight per bin", .description = desc,
                                 .axes = "energy_centres_MeV,theta_centres_deg,z_centres_mm,"
                                         "x_centres_mm",
                                 .dcpl = dcpl, .dapl = dapl }, &ds, err);
    if (!rc)
        rc = attr_int(o, ds, where, "step", step, err);
done:
    rc = close_dataset(o, &ds, where, rc, err);
    close_id(&dapl, H5Pclose);
    close_id(&dcpl, H5Pclose);
    close_id(&grp, H5Gclose);
    return rc;
}

int output_write_snapshot(output *o, const grid *g, int step, const float *psi,
                          smx_error *err)
{
    h5quiet q = quiet_begin();
    int rc = snapshot_impl(o, g, step, psi, err);
    quiet_end(q);
    return rc;
}

/* ---- result: dose, tallies, timing, provenance ---------------------------- */

static int write_dose(output *o, const plan *p, const grid *g, const run_result *r,
                      smx_error *err)
{
    size_t cells = (size_t)(g->nz * g->nx);
    double slab = p->slab_thickness_mm, rho = g->density;
    if (!(slab > 0) || !(rho > 0) || !(g->dx > 0) || !(g->dz > 0))
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s: cannot convert dose to Gy: slab thickness %g mm, density %g "
                        "g/cm3, cell %g x %g mm must all be positive", o->final_path, slab,
                        rho, g->dx, g->dz);
    if (!r->dose_MeV)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: the run result has no dose array",
                        o->final_path);
    double *gy = malloc(cells * sizeof *gy);
    if (!gy)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /dose",
                        o->final_path);
    /* kg of one cell: g/cm3 -> kg/m3 is x1e3 and mm3 -> m3 is x1e-9. */
    double mass_kg = rho * 1e3 * (g->dx * g->dz * slab) * 1e-9;
    double per_MeV = MEV_TO_J / mass_kg;
    for (size_t i = 0; i < cells; i++)
        gy[i] = r->dose_MeV[i] * per_MeV;

    hid_t grp = H5I_INVALID_HID, ds = H5I_INVALID_HID;
    int rc = open_group(o, "/dose", &grp, err);
    const hsize_t nz = (hsize_t)g->nz, nx = (hsize_t)g->nx;
    if (!rc)
        rc = put_dataset(o, &(dset){ .parent = grp, .parent_path = "/dose",
                                     .name = "energy_deposit_MeV", .kind = V_F64, .rank = 2,
                                     .dims = { nz, nx }, .data = r->dose_MeV, .units = "MeV",
                                     .description = "Energy deposited in each cell per unit "
                                                    "initial beam weight",
                                     .axes = "z_centres_mm,x_centres_mm" }, NULL, err);
    if (!rc)
        rc = put_dataset(o, &(dset){ .parent = grp, .parent_path = "/dose", .name = "dose_Gy",
                                     .kind = V_F64, .rank = 2, .dims = { nz, nx }, .data = gy,
                                     .units = "Gy",
                                     .description = "Absorbed dose per unit initial beam "
                                                    "weight: energy_deposit_MeV over the "
                                                    "mass of a dx x dz x slab_thickness_mm "
                                                    "cell of density density_g_cm3",
                                     .axes = "z_centres_mm,x_centres_mm" }, &ds, err);
    if (!rc)
        rc = attr_f64(o, ds, "/dose/dose_Gy", "slab_thickness_mm", slab, err);
    if (!rc)
        rc = attr_f64(o, ds, "/dose/dose_Gy", "density_g_cm3", rho, err);
    rc = close_dataset(o, &ds, "/dose/dose_Gy", rc, err);
    close_id(&grp, H5Gclose);
    free(gy);
    return rc;
}

/* Column-major copies of the per-step balance records, one array per dataset. */
typedef struct step_columns {
    double *w_ch, *e_ch;               /* [n][CH_COUNT] */
    double *dep, *w_in, *w_out, *e_in, *e_out, *w_rel, *e_rel; /* [n] */
} step_columns;

static void free_columns(step_columns *c)
{
    free(c->w_ch);
    free(c->e_ch);
    free(c->dep);
    free(c->w_in);
    free(c->w_out);
    free(c->e_in);
    free(c->e_out);
    free(c->w_rel);
    free(c->e_rel);
}

static int fill_columns(step_columns *c, const run_result *r)
{
    /* At least one element so a 0-step run still gets non-NULL buffers. */
    size_t n = r->n_steps > 0 ? (size_t)r->n_steps : 1;
    memset(c, 0, sizeof *c);
    c->w_ch = calloc(n * CH_COUNT, sizeof(double));
    c->e_ch = calloc(n * CH_COUNT, sizeof(double));
    double **cols[] = { &c->dep, &c->w_in, &c->w_out, &c->e_in, &c->e_out, &c->w_rel,
                        &c->e_rel };
    int ok = c->w_ch && c->e_ch;
    for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
        ok = (*cols[k] = calloc(n, sizeof(double))) != NULL && ok;
    if (!ok)
        return -1;
    for (int i = 0; i < r->n_steps; i++) {
        const step_balance *b = &r->steps[i];
        for (int ch = 0; ch < CH_COUNT; ch++) {
            c->w_ch[(size_t)i * CH_COUNT + ch] = b->t.weight[ch];
            c->e_ch[(size_t)i * CH_COUNT + ch] = b->t.energy[ch];
        }
        c->dep[i] = b->t.deposited;
        c->w_in[i] = b->weight_in;
        c->w_out[i] = b->weight_out;
        c->e_in[i] = b->energy_in;
        c->e_out[i] = b->energy_out;
        c->w_rel[i] = b->weight_rel_err;
        c->e_rel[i] = b->energy_rel_err;
    }
    return 0;
}

static int write_tallies(output *o, const run_result *r, smx_error *err)
{
    step_columns c;
    if (r->n_steps < 0 || (r->n_steps > 0 && (!r->steps || !r->step_ms ||
                                              !r->front_depth_mm)))
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: run result with %d steps has no step "
                        "arrays", o->final_path, r->n_steps);
    if (fill_columns(&c, r)) {
        free_columns(&c);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing /tallies",
                        o->final_path);
    }
    static const double none[1] = { 0.0 };
    const hsize_t n = (hsize_t)r->n_steps;
    const char *ch = "step,channel (see channel_names)";
    const char *st = "step";
    const dset list[] = {
        { .name = "weight_per_step", .kind = V_F64, .rank = 2, .dims = { n, CH_COUNT },
          .data = c.w_ch, .units = "1", .axes = ch,
          .description = "Weight removed from psi in each step, per escape channel" },
        { .name = "energy_per_step_MeV", .kind = V_F64, .rank = 2, .dims = { n, CH_COUNT },
          .data = c.e_ch, .units = "MeV", .axes = ch,
          .description = "Energy carried by the removed weight, per channel; "
                         "energy_stopped is deposited locally and is also part of "
                         "deposited_per_step_MeV" },
        { .name = "deposited_per_step_MeV", .kind = V_F64, .rank = 1, .dims = { n },
          .data = c.dep, .units = "MeV", .axes = st,
          .description = "Energy deposited into the dose grid in each step" },
        { .name = "weight_in", .kind = V_F64, .rank = 1, .dims = { n }, .data = c.w_in,
          .units = "1", .axes = st, .description = "Sum of psi before each step" },
        { .name = "weight_out", .kind = V_F64, .rank = 1, .dims = { n }, .data = c.w_out,
          .units = "1", .axes = st, .description = "Sum of psi after each step" },
        { .name = "energy_in_MeV", .kind = V_F64, .rank = 1, .dims = { n }, .data = c.e_in,
          .units = "MeV", .axes = st, .description = "Sum of psi x E before each step" },
        { .name = "energy_out_MeV", .kind = V_F64, .rank = 1, .dims = { n }, .data = c.e_out,
          .units = "MeV", .axes = st, .description = "Sum of psi x E after each step" },
        { .name = "weight_rel_err", .kind = V_F64, .rank = 1, .dims = { n }, .data = c.w_rel,
          .units = "1", .axes = st,
          .description = "|weight_in - weight_out - sum of channel weights| / weight_in "
                         "(0 when weight_in is 0)" },
        { .name = "energy_rel_err", .kind = V_F64, .rank = 1, .dims = { n }, .data = c.e_rel,
          .units = "1", .axes = st,
          .description = "|energy_in - energy_out - deposited - sum of channel energies "
                         "except energy_stopped| / energy_in (0 when energy_in is 0)" },
        { .name = "step_ms", .kind = V_F64, .rank = 1, .dims = { n },
          .data = n ? r->step_ms : none, .units = "ms", .axes = st,
          .description = "Wall-clock time of each step" },
        { .name = "front_depth_mm", .kind = V_F64, .rank = 1, .dims = { n },
          .data = n ? r->front_depth_mm : none, .units = "mm", .axes = st,
          .description = "Deepest z centre holding weight after each step" },
        { .name = "cumulative_weight", .kind = V_F64, .rank = 1, .dims = { CH_COUNT },
          .data = r->cumulative.weight, .units = "1", .axes = "channel",
          .description = "Weight removed over the whole run, per channel" },
        { .name = "cumulative_energy_MeV", .kind = V_F64, .rank = 1, .dims = { CH_COUNT },
          .data = r->cumulative.energy, .units = "MeV", .axes = "channel",
          .description = "Energy removed over the whole run, per channel" },
        { .name = "cumulative_deposited_MeV", .kind = V_F64, .rank = 0,
          .data = &r->cumulative.deposited, .units = "MeV",
          .description = "Energy deposited over the whole run" },
        { .name = "initial_weight", .kind = V_F64, .rank = 0, .data = &r->initial_weight,
          .units = "1", .description = "Sum of psi after the source" },
        { .name = "initial_energy_MeV", .kind = V_F64, .rank = 0,
          .data = &r->initial_energy_MeV, .units = "MeV",
          .description = "Sum of psi x E after the source" },
    };

    hid_t grp = H5I_INVALID_HID;
    int rc = open_group(o, "/tallies", &grp, err);
    if (!rc) {
        char names[256] = "";
        for (int k = 0; k < CH_COUNT; k++) {
            strncat(names, k ? "," : "", sizeof names - strlen(names) - 1);
            strncat(names, tally_channel_names[k], sizeof names - strlen(names) - 1);
        }
        rc = attr_str(o, grp, "/tallies", "channel_names", names, err);
    }
    for (size_t k = 0; !rc && k < sizeof list / sizeof list[0]; k++) {
        dset d = list[k];
        d.parent = grp;
        d.parent_path = "/tallies";
        rc = put_dataset(o, &d, NULL, err);
    }
    close_id(&grp, H5Gclose);
    free_columns(&c);
    return rc;
}

static int write_timing(output *o, const run_result *r, smx_error *err)
{
    int n = r->n_phases < 0 ? 0 : r->n_phases > RUN_MAX_PHASES ? RUN_MAX_PHASES : r->n_phases;
    hid_t grp = H5I_INVALID_HID;
    int rc = open_group(o, "/timing", &grp, err);
    if (!rc)
        rc = put_dataset(o, &(dset){ .parent = grp, .parent_path = "/timing",
                                     .name = "phase_names", .kind = V_TEXTS, .rank = 1,
                                     .dims = { (hsize_t)n }, .data = r->phase_name,
                                     .units = "",
                                     .description = "Name of each timed phase, in order" },
                         NULL, err);
    if (!rc)
        rc = put_dataset(o, &(dset){ .parent = grp, .parent_path = "/timing",
                                     .name = "phase_seconds", .kind = V_F64, .rank = 1,
                                     .dims = { (hsize_t)n }, .data = r->phase_s,
                                     .units = "s", .axes = "phase_names",
                                     .description = "Wall-clock time of each phase" },
                         NULL, err);
    close_id(&grp, H5Gclose);
    return rc;
}

static const char *stop_reason_name(int reason)
{
    switch (reason) {
    case STOP_STEPS_DONE: return "steps_done";
    case STOP_WEIGHT_BELOW: return "weight_below";
    case STOP_MAX_STEPS: return "max_steps";
    case STOP_INTERRUPTED: return "interrupted";
    case STOP_FAILED: return "failed";
    }
    return "unknown";
}

static int write_root_attrs(output *o, const run_result *r, const provenance *pv,
                            smx_error *err)
{
    const struct { const char *name, *value; } strs[] = {
        { "code_version", pv->code_version },
        { "git_describe", pv->git_describe },
        { "compiler", pv->compiler },
        { "cflags", pv->cflags },
        { "nvcc_version", pv->nvcc_version },
        { "nvcc_flags", pv->nvcc_flags },
        { "cuda_runtime_version", pv->cuda_version },
        { "cuda_driver_version", pv->cuda_driver_version },
        { "cufft_version", pv->cufft_version },
        { "hdf5_version", pv->hdf5_version },
        { "libyaml_version", pv->yaml_version },
        { "hostname", pv->hostname },
        { "argv", pv->argv },
        { "utc_start", pv->utc_start },
        { "utc_end", pv->utc_end },
        { "plan_sha256", pv->plan_sha256 },
        { "backend", r->backend_name },
        { "device_name", r->device_name },
        { "compute_capability", r->compute_capability },
        { "kernel_variants", r->kernel_variants },
        { "stop_reason", stop_reason_name(r->stop_reason) },
    };
    int rc = SMX_OK;
    /* An empty attribute reads like a writer bug; say that the fact was unknown. */
    for (size_t k = 0; !rc && k < sizeof strs / sizeof strs[0]; k++)
        rc = attr_str(o, o->file, "/", strs[k].name,
                      strs[k].value[0] ? strs[k].value : "unknown", err);
    /* The tables loader hashes the file it actually read (written at setup);
     * the caller's copy only replaces it when there is one. */
    if (!rc && pv->table_sha256[0])
        rc = attr_str(o, o->file, "/", "table_sha256", pv->table_sha256, err);
    if (!rc)
        rc = attr_int(o, o->file, "/", "n_steps", r->n_steps, err);
    if (!rc)
        rc = attr_f64(o, o->file, "/", "conservation_max_weight_rel_err",
                      r->max_weight_rel_err, err);
    if (!rc)
        rc = attr_f64(o, o->file, "/", "conservation_max_energy_rel_err",
                      r->max_energy_rel_err, err);
    if (!rc)
        rc = attr_int(o, o->file, "/", "conservation_violations", r->conservation_violations,
                      err);
    return rc;
}

static int result_impl(output *o, const plan *p, const grid *g, const run_result *r,
                       const provenance *pv, smx_error *err)
{
    int rc = not_open(o, err, "output_write_result");
    if (!rc)
        rc = check_grid(o, g, err);
    if (!rc)
        rc = write_dose(o, p, g, r, err);
    if (!rc)
        rc = write_tallies(o, r, err);
    if (!rc)
        rc = write_timing(o, r, err);
    if (!rc)
        rc = write_root_attrs(o, r, pv, err);
    if (!rc) {
        remember_mesh(o, g);
        o->result_done = 1;
    }
    return rc;
}

int output_write_result(output *o, const plan *p, const grid *g, const run_result *r,
                        const provenance *pv, smx_error *err)
{
    h5quiet q = quiet_begin();
    int rc = result_impl(o, p, g, r, pv, err);
    quiet_end(q);
    return rc;
}

/* ---- commit and abort ----------------------------------------------------- */

/* Without overwrite, link() refuses an existing name atomically, so a file that
 * appeared at the final path during the run is still never replaced. Filesystems
 * without hard links fall back to a check before rename(). */
static int place_file(output *o, smx_error *err)
{
    if (o->overwrite) {
        if (rename(o->temp_path, o->final_path) == 0)
            return SMX_OK;
    } else if (link(o->temp_path, o->final_path) == 0) {
        if (unlink(o->temp_path) != 0)
            smx_warn("%s: could not remove %s after linking it into place: %s\n",
                     o->final_path, o->temp_path, strerror(errno));
        return SMX_OK;
    } else if (errno == EEXIST) {
        return refuse_existing(o->final_path, err);
    } else if (errno == EPERM || errno == ENOTSUP || errno == EOPNOTSUPP ||
               errno == EMLINK || errno == ENOSYS) {
        if (access(o->final_path, F_OK) == 0)
            return refuse_existing(o->final_path, err);
        if (rename(o->temp_path, o->final_path) == 0)
            return SMX_OK;
    }
    return smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot move %s into place: %s",
                    o->final_path, o->temp_path, strerror(errno));
}

static int commit_impl(output *o, smx_error *err)
{
    int rc = not_open(o, err, "output_commit");
    if (rc)
        return rc;
    /* A file marked complete must hold everything the layout promises, and the
     * sidecar needs the dose mesh. */
    if (!o->setup_done || !o->result_done)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "%s: output_commit before output_write_setup and "
                        "output_write_result", o->final_path);
    if ((rc = attr_int(o, o->file, "/", "complete", 1, err)))
        return rc;
    /* See room_to_close(): without room the file stays open for output_abort. */
    double need, have;
    if (!room_to_close(o, &need, &have))
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: not enough disk space to finish %s "
                        "(%.3g MB free, %.3g MB needed)", o->final_path, o->temp_path,
                        have * 1e-6, need * 1e-6);
    herr_t closed = H5Fclose(o->file);
    o->file = H5I_INVALID_HID;
    if (closed < 0)
        return h5_fail(o, err, "close", "the file");
    if ((rc = place_file(o, err)))
        return rc;
    o->placed = 1;

    char *xpath = xdmf_path_for(o->final_path);
    if (!xpath)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", o->final_path);
    const xdmf_field fields[] = {
        { "dose_Gy", "/dose/dose_Gy", 8 },
        { "energy_deposit_MeV", "/dose/energy_deposit_MeV", 8 },
    };
    rc = xdmf_write(xpath, base_of(o->final_path), &o->mesh, fields,
                    (int)(sizeof fields / sizeof fields[0]), err);
    free(xpath);
    if (rc)
        return rc;
    output_free(o);
    return SMX_OK;
}

/* On failure o stays valid and the caller ends it with output_abort(), which
 * never removes a file that already reached its final name. */
int output_commit(output *o, smx_error *err)
{
    h5quiet q = quiet_begin();
    int rc = commit_impl(o, err);
    quiet_end(q);
    return rc;
}

void output_abort(output *o, int keep_partial)
{
    if (!o)
        return;
    h5quiet q = quiet_begin();
    int keep = keep_partial && !o->placed;
    /* A commit that failed after marking the file complete (and perhaps closing
     * it) must not leave that mark on what is kept as incomplete. */
    if (keep && o->file < 0)
        o->file = H5Fopen(o->temp_path, H5F_ACC_RDWR, H5P_DEFAULT);
    if (keep && o->file >= 0) {
        smx_error ignored = { 0 };
        attr_int(o, o->file, "/", "complete", 0, &ignored);
    }
    if (o->file >= 0) {
        double need, have;
        if (keep && !room_to_close(o, &need, &have)) {
            smx_warn("%s: not enough disk space to finish the partial results (%.3g MB "
                     "free, %.3g MB needed); nothing kept\n", o->final_path, have * 1e-6,
                     need * 1e-6);
            keep = 0;
        }
        if (keep) {
            H5Fclose(o->file);
            o->file = H5I_INVALID_HID;
        } else {
            discard_file(o);
        }
    }
    if (keep) {
        /* If the rename fails the data stays under the temporary name rather
         * than being deleted: the user asked for it to be kept. */
        char *kept = incomplete_path(o->final_path);
        if (kept && rename(o->temp_path, kept) == 0)
            smx_warn("partial results kept in %s (attribute complete = 0)\n", kept);
        else
            smx_warn("%s: could not rename partial results to %s: %s; they remain in %s\n",
                     o->final_path, kept ? kept : "*.incomplete.h5",
                     kept ? strerror(errno) : "out of memory", o->temp_path);
        free(kept);
    } else if (!o->placed) {
        if (unlink(o->temp_path) != 0 && errno != ENOENT)
            smx_warn("%s: could not remove %s: %s\n", o->final_path, o->temp_path,
                     strerror(errno));
    }
    output_free(o);
    quiet_end(q);
}
