/* libFuzzer target: the material table reader's validation.
 *
 * The input describes a table file: for each root attribute and each dataset
 * of the layout (physics/tables.h) whether it is there, of which type and
 * shape, with which units, and changes to the shipped table's values (NaN,
 * infinities, zero, negatives, swapped or repeated points, a shorter column).
 * Empty input describes the shipped table itself. The target writes that file
 * with HDF5 into memory, takes its bytes and
 * loads them with tables_load_image(), the reader a run uses on the file's
 * bytes. A table that passes must be one the interpolation can use: every
 * lookup inside its energy range is finite.
 *
 * Raw bytes are not fuzzed as an HDF5 file in process: HDF5 1.10 itself
 * crashes within a few hundred mutations of a valid file (docs/dev/testing.md);
 * tables_load() checks each file in a child process for that reason. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "physics/tables.h"

static tables shipped; /* the base of every described table: data/pstar_water.h5 */

/* ---- reading the description ---- */

typedef struct input {
    const uint8_t *p;
    size_t n;
} input;

static unsigned take(input *in)
{
    if (!in->n)
        return 0;
    in->n--;
    return *in->p++;
}

static double take_double(input *in)
{
    uint8_t b[8] = { 0 };
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)take(in);
    double v;
    memcpy(&v, b, sizeof v);
    return v;
}

/* Up to 255 bytes of text, NUL-terminated in buf (which may hold NULs too). */
static size_t take_text(input *in, char *buf)
{
    size_t len = take(in);
    for (size_t i = 0; i < len; i++)
        buf[i] = (char)take(in);
    buf[len] = '\0';
    return len;
}

/* ---- writing one file with HDF5 ---- */

enum attr_form { A_RIGHT, A_ABSENT, A_FIXED, A_VLEN, A_NUMBER, A_INTEGER, A_ARRAY, A_FORMS };

/* A string attribute `name` with the right value, or another form of it. */
static void put_attr(hid_t obj, const char *name, const char *right, input *in)
{
    unsigned form = take(in) % A_FORMS;
    if (form == A_ABSENT)
        return;
    char text[256];
    const char *value = right;
    if (form != A_RIGHT && form != A_NUMBER && form != A_INTEGER) {
        take_text(in, text);
        value = text;
    }
    hsize_t two = 2;
    hid_t sp = form == A_ARRAY ? H5Screate_simple(1, &two, NULL) : H5Screate(H5S_SCALAR);
    hid_t t = H5I_INVALID_HID, a = H5I_INVALID_HID;
    if (form == A_NUMBER || form == A_INTEGER) {
        double v = take_double(in);
        int iv = (int)take(in) - 128;
        t = H5Tcopy(form == A_NUMBER ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT);
        a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
        if (a >= 0)
            H5Awrite(a, t, form == A_NUMBER ? (const void *)&v : (const void *)&iv);
    } else {
        int vlen = form == A_VLEN || (form == A_ARRAY && (take(in) & 1));
        t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, vlen ? H5T_VARIABLE : strlen(value) + 1);
        if (take(in) & 1)
            H5Tset_cset(t, H5T_CSET_UTF8);
        if (!vlen && (take(in) & 1))
            H5Tset_strpad(t, H5T_STR_NULLPAD);
        a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
        /* Up to two values of the type's size each, one after the other. */
        const char *two_values[2] = { value, value };
        size_t w = strlen(value) + 1;
        char fixed[2 * 2048];
        memcpy(fixed, value, w);
        memcpy(fixed + w, value, w);
        if (a >= 0)
            H5Awrite(a, t, vlen ? (const void *)two_values : (const void *)fixed);
    }
    if (a >= 0)
        H5Aclose(a);
    if (t >= 0)
        H5Tclose(t);
    if (sp >= 0)
        H5Sclose(sp);
}

enum ds_form {
    D_RIGHT,
    D_ABSENT,
    D_FLOAT32,
    D_INT32,
    D_STRING,
    D_TWO_D,
    D_GROUP,
    D_SCALAR,
    D_FORMS
};

