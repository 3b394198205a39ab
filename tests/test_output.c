/* The result writer end to end: write a small run, read every object back with
 * the plain HDF5 API and compare bit for bit; the overwrite, abort and
 * keep-partial policies; the sidecar; provenance; the tally arithmetic. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hdf5.h>

#include "check.h"
#include "io/output.h"
#include "io/provenance.h"
#include "transport/run.h"
#include "transport/tally.h"

static char tmpdir[256];

static char *path_in(const char *name)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        *len = (size_t)n;
    }
    return buf;
}

/* Deterministic values that are not round numbers, so a swapped or shifted
 * element cannot compare equal by accident. */
static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static double rnd(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}

/* ---- fixtures ------------------------------------------------------------ */

static void make_axis(axis *a, int n, double lo, double width)
{
    a->n = n;
    a->centres = malloc((size_t)n * sizeof(double));
    a->edges = malloc((size_t)(n + 1) * sizeof(double));
    for (int i = 0; i <= n; i++)
        a->edges[i] = lo + i * width;
    for (int i = 0; i < n; i++)
        a->centres[i] = 0.5 * (a->edges[i] + a->edges[i + 1]);
}

static void make_grid(grid *g)
{
    memset(g, 0, sizeof *g);
    g->ne = 3, g->nth = 5, g->nz = 7, g->nx = 6;
    make_axis(&g->E, 3, 50.0, 2.5);
    make_axis(&g->theta, 5, 1.4, 0.035);
    make_axis(&g->z, 7, 0.0, 1.25);
    make_axis(&g->x, 6, -1.5, 0.5);
    g->dx = 0.5, g->dz = 1.25, g->density = 1.03;
    g->dtheta = 0.035, g->ds = 0.5;
    g->slice = g->nz * g->nx;
    g->cells = g->ne * g->nth * g->slice;
}

static void free_grid(grid *g)
{
    axis *ax[] = { &g->E, &g->theta, &g->z, &g->x };
    for (int i = 0; i < 4; i++) {
        free(ax[i]->centres);
        free(ax[i]->edges);
    }
}

static void make_plan(plan *p)
{
    memset(p, 0, sizeof *p);
    p->nx = 6, p->nz = 7, p->dx_mm = 0.5, p->dz_mm = 1.25;
    p->slab_thickness_mm = 2.0;
    p->density_g_cm3 = 1.03;
    snprintf(p->path, sizeof p->path, "config/test plan.yaml");
    snprintf(p->table_file, sizeof p->table_file, "pstar_water.h5");
    snprintf(p->table_path, sizeof p->table_path, "data/pstar_water.h5");
    p->yaml_text = strdup("# a plan\ngrid:\n  space: {nx: 6, nz: 7}\nbeam:\n  energy_MeV: 55\n");
    p->yaml_len = strlen(p->yaml_text);
}

static void make_result(run_result *r, const grid *g, int n_steps)
{
    run_result_init(r);
    for (int i = 0; i < n_steps; i++) {
        step_balance b;
        memset(&b, 0, sizeof b);
        b.weight_in = 1.0 - 0.01 * i;
        b.energy_in = 55.0 * b.weight_in;
        for (int c = 0; c < CH_COUNT; c++) {
            b.t.weight[c] = 1e-3 * rnd();
            b.t.energy[c] = 1e-2 * rnd();
        }
        b.t.deposited = 0.3 + rnd();
        b.weight_out = b.weight_in - b.t.weight[0] - b.t.weight[1] - b.t.weight[2] -
                       b.t.weight[3];
        b.energy_out = b.energy_in - b.t.deposited - 0.5 * rnd();
        tally_close_balance(&b);
        CHECK(run_result_push(r, &b, 1.0 + rnd(), 0.25 * i) == SMX_OK);
    }
    r->initial_weight = 1.0;
    r->initial_energy_MeV = 55.0;
    r->conservation_violations = 2;
    r->stop_reason = STOP_WEIGHT_BELOW;
    r->dose_MeV = malloc((size_t)g->slice * sizeof(double));
    for (int64_t i = 0; i < g->slice; i++)
        r->dose_MeV[i] = rnd();
    snprintf(r->backend_name, sizeof r->backend_name, "cpu");
    snprintf(r->device_name, sizeof r->device_name, "Test CPU (4 threads)");
    snprintf(r->compute_capability, sizeof r->compute_capability, "n/a");
    snprintf(r->kernel_variants, sizeof r->kernel_variants, "energy=gather stream=gather");
    run_result_phase(r, "setup", 0.125);
    run_result_phase(r, "steps", 2.5);
    run_result_phase(r, "output", 0.0625);
}

