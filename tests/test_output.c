/* The result writer's datasets end to end: write a small run, read every
 * object back with the plain HDF5 API and compare bit for bit; the sidecar;
 * provenance; the tally and run_result arithmetic. The file's life (overwrite,
 * abort, keep-partial, disk full): test_output_file.c. */
#include <math.h>
#include <hdf5_hl.h>

#include "output_fixture.h"
#include "base/sha256.h"
#include "report/analysis.h"

static char *read_text_ds(hid_t file, const char *path)
{
    if (H5Lexists(file, path, H5P_DEFAULT) <= 0)
        return NULL;
    hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    size_t n = H5Tget_size(t);
    char *s = calloc(n + 1, 1);
    H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s);
    H5Tclose(t);
    H5Dclose(d);
    return s;
}

static void test_tally(void)
{
    step_balance b;
    memset(&b, 0, sizeof b);
    b.weight_in = 10.0;
    b.weight_out = 7.0;
    b.t.weight[CH_THETA_BOUNDARY] = 1.0;
    b.t.weight[CH_THETA_CUTOFF] = 0.5;
    b.t.weight[CH_ENERGY_STOPPED] = 1.0;
    b.t.weight[CH_SPATIAL_LEAK] = 0.25; /* 0.25 of weight unaccounted for */
    b.energy_in = 1000.0;
    b.energy_out = 700.0;
    b.t.deposited = 200.0; /* includes the 30 MeV of the stopped particles */
    b.t.energy[CH_THETA_BOUNDARY] = 40.0;
    b.t.energy[CH_THETA_CUTOFF] = 20.0;
    b.t.energy[CH_ENERGY_STOPPED] = 30.0;
    b.t.energy[CH_SPATIAL_LEAK] = 30.0; /* 1000 - 700 - 200 - 90 = 10 missing */
    tally_close_balance(&b, 10.0, 1000.0);
    /* Exact binary fractions: the arithmetic must reproduce them exactly. */
    CHECK(b.weight_rel_err == 0.025);
    CHECK(b.energy_rel_err == 0.01);

    b.t.energy[CH_SPATIAL_LEAK] = 40.0; /* now balanced: stopped counted once only */
    b.t.weight[CH_SPATIAL_LEAK] = 0.5;
    tally_close_balance(&b, 10.0, 1000.0);
    CHECK(b.weight_rel_err == 0.0);
    CHECK(b.energy_rel_err == 0.0);

    b.t.energy[CH_SPATIAL_LEAK] = 50.0; /* over-counting shows as error too */
    tally_close_balance(&b, 10.0, 1000.0);
    CHECK(b.energy_rel_err == 0.01);

    step_balance z;
    memset(&z, 0, sizeof z);
    tally_close_balance(&z, 0.0, 0.0);
    CHECK(z.weight_rel_err == 0.0 && z.energy_rel_err == 0.0);
    /* A vanishing remainder is measured against SMX_BALANCE_FLOOR of the
     * source's weight: 1e-7 lost of 1e-6 in flight, of 1.0 at the start. */
    z.weight_in = 1e-6;
    z.weight_out = 0.9e-6;
    tally_close_balance(&z, 1.0, 0.0);
    CHECK(fabs(z.weight_rel_err - 0.1) < 1e-12);
    z.weight_in = 1e-9;
    z.weight_out = 0.9e-9;
    tally_close_balance(&z, 1.0, 0.0);
    CHECK(fabs(z.weight_rel_err - 1e-4) < 1e-12);
    /* Such a step counts in the deep tail's figures, not in the run's
     * maxima (run_result_in_tail). */
    run_result tr;
    run_result_init(&tr);
    tr.initial_weight = 1.0;
    CHECK(run_result_push(&tr, &z, 1.0, 0.0) == SMX_OK);
    CHECK(tr.tail_steps == 1 && tr.max_weight_rel_err == 0.0 &&
          fabs(tr.tail_max_weight_rel_err - 1e-4) < 1e-12);
    z.weight_in = 0.5;
    z.weight_out = 0.4;
    tally_close_balance(&z, 1.0, 0.0);
    CHECK(run_result_push(&tr, &z, 1.0, 0.0) == SMX_OK);
    CHECK(tr.tail_steps == 1 && fabs(tr.max_weight_rel_err - 0.2) < 1e-12);
    run_result_free(&tr);

    step_tally s, t;
    tally_clear(&s);
    tally_clear(&t);
    t.weight[2] = 1.5;
    t.energy[3] = 2.0;
    t.deposited = 4.0;
    tally_add(&s, &t);
    tally_add(&s, &t);
    CHECK(s.weight[2] == 3.0 && s.energy[3] == 4.0 && s.deposited == 8.0 && s.weight[0] == 0);
    CHECK_STREQ(tally_channel_names[CH_ENERGY_STOPPED], "energy_stopped");
}

