/* Material table reader against broken files: each variant of the shipped
 * table (missing or misnamed datasets, wrong units, non-monotone columns,
 * NaN, wrong file type or version, ...) written with the plain HDF5 API must
 * be refused with a message naming the file and the problem. */
#include "tables_fixture.h"

/* ---- writing (possibly broken) table files with the HDF5 API ---- */

enum variant {
    V_GOOD,
    V_GOOD_VLEN, /* strings as variable-length, as h5py writes them */
    V_MISSING_CSDA,
    V_UNITS,
    V_NO_UNITS,
    V_E_NOT_ASCENDING,
    V_CSDA_NOT_ASCENDING,
    V_NEGATIVE,
    V_NAN,
    V_DETOUR,
    V_LENGTH,
    V_FILETYPE,
    V_NO_FILETYPE,
    V_VERSION,
    V_INTEGER_DATASET,
    V_RATIO, /* each value fine, a neighbour's ratio not (found by fuzzing) */
    V_FLOAT32_CSDA, /* a good table whose CSDA range is stored as float32 */
};

static int put_str(hid_t obj, const char *name, const char *value, int vlen)
{
    hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR), a = -1;
    int ok = t >= 0 && sp >= 0 && H5Tset_size(t, vlen ? H5T_VARIABLE : strlen(value) + 1) >= 0 &&
             (a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
             H5Awrite(a, t, vlen ? (const void *)&value : (const void *)value) >= 0;
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    if (t >= 0)
        H5Tclose(t);
    return ok ? 0 : -1;
}

static int put_num(hid_t obj, const char *name, double v)
{
    hid_t sp = H5Screate(H5S_SCALAR), a = -1;
    int ok = sp >= 0 &&
             (a = H5Acreate2(obj, name, H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT)) >= 0 &&
             H5Awrite(a, H5T_NATIVE_DOUBLE, &v) >= 0;
    if (a >= 0)
        H5Aclose(a);
    if (sp >= 0)
        H5Sclose(sp);
    return ok ? 0 : -1;
}

static int write_variant(const char *path, const tables *src, enum variant v)
{
    int n = src->n, vlen = v == V_GOOD_VLEN, ok = 1;
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0)
        return -1;
    if (v != V_NO_FILETYPE)
        ok &= put_str(f, "filetype", v == V_FILETYPE ? "some other table" : TABLES_FILETYPE,
                      vlen) == 0;
    ok &= put_str(f, "format_version", v == V_VERSION ? "2.0" : "1.0", vlen) == 0;
    ok &= put_str(f, "material", src->material, vlen) == 0;
    ok &= put_str(f, "source", src->source, vlen) == 0;
    ok &= put_str(f, "scattering_model", src->scattering_model, vlen) == 0;
    ok &= put_num(f, "mean_excitation_energy_eV", src->I_eV) == 0;
    ok &= put_num(f, "density_g_cm3", 1.0) == 0;

    double *buf = malloc((size_t)n * sizeof *buf);
    if (!buf)
        ok = 0;
    for (int k = 0; ok && k < TABLES_NDATASETS; k++) {
        const tables_dataset_spec *s = &tables_datasets[k];
        if (v == V_MISSING_CSDA && strcmp(s->name, "csda_range") == 0)
            continue;
        memcpy(buf, tables_column(src, k), (size_t)n * sizeof *buf);
        hsize_t dim = (hsize_t)n;
        if (v == V_E_NOT_ASCENDING && k == 0)
            buf[7] = buf[5];
        if (v == V_CSDA_NOT_ASCENDING && k == 4)
            buf[10] = buf[9];
        if (v == V_NEGATIVE && k == 2)
            buf[3] = -1.0;
        if (v == V_NAN && k == 7)
            buf[5] = NAN;
        if (v == V_DETOUR && k == 6)
            buf[0] = 1.5;
        if (v == V_RATIO && k == 5)
            buf[41] = 3.5539992205006275e-308;
        if (v == V_LENGTH && k == 5)
            dim--;
        int as_int = v == V_INTEGER_DATASET && k == 3;
        int as_f32 = v == V_FLOAT32_CSDA && k == 4;
        hid_t ft = as_int ? H5T_STD_I32LE : as_f32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
        hid_t sp = H5Screate_simple(1, &dim, NULL);
        hid_t d =
            sp >= 0 ? H5Dcreate2(f, s->name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT) : -1;
        ok &= d >= 0 && H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0;
        if (!(v == V_NO_UNITS && k == 6))
            ok &=
                d >= 0 && put_str(d, "units", v == V_UNITS && k == 3 ? "MeV" : s->units, vlen) == 0;
        ok &= d >= 0 && put_str(d, "description", s->description, vlen) == 0;
        if (d >= 0)
            H5Dclose(d);
        if (sp >= 0)
            H5Sclose(sp);
    }
    free(buf);
    if (H5Fclose(f) < 0)
        ok = 0;
    return ok ? 0 : -1;
}