/* Column k of the shipped table, changed as the input says, as dataset k. */
static void put_dataset(hid_t file, int k, input *in)
{
    const tables_dataset_spec *s = &tables_datasets[k];
    unsigned form = take(in) % D_FORMS;
    /* Most columns come right, so that the checks after them are reached. */
    if (take(in) % 4 != 3)
        form = D_RIGHT;
    if (form == D_ABSENT)
        return;
    if (form == D_GROUP) {
        hid_t g = H5Gcreate2(file, s->name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (g >= 0)
            H5Gclose(g);
        return;
    }
    int n = shipped.n;
    double v[512];
    memcpy(v, tables_column(&shipped, k), (size_t)n * sizeof *v);
    /* A shorter column, then up to 3 changed points. */
    if (take(in) % 8 == 7)
        n = (int)(take(in) % (unsigned)(n + 1));
    for (unsigned c = take(in) % 4; c > 0 && n > 0; c--) {
        int i = (int)(take(in) % (unsigned)n);
        switch (take(in) % 8) {
        case 0:
            v[i] = NAN;
            break;
        case 1:
            v[i] = INFINITY;
            break;
        case 2:
            v[i] = 0.0;
            break;
        case 3:
            v[i] = -v[i];
            break;
        case 4:
            v[i] = i > 0 ? v[i - 1] : v[i];
            break;
        case 5:
            v[i] = i + 1 < n ? v[i + 1] : v[i];
            break;
        case 6:
            v[i] *= 1.0 + (double)(take(in) % 64) / 16.0;
            break;
        default:
            v[i] = take_double(in);
            break;
        }
    }
    hsize_t dims[2] = { (hsize_t)n, 1 };
    hid_t sp = form == D_SCALAR ? H5Screate(H5S_SCALAR)
                                : H5Screate_simple(form == D_TWO_D ? 2 : 1, dims, NULL);
    hid_t ft = form == D_FLOAT32  ? H5Tcopy(H5T_IEEE_F32LE)
               : form == D_INT32  ? H5Tcopy(H5T_STD_I32LE)
               : form == D_STRING ? H5Tcopy(H5T_C_S1)
                                  : H5Tcopy(take(in) & 1 ? H5T_IEEE_F64BE : H5T_IEEE_F64LE);
    if (form == D_STRING)
        H5Tset_size(ft, 8);
    hid_t d = sp >= 0 && ft >= 0
                  ? H5Dcreate2(file, s->name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                  : H5I_INVALID_HID;
    if (d >= 0 && form != D_STRING)
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
    if (d >= 0) {
        put_attr(d, "units", s->units, in);
        H5Dclose(d);
    }
    if (ft >= 0)
        H5Tclose(ft);
    if (sp >= 0)
        H5Sclose(sp);
}

/* The described file's bytes (malloc'd), or NULL where HDF5 refused it. */
static void *write_image(input *in, size_t *len)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_core(fapl, 1 << 16, 0);
    hid_t f = H5Fcreate("fuzz_tables image", H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    if (f < 0)
        return NULL;
    put_attr(f, "filetype", TABLES_FILETYPE, in);
    put_attr(f, "format_version", TABLES_FORMAT_VERSION, in);
    put_attr(f, "material", shipped.material, in);
    put_attr(f, "source", shipped.source, in);
    put_attr(f, "scattering_model", shipped.scattering_model, in);
    /* The excitation energy: right, or a number from the input. */
    {
        double I = take(in) % 4 == 3 ? take_double(in) : shipped.I_eV;
        hid_t sp = H5Screate(H5S_SCALAR);
        hid_t a = H5Acreate2(f, "mean_excitation_energy_eV", H5T_IEEE_F64LE, sp, H5P_DEFAULT,
                             H5P_DEFAULT);
        if (a >= 0) {
            H5Awrite(a, H5T_NATIVE_DOUBLE, &I);
            H5Aclose(a);
        }
        H5Sclose(sp);
    }
    for (int k = 0; k < TABLES_NDATASETS; k++)
        put_dataset(f, k, in);
    void *bytes = NULL;
    H5Fflush(f, H5F_SCOPE_GLOBAL);
    ssize_t size = H5Fget_file_image(f, NULL, 0);
    if (size > 0 && (bytes = malloc((size_t)size)) &&
        H5Fget_file_image(f, bytes, (size_t)size) != size) {
        free(bytes);
        bytes = NULL;
    }
    H5Fclose(f);
    *len = size > 0 ? (size_t)size : 0;
    return bytes;
}

/* ---- the checks ---- */

static void check_usable(const tables *t)
{
    const double lo = t->E_MeV[0], hi = t->E_MeV[t->n - 1];
    for (int i = 0; i <= 16; i++) {
        double E = lo + (hi - lo) * i / 16.0;
        double R = tables_csda_range(t, E);
        double S = tables_stopping_power(t, E);
        double T = tables_scattering_power(t, E);
        double P = tables_projected_range(t, E);
        double back = tables_energy_at_range(t, R);
        if (!(isfinite(R) && isfinite(S) && isfinite(T) && isfinite(P) && isfinite(back))) {
            fprintf(stderr,
                    "fuzz_tables: a table that passed gives a non-finite lookup at "
                    "E = %.17g MeV: R %g, S %g, T %g, projected %g, E(R) %g\n",
                    E, R, S, T, P, back);
            abort();
        }
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    smx_error err = { 0 };
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    const char *path = getenv("SMX_FUZZ_TABLE");
    if (tables_load(&shipped, path ? path : SMX_SOURCE_DATA_DIR "/pstar_water.h5", &err) ||
        shipped.n > 512) {
        fprintf(stderr, "fuzz_tables: the shipped table: %s\n", err.msg);
        exit(1);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = { data, size };
    size_t len = 0;
    /* SMX_FUZZ_RAW=1: the input is the file itself (finds HDF5's own crashes;
     * not for CI, see above). */
    static int raw = -1;
    if (raw < 0)
        raw = getenv("SMX_FUZZ_RAW") != NULL;
    void *bytes = raw ? (len = size, size ? malloc(size) : NULL) : write_image(&in, &len);
    if (raw && bytes)
        memcpy(bytes, data, size);
    /* SMX_FUZZ_DUMP=FILE writes the table file an input describes (to turn a
     * finding into a test case). */
    const char *dump = getenv("SMX_FUZZ_DUMP");
    FILE *df = dump && bytes ? fopen(dump, "wb") : NULL;
    if (df) {
        fwrite(bytes, 1, len, df);
        fclose(df);
    }
    if (!bytes)
        return 0;
    tables t;
    smx_error err = { 0 };
    int rc = tables_load_image(&t, bytes, len, "fuzz.h5", &err);
    if (rc == 0) {
        if (err.code || err.msg[0])
            abort();
        check_usable(&t);
        tables_free(&t);
    } else if (!err.msg[0] || err.code != rc) {
        fprintf(stderr, "fuzz_tables: error %d without its message (code %d)\n", rc, err.code);
        abort();
    }
    free(bytes);
    return 0;
}