static void test_run_result(void)
{
    run_result r;
    run_result_init(&r);
    step_balance b;
    memset(&b, 0, sizeof b);
    double sum = 0;
    for (int i = 0; i < 1000; i++) {
        b.t.deposited = i;
        b.t.weight[1] = 0.5;
        b.weight_rel_err = i == 500 ? 1e-3 : 1e-9;
        sum += i;
        CHECK(run_result_push(&r, &b, i * 0.5, i * 0.25) == SMX_OK);
    }
    CHECK(r.n_steps == 1000 && r.capacity >= 1000);
    CHECK(r.steps[999].t.deposited == 999.0 && r.step_ms[10] == 5.0 &&
          r.front_depth_mm[400] == 100.0);
    CHECK(r.cumulative.deposited == sum && r.cumulative.weight[1] == 500.0);
    CHECK(r.max_weight_rel_err == 1e-3);
    for (int i = 0; i < RUN_MAX_PHASES + 2; i++) {
        char *names[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n" };
        _Static_assert(sizeof names / sizeof names[0] == RUN_MAX_PHASES + 2, "a name per phase");
        run_result_phase(&r, names[i], 1.0);
    }
    run_result_phase(&r, "a", 1.0);
    CHECK(r.n_phases == RUN_MAX_PHASES && r.phase_s[0] == 2.0);
    CHECK_STREQ(r.phase_name[RUN_MAX_PHASES - 1], "other");
    CHECK(r.phase_s[RUN_MAX_PHASES - 1] == 3.0);
    run_result_free(&r);
    CHECK(r.n_steps == 0 && r.steps == NULL);
}

static void test_provenance(void)
{
    char *argv[] = { "smx2d-sim", "my plan.yaml", "--set", "beam.energy_MeV=150", "it's", "" };
    provenance pv;
    provenance_init(&pv, 6, argv);
    CHECK_STREQ(pv.argv, "smx2d-sim 'my plan.yaml' --set beam.energy_MeV=150 'it'\\''s' ''");
    CHECK(strlen(pv.utc_start) == 20 && pv.utc_start[19] == 'Z' && pv.utc_start[10] == 'T');
    CHECK(pv.utc_end[0] == '\0');
    provenance_finish(&pv);
    CHECK(strlen(pv.utc_end) == 20);
    CHECK(pv.hdf5_version[0] >= '1' && pv.hdf5_version[0] <= '9');
    CHECK(pv.plan_sha256[0] == '\0' && pv.table_sha256[0] == '\0');

    /* A command line longer than the field is cut at an argument boundary. */
    static char big[600];
    memset(big, 'x', sizeof big - 1);
    char *many[10];
    many[0] = "smx2d-sim";
    for (int i = 1; i < 10; i++)
        many[i] = big;
    provenance_init(&pv, 10, many);
    size_t n = strlen(pv.argv);
    CHECK(n < sizeof pv.argv && n > 4 && strcmp(pv.argv + n - 4, " ...") == 0);
}

static void check_axes(hid_t f, const grid *g)
{
    const double to_deg = 180.0 / 3.14159265358979323846;
    double th_c[5], th_e[6];
    for (int i = 0; i < 5; i++)
        th_c[i] = g->theta.centres[i] * to_deg;
    for (int i = 0; i < 6; i++)
        th_e[i] = g->theta.edges[i] * to_deg;
    CHECK_DS(f, "/axes/energy_centres_MeV", g->E.centres, 3, DIMS(3));
    CHECK_DS(f, "/axes/energy_edges_MeV", g->E.edges, 4, DIMS(4));
    CHECK_DS(f, "/axes/theta_centres_deg", th_c, 5, DIMS(5));
    CHECK_DS(f, "/axes/theta_edges_deg", th_e, 6, DIMS(6));
    CHECK_DS(f, "/axes/x_centres_mm", g->x.centres, 6, DIMS(6));
    CHECK_DS(f, "/axes/x_edges_mm", g->x.edges, 7, DIMS(7));
    CHECK_DS(f, "/axes/z_centres_mm", g->z.centres, 7, DIMS(7));
    CHECK_DS(f, "/axes/z_edges_mm", g->z.edges, 8, DIMS(8));
    /* An independent look at one value: 1.4175 rad (first centre) in degrees. */
    int rank;
    hsize_t d[4];
    double *c = read_ds(f, "/axes/theta_centres_deg", 0, &rank, d);
    CHECK_REL(c[0], 81.21676746, 1e-9);
    free(c);
}

static void check_root(hid_t f, const fixture *fx)
{
    const char *strs[] = {
        "filetype",
        "format_version",
        "code_version",
        "git_describe",
        "compiler",
        "cflags",
        "nvcc_version",
        "nvcc_flags",
        "cuda_runtime_version",
        "cuda_driver_version",
        "cufft_version",
        "hdf5_version",
        "libyaml_version",
        "backend",
        "device_name",
        "compute_capability",
        "hostname",
        "argv",
        "utc_start",
        "utc_end",
        "plan_file",
        "plan_sha256",
        "table_file",
        "table_sha256",
        "kernel_variants",
        "stop_reason",
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        char *s = read_str_attr(f, strs[i]);
        CHECK_MSG(s && s[0], "root attribute %s missing or empty", strs[i]);
        free(s);
    }
    char *s;
#define ATTR_IS(name, want)                 \
    s = read_str_attr(f, name);             \
    CHECK_STREQ(s ? s : "(missing)", want); \
    free(s)
    ATTR_IS("filetype", OUTPUT_FILETYPE);
    ATTR_IS("format_version", OUTPUT_FORMAT_VERSION);
    ATTR_IS("argv", "smx2d-sim 'config/test plan.yaml' --overwrite");
    ATTR_IS("plan_file", "config/test plan.yaml");
    ATTR_IS("table_file", "data/pstar_water.h5");
    ATTR_IS("table_sha256", fx->t.sha256);
    ATTR_IS("plan_sha256", fx->pv.plan_sha256);
    ATTR_IS("stop_reason", "weight_below");
    ATTR_IS("backend", "cpu");
    ATTR_IS("device_name", "Test CPU (4 threads)");
    ATTR_IS("kernel_variants", "energy=gather stream=gather");
    ATTR_IS("hdf5_version", fx->pv.hdf5_version);
    ATTR_IS("libyaml_version", fx->pv.yaml_version);
    /* provenance_finish records the cuFFT this process loaded: none, since no
     * CUDA backend ran here (tests/test_cufft_loader.c checks a loaded one). */
    ATTR_IS("cufft_version", fx->pv.cufft_version);
    CHECK_STREQ(fx->pv.cufft_version, "none");
    ATTR_IS("utc_start", fx->pv.utc_start);
    ATTR_IS("utc_end", fx->pv.utc_end);
#undef ATTR_IS
    CHECK(read_num_attr(f, "complete") == 1.0);
    CHECK(read_num_attr(f, "n_steps") == fx->r.n_steps);
    CHECK(read_num_attr(f, "conservation_violations") == 2.0);
    CHECK(read_num_attr(f, "conservation_max_weight_rel_err") == fx->r.max_weight_rel_err);
    CHECK(read_num_attr(f, "conservation_max_energy_rel_err") == fx->r.max_energy_rel_err);
    CHECK(fx->r.max_energy_rel_err > 0);
}

static void check_dose(hid_t f, const fixture *fx)
{
    const grid *g = &fx->g;
    size_t n = (size_t)g->slice;
    CHECK_DS(f, "/dose/energy_deposit_MeV", fx->r.dose_MeV, n, DIMS(7, 6));
    int rank;
    hsize_t d[4];
    double *gy = read_ds(f, "/dose/dose_Gy", 0, &rank, d);
    CHECK(gy && rank == 2 && d[0] == 7 && d[1] == 6);
    /* Recomputed in SI units step by step (not the writer's folded factor), so
     * only rounding separates the two: a few ulp. */
    double vol_m3 = (0.5e-3) * (1.25e-3) * (2.0e-3);
    double mass = 1030.0 * vol_m3;
    double *gy1 = read_ds(f, "/dose/dose_Gy_per_proton", 0, &rank, d);
    CHECK(gy1 && rank == 2 && d[0] == 7 && d[1] == 6);
    /* dose_Gy is for the plan's 2.5e9 protons (beam.weight), the other per proton. */
    for (size_t i = 0; gy && gy1 && i < n; i++) {
        CHECK_REL(gy1[i], fx->r.dose_MeV[i] * 1.602176634e-13 / mass, 1e-13);
        CHECK_REL(gy[i], 2.5e9 * fx->r.dose_MeV[i] * 1.602176634e-13 / mass, 1e-13);
    }
    free(gy);
    free(gy1);
    hid_t ds = H5Dopen2(f, "/dose/dose_Gy", H5P_DEFAULT);
    CHECK(read_num_attr(ds, "slab_thickness_mm") == 2.0);
    CHECK(read_num_attr(ds, "density_g_cm3") == 1.03);
    CHECK(read_num_attr(ds, "protons") == 2.5e9);
    /* The axes are attached as dimension scales (what xarray and HDFView read). */
    hid_t sz = H5Dopen2(f, "/axes/z_centres_mm", H5P_DEFAULT),
          sx = H5Dopen2(f, "/axes/x_centres_mm", H5P_DEFAULT);
    CHECK(H5DSis_scale(sz) > 0 && H5DSis_scale(sx) > 0);
    CHECK(H5DSget_num_scales(ds, 0) == 1 && H5DSis_attached(ds, sz, 0) > 0);
    CHECK(H5DSget_num_scales(ds, 1) == 1 && H5DSis_attached(ds, sx, 1) > 0);
    H5Dclose(sz);
    H5Dclose(sx);
    char *u = read_str_attr(ds, "units");
    CHECK_STREQ(u ? u : "", "Gy");
    free(u);
    H5Dclose(ds);
}

static void check_plan_and_timing(hid_t f, const fixture *fx)
{
    char *y = read_text_ds(f, "/plan/yaml_text");
    CHECK_STREQ(y ? y : "(missing)", fx->p.yaml_text);
    /* The spot map as the reader read it, and its hash. */
    char *sp = read_text_ds(f, "/plan/spots_csv"), *sha = read_str_attr(f, "spots_sha256"), hex[65];
    sha256_hex(fx->p.spots_text, fx->p.spots_len, hex);
    CHECK_STREQ(sp ? sp : "(missing)", fx->p.spots_text);
    CHECK_STREQ(sha ? sha : "(missing)", hex);
    free(sp);
    free(sha);
    free(y);
    char *want = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&want, &len);
    plan_write_resolved(m, &fx->p);
    fclose(m);
    char *res = read_text_ds(f, "/plan/resolved");
    CHECK_STREQ(res ? res : "(missing)", want);
    CHECK(len > 0);
    free(res);
    free(want);

    hid_t d = H5Dopen2(f, "/timing/phase_names", H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    size_t w = H5Tget_size(t);
    char *names = calloc(3, w);
    H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, names);
    CHECK_STREQ(names, "setup");
    CHECK_STREQ(names + w, "steps");
    CHECK_STREQ(names + 2 * w, "output");
    free(names);
    H5Tclose(t);
    H5Dclose(d);
    double secs[3] = { 0.125, 2.5, 0.0625 };
    CHECK_DS(f, "/timing/phase_seconds", secs, 3, DIMS(3));
}