/* ---- reading back -------------------------------------------------------- */

static char *read_str_attr(hid_t loc, const char *name)
{
    if (H5Aexists(loc, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    char *s = NULL;
    if (H5Tget_class(t) == H5T_STRING && !H5Tis_variable_str(t)) {
        size_t n = H5Tget_size(t);
        s = calloc(n + 1, 1);
        H5Aread(a, t, s);
    }
    H5Tclose(t);
    H5Aclose(a);
    return s;
}

static double read_num_attr(hid_t loc, const char *name)
{
    double v = NAN;
    if (H5Aexists(loc, name) > 0) {
        hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
        H5Aread(a, H5T_NATIVE_DOUBLE, &v);
        H5Aclose(a);
    }
    return v;
}

/* Reads a dataset as doubles (or floats when f32) and returns its shape. */
static void *read_ds(hid_t file, const char *path, int f32, int *rank, hsize_t dims[4])
{
    *rank = -1;
    if (H5Lexists(file, path, H5P_DEFAULT) <= 0)
        return NULL;
    hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    hid_t s = H5Dget_space(d);
    *rank = H5Sget_simple_extent_ndims(s);
    H5Sget_simple_extent_dims(s, dims, NULL);
    hssize_t n = H5Sget_simple_extent_npoints(s);
    size_t sz = f32 ? sizeof(float) : sizeof(double);
    void *buf = calloc(n > 0 ? (size_t)n : 1, sz);
    if (n > 0)
        H5Dread(d, f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                buf);
    H5Sclose(s);
    H5Dclose(d);
    return buf;
}

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

#define CHECK_DS(file, path, want, n, dims_expr)                                         \
    do {                                                                                 \
        int rank_;                                                                       \
        hsize_t d_[4] = { 0 };                                                           \
        double *got_ = read_ds(file, path, 0, &rank_, d_);                               \
        CHECK_MSG(got_ != NULL, "missing %s", path);                                     \
        hsize_t want_dims_[] = dims_expr;                                                \
        int want_rank_ = (int)(sizeof want_dims_ / sizeof want_dims_[0]);                \
        CHECK_MSG(rank_ == want_rank_, "%s rank %d", path, rank_);                       \
        for (int k_ = 0; k_ < want_rank_ && k_ < rank_; k_++)                            \
            CHECK_MSG(d_[k_] == want_dims_[k_], "%s dim %d = %llu", path, k_,            \
                      (unsigned long long)d_[k_]);                                       \
        if (got_ && (n) > 0)                                                             \
            CHECK_MSG(memcmp(got_, (want), (size_t)(n) * sizeof(double)) == 0,           \
                      "%s differs", path);                                               \
        free(got_);                                                                      \
    } while (0)
#define DIMS(...) { __VA_ARGS__ }

static double read_scalar(hid_t file, const char *path)
{
    int rank;
    hsize_t d[4];
    double *v = read_ds(file, path, 0, &rank, d);
    double x = v && rank == 0 ? *v : NAN;
    free(v);
    return x;
}

/* Every dataset the writer made must carry units and description. */
static herr_t labelled(hid_t obj, const char *name, const H5O_info_t *info, void *data)
{
    int *n = data;
    if (info->type != H5O_TYPE_DATASET)
        return 0;
    (*n)++;
    hid_t d = H5Dopen2(obj, name, H5P_DEFAULT);
    char *u = read_str_attr(d, "units");
    char *desc = read_str_attr(d, "description");
    CHECK_MSG(u != NULL, "%s has no units", name);
    CHECK_MSG(desc && desc[0], "%s has no description", name);
    free(u);
    free(desc);
    H5Dclose(d);
    return 0;
}

static int read_complete(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return -1;
    int c = (int)read_num_attr(f, "complete");
    H5Fclose(f);
    return c;
}

/* ---- the tests ----------------------------------------------------------- */

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
    tally_close_balance(&b);
    /* Exact binary fractions: the arithmetic must reproduce them exactly. */
    CHECK(b.weight_rel_err == 0.025);
    CHECK(b.energy_rel_err == 0.01);

    b.t.energy[CH_SPATIAL_LEAK] = 40.0; /* now balanced: stopped counted once only */
    b.t.weight[CH_SPATIAL_LEAK] = 0.5;
    tally_close_balance(&b);
    CHECK(b.weight_rel_err == 0.0);
    CHECK(b.energy_rel_err == 0.0);

    b.t.energy[CH_SPATIAL_LEAK] = 50.0; /* over-counting shows as error too */
    tally_close_balance(&b);
    CHECK(b.energy_rel_err == 0.01);

    step_balance z;
    memset(&z, 0, sizeof z);
    tally_close_balance(&z);
    CHECK(z.weight_rel_err == 0.0 && z.energy_rel_err == 0.0);

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
        char *names[] = { "a", "b", "c", "d", "e", "f", "g", "h", "i", "j" };
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

typedef struct fixture {
    grid g;
    plan p;
    tables t;
    run_result r;
    provenance pv;
    float *psi0, *psi5;
} fixture;

static void make_fixture(fixture *fx, int n_steps)
{
    make_grid(&fx->g);
    make_plan(&fx->p);
    memset(&fx->t, 0, sizeof fx->t);
    snprintf(fx->t.path, sizeof fx->t.path, "data/pstar_water.h5");
    snprintf(fx->t.sha256, sizeof fx->t.sha256, "%064d", 7);
    make_result(&fx->r, &fx->g, n_steps);
    char *argv[] = { "smx2d-sim", "config/test plan.yaml", "--overwrite" };
    provenance_init(&fx->pv, 3, argv);
    snprintf(fx->pv.plan_sha256, sizeof fx->pv.plan_sha256, "%064d", 42);
    provenance_finish(&fx->pv);
    fx->psi0 = malloc((size_t)fx->g.cells * sizeof(float));
    fx->psi5 = malloc((size_t)fx->g.cells * sizeof(float));
    for (int64_t i = 0; i < fx->g.cells; i++) {
        fx->psi0[i] = (float)rnd();
        fx->psi5[i] = (float)(rnd() * 1e-3);
    }
}

static void free_fixture(fixture *fx)
{
    free_grid(&fx->g);
    free(fx->p.yaml_text);
    run_result_free(&fx->r);
    free(fx->psi0);
    free(fx->psi5);
}

static int write_all(const char *path, int overwrite, fixture *fx, smx_error *err)
{
    output *o = NULL;
    int rc = output_open(&o, path, overwrite, err);
    if (rc)
        return rc;
    if (!(rc = output_write_setup(o, &fx->p, &fx->g, &fx->t, err)) &&
        !(rc = output_write_snapshot(o, &fx->g, 0, fx->psi0, err)) &&
        !(rc = output_write_snapshot(o, &fx->g, 5, fx->psi5, err)) &&
        !(rc = output_write_result(o, &fx->p, &fx->g, &fx->r, &fx->pv, err)))
        rc = output_commit(o, err);
    if (rc)
        output_abort(o, 0);
    return rc;
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
        "filetype", "format_version", "code_version", "git_describe", "compiler", "cflags",
        "nvcc_version", "nvcc_flags", "cuda_runtime_version", "cuda_driver_version",
        "cufft_version", "hdf5_version", "libyaml_version", "backend", "device_name",
        "compute_capability", "hostname", "argv", "utc_start", "utc_end", "plan_file",
        "plan_sha256", "table_file", "table_sha256", "kernel_variants", "stop_reason",
    };
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
        char *s = read_str_attr(f, strs[i]);
        CHECK_MSG(s && s[0], "root attribute %s missing or empty", strs[i]);
        free(s);
    }
    char *s;
#define ATTR_IS(name, want) s = read_str_attr(f, name); \
    CHECK_STREQ(s ? s : "(missing)", want); free(s)
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
    /* What provenance_init recorded: the linked cuFFT's version, or "none". */
    ATTR_IS("cufft_version", fx->pv.cufft_version);
#ifdef SMX_HAVE_CUDA
    CHECK(atoi(fx->pv.cufft_version) > 0);
#else
    CHECK_STREQ(fx->pv.cufft_version, "none");
#endif
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
    for (size_t i = 0; gy && i < n; i++)
        CHECK_REL(gy[i], fx->r.dose_MeV[i] * 1.602176634e-13 / mass, 1e-13);
    free(gy);
    hid_t ds = H5Dopen2(f, "/dose/dose_Gy", H5P_DEFAULT);
    CHECK(read_num_attr(ds, "slab_thickness_mm") == 2.0);
    CHECK(read_num_attr(ds, "density_g_cm3") == 1.03);
    char *u = read_str_attr(ds, "units");
    CHECK_STREQ(u ? u : "", "Gy");
    free(u);
    H5Dclose(ds);
}

