/* HDF5 calls of the result writer, each failure reported as one line naming
 * the object. Every dataset goes through out_put_dataset(), which also writes
 * its units and description, so no object can be written without them. */
#include <stdlib.h>
#include <string.h>

#include <hdf5_hl.h>

#include "io/h5_deflate.h"
#include "io/output_internal.h"

/* The previous handler is restored on the way out because tables.c and the
 * tests share the library state. */
h5quiet out_quiet_begin(void)
{
    h5quiet q = { NULL, NULL };
    H5Eget_auto2(H5E_DEFAULT, &q.func, &q.data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    return q;
}

void out_quiet_end(h5quiet q)
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

int out_h5_fail(const output *o, smx_error *err, const char *action, const char *object)
{
    char cause[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_cause, cause);
    H5Eclear2(H5E_DEFAULT);
    return smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot %s %s (in %s)%s%s", o->final_path, action,
                    object, o->temp_path, cause[0] ? ": " : "", cause);
}

void out_close_id(hid_t *id, herr_t (*closer)(hid_t))
{
    if (*id >= 0)
        closer(*id);
    *id = H5I_INVALID_HID;
}

/* Closing a dataset writes out whatever HDF5 still holds for it, so on the
 * success path its close is an I/O operation like any other and is checked. */
int out_close_dataset(output *o, hid_t *ds, const char *object, int rc, smx_error *err)
{
    if (*ds >= 0 && H5Dclose(*ds) < 0 && rc == SMX_OK)
        rc = out_h5_fail(o, err, "write", object);
    *ds = H5I_INVALID_HID;
    return rc;
}

/* An attribute's value: its type in the file, its type in memory and where it is. */
typedef struct attr_value {
    hid_t ftype, mtype;
    const void *value;
} attr_value;

/* Replaces an existing attribute: `complete` and the table hash are written
 * twice, and an attribute cannot change its type in place. */
static int put_attr(output *o, hid_t loc, const char *where, const char *name, attr_value v,
                    smx_error *err)
{
    const hid_t ftype = v.ftype, mtype = v.mtype;
    const void *value = v.value;
    char object[512];
    snprintf(object, sizeof object, "attribute '%s' of %s", name, where);
    hid_t space = H5I_INVALID_HID, attr = H5I_INVALID_HID;
    int rc = SMX_OK;
    htri_t exists = H5Aexists(loc, name);
    if (exists < 0 || (exists > 0 && H5Adelete(loc, name) < 0)) {
        rc = out_h5_fail(o, err, "replace", object);
        goto done;
    }
    if ((space = H5Screate(H5S_SCALAR)) < 0 ||
        (attr = H5Acreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT)) < 0 ||
        H5Awrite(attr, mtype, value) < 0)
        rc = out_h5_fail(o, err, "write", object);
done:
    out_close_id(&attr, H5Aclose);
    out_close_id(&space, H5Sclose);
    return rc;
}

/* Datasets of text: fixed-length, NUL-terminated UTF-8, readable by h5dump,
 * h5py (as bytes; .asstr() gives str) and plain C without variable-length
 * memory management. */
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

/* Attributes: variable-length UTF-8, which h5py (and xarray through it)
 * returns as str, where a fixed-length string comes back as bytes. */
static hid_t vlen_string_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0)
        return t;
    if (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0) {
        H5Tclose(t);
        return H5I_INVALID_HID;
    }
    return t;
}

int out_attr_str(output *o, hid_t loc, const char *where, const char *name, const char *value,
                 smx_error *err)
{
    if (!value)
        value = "";
    hid_t t = vlen_string_type();
    if (t < 0) {
        char object[512];
        snprintf(object, sizeof object, "attribute '%s' of %s", name, where);
        return out_h5_fail(o, err, "make the string type of", object);
    }
    int rc = put_attr(o, loc, where, name, (attr_value){ t, t, &value }, err);
    H5Tclose(t);
    return rc;
}

int out_attr_int(output *o, hid_t loc, const char *where, const char *name, int value,
                 smx_error *err)
{
    return put_attr(o, loc, where, name, (attr_value){ H5T_STD_I32LE, H5T_NATIVE_INT, &value },
                    err);
}

int out_attr_f64(output *o, hid_t loc, const char *where, const char *name, double value,
                 smx_error *err)
{
    return put_attr(o, loc, where, name, (attr_value){ H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value },
                    err);
}