static void check_xdmf(const char *xdmf)
{
    size_t len = 0;
    char *x = slurp(xdmf, &len);
    CHECK_MSG(x != NULL, "%s missing", xdmf);
    if (!x)
        return;
    CHECK(strstr(x, "<Xdmf") && strstr(x, "</Xdmf>"));
    CHECK(strstr(x, ">result.h5:/dose/dose_Gy<") != NULL);
    CHECK(strstr(x, ">result.h5:/dose/energy_deposit_MeV<") != NULL);
    CHECK(strstr(x, tmpdir) == NULL); /* relative reference: the pair can move */
    /* A flat image in VTK's x-y plane, one node per cell at its centre:
     * counts, origin and spacing list the flat axis, then z, then x. */
    CHECK(strstr(x, "TopologyType=\"3DCoRectMesh\" Dimensions=\"1 7 6\"") != NULL);
    CHECK(strstr(x, "GeometryType=\"ORIGIN_DXDYDZ\"") != NULL);
    CHECK(strstr(x, ">0 0.625 -1.25<") != NULL); /* the first cell's centre */
    CHECK(strstr(x, ">0.5 1.25 0.5<") != NULL); /* spacing: (unused), dz, dx */
    CHECK(strstr(x, "<DataItem Dimensions=\"1 7 6\"") != NULL);
    CHECK(strstr(x, "Center=\"Node\"") != NULL && strstr(x, "Center=\"Cell\"") == NULL);
    free(x);
}