static void check_psi(hid_t f, const fixture *fx, const char *path, const float *want, int step)
{
    int rank;
    hsize_t d[4];
    float *psi = read_ds(f, path, 1, &rank, d);
    CHECK_MSG(psi && rank == 4 && d[0] == 3 && d[1] == 5 && d[2] == 7 && d[3] == 6,
              "%s shape", path);
    if (psi)
        CHECK_MSG(memcmp(psi, want, (size_t)fx->g.cells * sizeof(float)) == 0, "%s differs",
                  path);
    free(psi);
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    CHECK(read_num_attr(ds, "step") == step);
    char *u = read_str_attr(ds, "units");
    CHECK_STREQ(u ? u : "", "weight per bin");
    free(u);
    hid_t dcpl = H5Dget_create_plist(ds);
    CHECK(H5Pget_layout(dcpl) == H5D_CHUNKED);
    hsize_t chunk[4] = { 0 };
    CHECK(H5Pget_chunk(dcpl, 4, chunk) == 4);
    CHECK(chunk[0] == 1 && chunk[1] == 1 && chunk[2] == 7 && chunk[3] == 6);
    CHECK(H5Pget_nfilters(dcpl) == 2);
    unsigned flags, cd[4];
    size_t ncd = 4;
    CHECK(H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_SHUFFLE);
    ncd = 4;
    CHECK(H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL) == H5Z_FILTER_DEFLATE);
    CHECK(ncd >= 1 && cd[0] == 4);
    H5Pclose(dcpl);
    H5Dclose(ds);
}