int out_open_group(output *o, const char *path, hid_t *g, smx_error *err)
{
    htri_t exists = H5Lexists(o->file, path, H5P_DEFAULT);
    if (exists > 0)
        *g = H5Gopen2(o->file, path, H5P_DEFAULT);
    else if (exists == 0)
        *g = H5Gcreate2(o->file, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    else
        *g = H5I_INVALID_HID;
    if (*g < 0)
        return out_h5_fail(o, err, "create group", path);
    return SMX_OK;
}

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
/* Attaches the /axes datasets named in `axes` (comma-separated, one per
 * dimension) as the dimension scales of ds, so that xarray, HDFView and
 * Panoply see the coordinates; other names (step, channel) have no scale. */
static int attach_scales(output *o, hid_t ds, const char *axes, const char *object, smx_error *err)
{
    if (H5Lexists(o->file, "/axes", H5P_DEFAULT) <= 0)
        return 0;
    const char *c = axes;
    for (unsigned dim = 0; *c; dim++) {
        const char *e = strchr(c, ',');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        char path[128];
        if (n + 7 < sizeof path) {
            snprintf(path, sizeof path, "/axes/%.*s", (int)n, c);
            if (H5Lexists(o->file, path, H5P_DEFAULT) > 0) {
                hid_t scale = H5Dopen2(o->file, path, H5P_DEFAULT);
                herr_t ok = scale < 0 ? -1 : H5DSattach_scale(ds, scale, dim);
                if (scale >= 0)
                    H5Dclose(scale);
                if (ok < 0)
                    return out_h5_fail(o, err, "attach its axis as a dimension scale to", object);
            }
        }
        c = e ? e + 1 : c + n;
    }
    return 0;
}

int out_put_dataset(output *o, const dset *d, hid_t *keep, smx_error *err)
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
    case V_F64:
        ftype = H5T_IEEE_F64LE;
        mtype = H5T_NATIVE_DOUBLE;
        break;
    case V_F32:
        ftype = H5T_IEEE_F32LE;
        mtype = H5T_NATIVE_FLOAT;
        break;
    case V_I32:
        ftype = H5T_STD_I32LE;
        mtype = H5T_NATIVE_INT;
        break;
    case V_I64:
        ftype = H5T_STD_I64LE;
        mtype = H5T_NATIVE_INT64;
        break;
    case V_U16:
        ftype = H5T_STD_U16LE;
        mtype = H5T_NATIVE_UINT16;
        break;
    case V_U8:
        ftype = H5T_STD_U8LE;
        mtype = H5T_NATIVE_UINT8;
        break;
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
            rc = smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory writing %s", o->final_path,
                          object);
            goto done;
        }
        str = string_type(w);
        buf = packed;
        break;
    }
    }
    if (d->kind == V_TEXT || d->kind == V_TEXTS) {
        if (str < 0) {
            rc = out_h5_fail(o, err, "make the string type of", object);
            goto done;
        }
        ftype = mtype = str;
    }

    htri_t exists = H5Lexists(d->parent, d->name, H5P_DEFAULT);
    if (exists < 0 || (exists > 0 && H5Ldelete(d->parent, d->name, H5P_DEFAULT) < 0)) {
        rc = out_h5_fail(o, err, "replace", object);
        goto done;
    }
    space = d->rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(d->rank, d->dims, NULL);
    if (space < 0 ||
        (ds = H5Dcreate2(d->parent, d->name, ftype, space, H5P_DEFAULT,
                         d->dcpl ? d->dcpl : H5P_DEFAULT, d->dapl ? d->dapl : H5P_DEFAULT)) < 0) {
        rc = out_h5_fail(o, err, "create", object);
        goto done;
    }
    /* Zero-length datasets (a run of 0 steps) exist but have nothing to write. */
    if (count > 0 && !d->by_caller && d->deflate_chunk > 0) {
        const char *what = "";
        const h5_deflate_job job = { buf, count, H5Tget_size(mtype), d->deflate_chunk,
                                     d->deflate_level };
        if (h5_write_deflated(ds, &job, &what)) {
            rc = out_h5_fail(o, err, what, object);
            goto done;
        }
    } else if (count > 0 && !d->by_caller &&
               H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
        rc = out_h5_fail(o, err, "write", object);
        goto done;
    }
    rc = out_attr_str(o, ds, object, "units", d->units, err);
    if (!rc)
        rc = out_attr_str(o, ds, object, "description", d->description, err);
    if (!rc && d->axes)
        rc = out_attr_str(o, ds, object, "axes", d->axes, err);
    if (!rc && d->axes)
        rc = attach_scales(o, ds, d->axes, object, err);
    if (!rc && keep) {
        *keep = ds;
        ds = H5I_INVALID_HID;
    }
done:
    rc = out_close_dataset(o, &ds, object, rc, err);
    out_close_id(&space, H5Sclose);
    out_close_id(&str, H5Tclose);
    free(packed);
    return rc;
}

int out_put_all(output *o, hid_t grp, const char *path, const dset *list, size_t n, smx_error *err)
{
    int rc = 0;
    for (size_t k = 0; !rc && k < n; k++) {
        dset d = list[k];
        d.parent = grp;
        d.parent_path = path;
        rc = out_put_dataset(o, &d, NULL, err);
    }
    return rc;
}