/* ---- the checks ---- */

static void expect_load_error(const char *path, const char *expect)
{
    tables t;
    smx_error err = { 0 };
    memset(&t, 0xab, sizeof t); /* tables_load must not rely on a zeroed struct */
    int rc = tables_load(&t, path, &err);
    CHECK_MSG(rc == SMX_EXIT_INPUT, "%s: rc %d", path, rc);
    CHECK(err.code == SMX_EXIT_INPUT);
    CHECK_STREQ(err.msg, expect);
    /* A failed load leaves nothing to free, and freeing it anyway is harmless. */
    CHECK(t.n == 0 && t.E_MeV == NULL && t.T_rad2_cm2_g == NULL);
    tables_free(&t);
    tables_free(&t);
}

static void check_malformed(const tables *good)
{
    static const struct {
        enum variant v;
        const char *expect; /* %s: the file's path */
    } cases[] = {
        { V_MISSING_CSDA, "%s: dataset 'csda_range' missing" },
        { V_UNITS, "%s: dataset 'stopping_power_total' has units 'MeV'; expected 'MeV cm2/g'" },
        { V_NO_UNITS, "%s: dataset 'detour_factor' attribute 'units' missing" },
        { V_E_NOT_ASCENDING,
          "%s: dataset 'energy_MeV' is not strictly ascending at index 7 (2.25 after 2.5)" },
        { V_CSDA_NOT_ASCENDING,
          "%s: dataset 'csda_range' is not strictly ascending at index 10 (0.01952 after "
          "0.01952)" },
        { V_NEGATIVE, "%s: dataset 'stopping_power_nuclear' has value -1 at index 3; values "
                      "must be finite and > 0" },
        { V_NAN, "%s: dataset 'scattering_power' has value nan at index 5; values must be "
                 "finite and > 0" },
        { V_DETOUR, "%s: dataset 'detour_factor' has value 1.5 at index 0; expected (0, 1.2]" },
        { V_LENGTH, "%s: dataset 'projected_range' has 51 values; 'energy_MeV' has 52" },
        { V_FILETYPE, "%s: filetype is 'some other table'; expected 'smx2d-sim material table'" },
        { V_NO_FILETYPE, "%s: attribute 'filetype' missing; not a smx2d-sim material table file" },
        { V_VERSION, "%s: format_version '2.0' is not supported (this build reads 1.x)" },
        { V_INTEGER_DATASET, "%s: dataset 'stopping_power_total' is not floating point" },
        /* It passed once, and projected-range lookups at 6.4-7.0 g/cm2 were infinite. */
        { V_RATIO, "%s: dataset 'projected_range' goes from 3.554e-308 to 7.035 at index 42, a "
                   "step log-log interpolation cannot represent" },
    };
    char path[256], expect[2048];
    /* The case messages above quote the shipped table's values. */
    CHECK(good->n == 52 && good->E_MeV[5] == 2.25 && good->E_MeV[6] == 2.5);

    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        char name[32];
        snprintf(name, sizeof name, "bad%02zu.h5", c);
        tmp_path(path, sizeof path, name);
        CHECK_MSG(write_variant(path, good, cases[c].v) == 0, "cannot write %s", path);
        snprintf(expect, sizeof expect, cases[c].expect, path);
        expect_load_error(path, expect);
        unlink(path);
    }

    /* The test's writer itself is sound: unmodified, both string flavours load. */
    for (int vl = 0; vl < 2; vl++) {
        tmp_path(path, sizeof path, "good.h5");
        CHECK(write_variant(path, good, vl ? V_GOOD_VLEN : V_GOOD) == 0);
        tables t;
        smx_error err = { 0 };
        CHECK_MSG(tables_load(&t, path, &err) == 0, "%s", err.msg);
        if (err.code == 0) {
            CHECK(t.n == good->n);
            CHECK(memcmp(t.csda_g_cm2, good->csda_g_cm2, (size_t)t.n * sizeof(double)) == 0);
            CHECK_STREQ(t.source, good->source);
            CHECK_STREQ(t.material, good->material);
        }
        tables_free(&t);
        unlink(path);
    }

    /* CSDA ranges rounded to float32: the range of the top energy computed
     * one ulp past the last tabulated range, and the inverse lookup there was
     * NaN (found by fuzzing). Every table energy now maps to its stored range
     * and back exactly, and energies just below the top stay inside. */
    tmp_path(path, sizeof path, "float32.h5");
    CHECK(write_variant(path, good, V_FLOAT32_CSDA) == 0);
    {
        tables t;
        smx_error err = { 0 };
        CHECK_MSG(tables_load(&t, path, &err) == 0, "%s", err.msg);
        for (int i = 0; err.code == 0 && i < t.n; i++) {
            CHECK(tables_csda_range(&t, t.E_MeV[i]) == t.csda_g_cm2[i]);
            CHECK(tables_energy_at_range(&t, t.csda_g_cm2[i]) == t.E_MeV[i]);
            double below = nextafter(t.E_MeV[i], 0.0);
            if (i > 0)
                CHECK_MSG(isfinite(tables_energy_at_range(&t, tables_csda_range(&t, below))),
                          "E just below %g MeV", t.E_MeV[i]);
        }
        tables_free(&t);
    }
    unlink(path);

    tmp_path(path, sizeof path, "text.h5");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("energy_MeV,csda_range\n1,0.0025\n", f);
        fclose(f);
    }
    snprintf(expect, sizeof expect, "%s: not an HDF5 file (or unreadable)", path);
    expect_load_error(path, expect);
    unlink(path);

    /* A mutation of the shipped table (found by fuzzing) on which HDF5 1.10.8
     * itself dies with SIGSEGV (in a memcpy). The load is an input error naming
     * the file, not a crash of the caller: tables_load reads it in a child
     * (under AddressSanitizer the child reports and exits 1 instead). */
    {
        const char *crash = "tests/tables_cases/hdf5_crash.h5";
        tables t;
        smx_error err = { 0 };
        char want[256], want_asan[256];
        snprintf(want, sizeof want,
                 "%s: the HDF5 library crashed reading it (Segmentation "
                 "fault); the file is corrupt",
                 crash);
        snprintf(want_asan, sizeof want_asan,
                 "%s: the HDF5 library failed reading it (exit "
                 "status 1); the file is corrupt",
                 crash);
        CHECK(tables_load(&t, crash, &err) == SMX_EXIT_INPUT);
        CHECK_MSG(!strcmp(err.msg, want) || !strcmp(err.msg, want_asan), "%s", err.msg);
        tables_free(&t);
    }

    tmp_path(path, sizeof path, "no-such-file.h5");
    snprintf(expect, sizeof expect, "%s: cannot open: No such file or directory", path);
    expect_load_error(path, expect);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (tables_fixture_begin())
        return 1;
    tables t;
    smx_error err = { 0 };
    int rc = tables_load(&t, H5_PATH, &err);
    CHECK_MSG(rc == 0, "%s", err.msg);
    if (rc == 0)
        check_malformed(&t);
    tables_free(&t);
    tables_fixture_end();
    return check_report(argv[0]);
}