static void check_tallies(hid_t f, const run_result *r)
{
    int n = r->n_steps;
    size_t m = n > 0 ? (size_t)n : 1;
    double *w = calloc(m * CH_COUNT, sizeof(double)), *e = calloc(m * CH_COUNT, sizeof(double));
    double *cols[9];
    for (int k = 0; k < 9; k++)
        cols[k] = calloc(m, sizeof(double));
    for (int i = 0; i < n; i++) {
        const step_balance *b = &r->steps[i];
        for (int c = 0; c < CH_COUNT; c++) {
            w[i * CH_COUNT + c] = b->t.weight[c];
            e[i * CH_COUNT + c] = b->t.energy[c];
        }
        cols[0][i] = b->t.deposited;
        cols[1][i] = b->weight_in;
        cols[2][i] = b->weight_out;
        cols[3][i] = b->energy_in;
        cols[4][i] = b->energy_out;
        cols[5][i] = b->weight_rel_err;
        cols[6][i] = b->energy_rel_err;
        cols[7][i] = r->step_ms[i];
        cols[8][i] = r->front_depth_mm[i];
    }
    hsize_t hn = (hsize_t)n;
    CHECK_DS(f, "/tallies/weight_per_step", w, n * CH_COUNT, DIMS(hn, CH_COUNT));
    CHECK_DS(f, "/tallies/energy_per_step_MeV", e, n * CH_COUNT, DIMS(hn, CH_COUNT));
    const char *names[9] = { "deposited_per_step_MeV", "weight_in", "weight_out",
                             "energy_in_MeV", "energy_out_MeV", "weight_rel_err",
                             "energy_rel_err", "step_ms", "front_depth_mm" };
    for (int k = 0; k < 9; k++) {
        char path[128];
        snprintf(path, sizeof path, "/tallies/%s", names[k]);
        CHECK_DS(f, path, cols[k], n, DIMS(hn));
        free(cols[k]);
    }
    free(w);
    free(e);
    CHECK_DS(f, "/tallies/cumulative_weight", r->cumulative.weight, CH_COUNT, DIMS(CH_COUNT));
    CHECK_DS(f, "/tallies/cumulative_energy_MeV", r->cumulative.energy, CH_COUNT,
             DIMS(CH_COUNT));
    CHECK(read_scalar(f, "/tallies/cumulative_deposited_MeV") == r->cumulative.deposited);
    CHECK(read_scalar(f, "/tallies/initial_weight") == r->initial_weight);
    CHECK(read_scalar(f, "/tallies/initial_energy_MeV") == r->initial_energy_MeV);
    hid_t g = H5Gopen2(f, "/tallies", H5P_DEFAULT);
    char *s = read_str_attr(g, "channel_names");
    CHECK_STREQ(s ? s : "", "theta_boundary,theta_cutoff,energy_stopped,spatial_leak");
    free(s);
    H5Gclose(g);
}