static void test_round_trip(void)
{
    fixture fx;
    make_fixture(&fx, 5);
    const char *final = path_in("result.h5");
    smx_error err = { 0 };
    CHECK(output_check_target(final, 0, &err) == SMX_OK);

    output *o = NULL;
    CHECK(output_open(&o, final, 0, &err) == SMX_OK);
    char temp[512];
    snprintf(temp, sizeof temp, "%s.partial-%ld", final, (long)getpid());
    CHECK_STREQ(output_temp_path(o), temp);
    CHECK(exists(temp) && !exists(final));
    CHECK(output_write_setup(o, &fx.p, &fx.g, &fx.t, &err) == SMX_OK);
    CHECK(output_write_snapshot(o, &fx.g, 0, fx.psi0, &err) == SMX_OK);
    CHECK(output_write_snapshot(o, &fx.g, 5, fx.psi5, &err) == SMX_OK);
    CHECK(output_write_result(o, &(output_run){ &fx.p, &fx.g, &fx.r }, &fx.fig, &fx.pv, &err) ==
          SMX_OK);
    CHECK(output_commit(o, &err) == SMX_OK);
    CHECK_MSG(err.code == 0, "%s", err.msg);
    CHECK(exists(final) && !exists(temp));

    hid_t f = H5Fopen(final, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    if (f >= 0) {
        check_root(f, &fx);
        check_axes(f, &fx.g);
        check_dose(f, &fx);
        check_psi(f, &fx, "/psi/step_000000", fx.psi0, 0);
        check_psi(f, &fx, "/psi/step_000005", fx.psi5, 5);
        { /* The empty planes were never written: no chunk of theirs exists. */
            hid_t ds = H5Dopen2(f, "/psi/step_000005", H5P_DEFAULT), sp = H5Dget_space(ds);
            hsize_t nchunks = 0;
            const hsize_t planes = (hsize_t)(fx.g.ne * fx.g.nth);
            CHECK(H5Dget_num_chunks(ds, sp, &nchunks) >= 0);
            CHECK_MSG(nchunks == planes - (planes + 2) / 3, "%llu chunks written of %llu planes",
                      (unsigned long long)nchunks, (unsigned long long)planes);
            H5Sclose(sp);
            H5Dclose(ds);
        }
        check_tallies(f, &fx.r);
        check_plan_and_timing(f, &fx);
        int n = 0;
        H5Ovisit(f, H5_INDEX_NAME, H5_ITER_NATIVE, labelled, &n);
        CHECK_MSG(n == 8 + 3 + 2 + 18 + 3 + 2 + 7, "%d datasets",
                  n); /* axes, dose, psi, tallies, plan (with the spot map), timing, summary */
        /* The summary is the dose's own figures (the terminal prints the same). */
        dose_figures want;
        CHECK(dose_figures_of(&fx.g, fx.r.dose_MeV, NULL, &want) == 0);
        double got[7] = { read_scalar(f, "/summary/R80_mm"),
                          read_scalar(f, "/summary/R20_mm"),
                          read_scalar(f, "/summary/peak_depth_mm"),
                          read_scalar(f, "/summary/peak_to_entrance"),
                          read_scalar(f, "/summary/lateral_rms_at_half_R80_mm"),
                          read_scalar(f, "/summary/maximum_depth_mm"),
                          read_scalar(f, "/summary/maximum_to_peak") };
        double exp[7] = { want.r80_mm,
                          want.r20_mm,
                          want.peak_depth_mm,
                          want.peak_to_entrance,
                          want.lateral_rms_half_r80_mm,
                          want.max_depth_mm,
                          want.max_to_peak };
        for (int k = 0; k < 7; k++)
            CHECK_MSG(got[k] == exp[k] || (isnan(got[k]) && isnan(exp[k])),
                      "/summary figure %d: %g, want %g", k, got[k], exp[k]);
        H5Fclose(f);
    }
    check_xdmf(path_in("result.xdmf"));
    CHECK(!exists(path_in("result.xdmf.partial")));
    free_fixture(&fx);
}

int main(int argc, char **argv)
{
    (void)argc;
    if (output_fixture_begin("test_output"))
        return 1;
    test_tally();
    test_run_result();
    test_provenance();
    test_round_trip();
    cleanup();
    return check_report(argv[0]);
}