static void check_plan_and_timing(hid_t f, const fixture *fx)
{
    char *y = read_text_ds(f, "/plan/yaml_text");
    CHECK_STREQ(y ? y : "(missing)", fx->p.yaml_text);
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
    CHECK(strstr(x, "TopologyType=\"2DCoRectMesh\" Dimensions=\"8 7\"") != NULL);
    CHECK(strstr(x, "GeometryType=\"ORIGIN_DXDY\"") != NULL);
    CHECK(strstr(x, ">0 -1.5<") != NULL);  /* origin: z then x */
    CHECK(strstr(x, ">1.25 0.5<") != NULL); /* spacing: dz then dx */
    CHECK(strstr(x, "Dimensions=\"7 6\"") != NULL);
    CHECK(strstr(x, "Center=\"Cell\"") != NULL);
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
    CHECK(output_write_result(o, &fx.p, &fx.g, &fx.r, &fx.pv, &err) == SMX_OK);
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
        check_tallies(f, &fx.r);
        check_plan_and_timing(f, &fx);
        int n = 0;
        H5Ovisit(f, H5_INDEX_NAME, H5_ITER_NATIVE, labelled, &n);
        CHECK_MSG(n == 8 + 2 + 2 + 16 + 2 + 2, "%d datasets", n);
        H5Fclose(f);
    }
    check_xdmf(path_in("result.xdmf"));
    CHECK(!exists(path_in("result.xdmf.partial")));
    free_fixture(&fx);
}

static void test_overwrite(void)
{
    fixture fx;
    make_fixture(&fx, 3);
    const char *final = path_in("result.h5");
    size_t len0 = 0, len1 = 0;
    char *before = slurp(final, &len0);
    CHECK(before != NULL);

    char want[1024];
    snprintf(want, sizeof want, "%s: exists; refusing to overwrite (set output.overwrite: "
             "true or pass --overwrite)", final);
    smx_error err = { 0 };
    CHECK(output_check_target(final, 0, &err) == SMX_EXIT_INPUT);
    CHECK_STREQ(err.msg, want);
    static int sentinel;
    output *o = (output *)(void *)&sentinel; /* must be reset to NULL on failure */
    memset(&err, 0, sizeof err);
    CHECK(output_open(&o, final, 0, &err) == SMX_EXIT_INPUT);
    CHECK(o == NULL);
    CHECK_STREQ(err.msg, want);
    char *after = slurp(final, &len1);
    CHECK(after && len0 == len1 && memcmp(before, after, len0) == 0);
    free(after);
    char temp[512];
    snprintf(temp, sizeof temp, "%s.partial-%ld", final, (long)getpid());
    CHECK(!exists(temp));

    /* A final file that appears while the run is going is not replaced either. */
    const char *late = path_in("late.h5");
    memset(&err, 0, sizeof err);
    CHECK(output_open(&o, late, 0, &err) == SMX_OK);
    CHECK(output_write_setup(o, &fx.p, &fx.g, &fx.t, &err) == SMX_OK);
    CHECK(output_write_result(o, &fx.p, &fx.g, &fx.r, &fx.pv, &err) == SMX_OK);
    FILE *lf = fopen(late, "w");
    fputs("someone else's file\n", lf);
    fclose(lf);
    CHECK(output_commit(o, &err) == SMX_EXIT_INPUT);
    output_abort(o, 1); /* the commit had marked it complete: the kept copy is not */
    CHECK(read_complete(path_in("late.incomplete.h5")) == 0);
    after = slurp(late, &len1);
    CHECK(after && strcmp(after, "someone else's file\n") == 0);
    free(after);
    CHECK(!exists(path_in("late.xdmf")));

    memset(&err, 0, sizeof err);
    CHECK(write_all(final, 1, &fx, &err) == SMX_OK);
    CHECK_MSG(err.code == 0, "%s", err.msg);
    hid_t f = H5Fopen(final, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(read_num_attr(f, "n_steps") == 3.0);
    check_tallies(f, &fx.r);
    H5Fclose(f);
    after = slurp(final, &len1);
    CHECK(after && (len0 != len1 || memcmp(before, after, len0) != 0));
    free(after);
    free(before);
    free_fixture(&fx);
}

static void test_abort(void)
{
    fixture fx;
    make_fixture(&fx, 2);
    const char *final = path_in("aborted.h5");
    smx_error err = { 0 };
    output *o = NULL;
    CHECK(output_open(&o, final, 0, &err) == SMX_OK);
    char temp[512];
    snprintf(temp, sizeof temp, "%s", output_temp_path(o));
    CHECK(output_write_setup(o, &fx.p, &fx.g, &fx.t, &err) == SMX_OK);
    CHECK(output_write_snapshot(o, &fx.g, 0, fx.psi0, &err) == SMX_OK);
    output_abort(o, 0);
    CHECK(!exists(final) && !exists(temp) && !exists(path_in("aborted.incomplete.h5")));
    CHECK(!exists(path_in("aborted.xdmf")));

    CHECK(output_open(&o, final, 0, &err) == SMX_OK);
    snprintf(temp, sizeof temp, "%s", output_temp_path(o));
    CHECK(output_write_setup(o, &fx.p, &fx.g, &fx.t, &err) == SMX_OK);
    CHECK(output_write_snapshot(o, &fx.g, 0, fx.psi0, &err) == SMX_OK);
    /* Committing without a result is refused, and abort still cleans up. */
    CHECK(output_commit(o, &err) == SMX_EXIT_RUNTIME);
    CHECK(strstr(err.msg, "output_commit before") != NULL);
    output_abort(o, 1);
    const char *kept = path_in("aborted.incomplete.h5");
    CHECK(!exists(final) && !exists(temp) && exists(kept));
    CHECK(read_complete(kept) == 0);
    hid_t f = H5Fopen(kept, H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0);
    if (f >= 0) {
        check_psi(f, &fx, "/psi/step_000000", fx.psi0, 0);
        H5Fclose(f);
    }
    free_fixture(&fx);
}

static void test_zero_steps_and_errors(void)
{
    fixture fx;
    make_fixture(&fx, 0);
    fx.r.n_phases = 0;
    const char *final = path_in("empty.h5");
    smx_error err = { 0 };
    CHECK(write_all(final, 0, &fx, &err) == SMX_OK);
    CHECK_MSG(err.code == 0, "%s", err.msg);
    hid_t f = H5Fopen(final, H5F_ACC_RDONLY, H5P_DEFAULT);
    check_tallies(f, &fx.r);
    int rank;
    hsize_t d[4] = { 9 };
    free(read_ds(f, "/timing/phase_seconds", 0, &rank, d));
    CHECK(rank == 1 && d[0] == 0);
    CHECK(read_num_attr(f, "n_steps") == 0.0);
    H5Fclose(f);

    memset(&err, 0, sizeof err);
    CHECK(output_check_target(path_in("no/such/dir/out.h5"), 1, &err) == SMX_EXIT_INPUT);
    CHECK(strstr(err.msg, "no/such/dir") != NULL);
    memset(&err, 0, sizeof err);
    CHECK(output_check_target(tmpdir, 1, &err) == SMX_EXIT_INPUT);
    CHECK(strstr(err.msg, "is a directory") != NULL);
    memset(&err, 0, sizeof err);
    CHECK(output_check_target("", 0, &err) == SMX_EXIT_INPUT);

    /* root ignores permission bits, so the read-only case only runs unprivileged. */
    if (geteuid() != 0) {
        const char *ro = path_in("ro");
        mkdir(ro, 0555);
        char p[600];
        snprintf(p, sizeof p, "%s/out.h5", ro);
        memset(&err, 0, sizeof err);
        CHECK(output_check_target(p, 0, &err) == SMX_EXIT_INPUT);
        CHECK(strstr(err.msg, "not writable") != NULL);
        rmdir(ro);
    }
    free_fixture(&fx);
}

/* A full disk, simulated with a file-size limit: the snapshot must fail with a
 * message naming it, and the abort must remove the file without tripping the
 * HDF5 1.10 crash-at-exit that follows a failed H5Fclose. Run in a child so the
 * limit and any crash stay there. */
static void test_disk_full(void)
{
    fixture fx;
    make_fixture(&fx, 1);
    free_grid(&fx.g);
    free(fx.psi0);
    /* 4 x 4 x 50 x 50 random floats: ~160 kB that deflate cannot shrink much. */
    memset(&fx.g, 0, sizeof fx.g);
    fx.g.ne = 4, fx.g.nth = 4, fx.g.nz = 50, fx.g.nx = 50;
    make_axis(&fx.g.E, 4, 10.0, 1.0);
    make_axis(&fx.g.theta, 4, 1.5, 0.01);
    make_axis(&fx.g.z, 50, 0.0, 1.0);
    make_axis(&fx.g.x, 50, -25.0, 1.0);
    fx.g.dx = fx.g.dz = 1.0, fx.g.density = 1.0;
    fx.g.slice = 2500, fx.g.cells = 40000;
    fx.psi0 = malloc(40000 * sizeof(float));
    for (int i = 0; i < 40000; i++)
        fx.psi0[i] = (float)rnd();
    const char *final = path_in("full.h5");

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = { 64 << 10, 64 << 10 };
        setrlimit(RLIMIT_FSIZE, &rl);
        smx_error err = { 0 };
        output *o = NULL;
        int bad = output_open(&o, final, 0, &err) != SMX_OK ||
                  output_write_setup(o, &fx.p, &fx.g, &fx.t, &err) != SMX_OK;
        int rc = bad ? 0 : output_write_snapshot(o, &fx.g, 0, fx.psi0, &err);
        if (rc != SMX_EXIT_RUNTIME || !strstr(err.msg, "cannot write dataset /psi/step_000000")) {
            fprintf(stderr, "disk-full child: rc %d, message: %s\n", rc, err.msg);
            bad = 1;
        }
        if (o)
            output_abort(o, 0);
        exit(bad ? 1 : 0);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    CHECK(!exists(final));
    DIR *d = opendir(tmpdir);
    for (struct dirent *e; d && (e = readdir(d));)
        CHECK_MSG(!strstr(e->d_name, "full.h5"), "left behind: %s", e->d_name);
    if (d)
        closedir(d);
    free_fixture(&fx);
}

/* SMX_TEST_KEEP=1 leaves the files for inspection with h5dump or ParaView. */
static void cleanup(void)
{
    if (getenv("SMX_TEST_KEEP")) {
        printf("test_output: files kept in %s\n", tmpdir);
        return;
    }
    const char *names[] = { "result.h5", "result.xdmf", "late.h5", "late.incomplete.h5",
                            "aborted.h5",
                            "aborted.incomplete.h5", "empty.h5", "empty.xdmf" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(path_in(names[i]));
    if (rmdir(tmpdir) != 0)
        fprintf(stderr, "test_output: %s not empty after the test: %s\n", tmpdir,
                strerror(errno));
    CHECK(!exists(tmpdir));
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/smx_test_output.XXXXXX", base);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    smx_quiet = 1;
    test_tally();
    test_run_result();
    test_provenance();
    test_round_trip();
    test_overwrite();
    test_abort();
    test_zero_steps_and_errors();
    test_disk_full();
    cleanup();
    return check_report(argv[0]);
}
