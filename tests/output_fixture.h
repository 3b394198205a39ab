/* Shared by the result writer's test programs (test_output.c: datasets and
 * their contents; test_output_file.c: the file's life): a small synthetic run
 * (grid, plan, result, provenance, two psi snapshots), readers of the HDF5
 * objects through the plain HDF5 API, and a scratch folder per program. */
#ifndef SMX_TEST_OUTPUT_FIXTURE_H
#define SMX_TEST_OUTPUT_FIXTURE_H

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

#include "axis_fixture.h"
#include "check.h"
#include "io/output.h"
#include "io/provenance.h"
#include "transport/run.h"
#include "transport/tally.h"

static char tmpdir[256]; /* this program's scratch folder (output_fixture_begin) */
static const char *fixture_program = "test_output"; /* names it in cleanup's messages */

static inline char *path_in(const char *name)
{
    static char buf[4][512];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 512, "%s/%s", tmpdir, name);
    return p;
}

static inline int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static inline char *slurp(const char *path, size_t *len)
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
static inline double rnd(void)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) * 0x1.0p-53;
}

/* ---- fixtures ------------------------------------------------------------ */

static inline void make_grid(grid *g)
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

static inline void free_grid(grid *g)
{
    axis *ax[] = { &g->E, &g->theta, &g->z, &g->x };
    for (int i = 0; i < 4; i++) {
        free(ax[i]->centres);
        free(ax[i]->edges);
    }
}

static inline void make_plan(plan *p)
{
    memset(p, 0, sizeof *p);
    p->nx = 6, p->nz = 7, p->dx_mm = 0.5, p->dz_mm = 1.25;
    p->slab_thickness_mm = 2.0;
    p->density_g_cm3 = 1.03;
    p->beam_weight = 2.5e9; /* protons */
    snprintf(p->path, sizeof p->path, "config/test plan.yaml");
    snprintf(p->table_file, sizeof p->table_file, "pstar_water.h5");
    snprintf(p->table_path, sizeof p->table_path, "data/pstar_water.h5");
    p->yaml_text = strdup("# a plan\ngrid:\n  space: {nx: 6, nz: 7}\nbeam:\n  energy_MeV: 55\n");
    p->yaml_len = strlen(p->yaml_text);
    /* A field of one spot of 2.5e9 protons, as the reader leaves it (the
     * file's bytes kept from the one read). */
    snprintf(p->spots_file, sizeof p->spots_file, "spots.csv");
    snprintf(p->spots_path, sizeof p->spots_path, "config/spots.csv");
    p->spots_text = strdup("energy_MeV, x_mm, weight\n55, 0, 2.5e9\n");
    p->spots_len = strlen(p->spots_text);
    p->spots = calloc(1, sizeof *p->spots);
    p->n_spots = 1;
    p->spots[0].energy_MeV = 55.0, p->spots[0].weight = 2.5e9, p->spots[0].line = 2;
}

static inline void make_result(run_result *r, const grid *g, int n_steps)
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
        b.weight_out = b.weight_in - b.t.weight[0] - b.t.weight[1] - b.t.weight[2] - b.t.weight[3];
        b.energy_out = b.energy_in - b.t.deposited - 0.5 * rnd();
        tally_close_balance(&b, 1.0, 55.0);
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

static inline char *read_str_attr(hid_t loc, const char *name)
{
    if (H5Aexists(loc, name) <= 0)
        return NULL;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    hid_t t = H5Aget_type(a);
    char *s = NULL;
    if (H5Tget_class(t) == H5T_STRING && H5Tis_variable_str(t) > 0) {
        char *v = NULL;
        if (H5Aread(a, t, &v) >= 0 && v)
            s = strdup(v);
        H5free_memory(v);
    } else if (H5Tget_class(t) == H5T_STRING) {
        size_t n = H5Tget_size(t);
        s = calloc(n + 1, 1);
        H5Aread(a, t, s);
    }
    H5Tclose(t);
    H5Aclose(a);
    return s;
}

static inline double read_num_attr(hid_t loc, const char *name)
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
static inline void *read_ds(hid_t file, const char *path, int f32, int *rank, hsize_t dims[4])
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
        H5Dread(d, f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Sclose(s);
    H5Dclose(d);
    return buf;
}

#define CHECK_DS(file, path, want, n, dims_expr)                                             \
    do {                                                                                     \
        int rank_;                                                                           \
        hsize_t d_[4] = { 0 };                                                               \
        double *got_ = read_ds(file, path, 0, &rank_, d_);                                   \
        CHECK_MSG(got_ != NULL, "missing %s", path);                                         \
        hsize_t want_dims_[] = dims_expr;                                                    \
        int want_rank_ = (int)(sizeof want_dims_ / sizeof want_dims_[0]);                    \
        CHECK_MSG(rank_ == want_rank_, "%s rank %d", path, rank_);                           \
        for (int k_ = 0; k_ < want_rank_ && k_ < rank_; k_++)                                \
            CHECK_MSG(d_[k_] == want_dims_[k_], "%s dim %d = %llu", path, k_,                \
                      (unsigned long long)d_[k_]);                                           \
        if (got_ && (n) > 0)                                                                 \
            CHECK_MSG(memcmp(got_, (want), (size_t)(n) * sizeof(double)) == 0, "%s differs", \
                      path);                                                                 \
        free(got_);                                                                          \
    } while (0)
#define DIMS(...)   \
    {               \
        __VA_ARGS__ \
    }

static inline double read_scalar(hid_t file, const char *path)
{
    int rank;
    hsize_t d[4];
    double *v = read_ds(file, path, 0, &rank, d);
    double x = v && rank == 0 ? *v : NAN;
    free(v);
    return x;
}

/* Every dataset the writer made must carry units and description. */
static inline herr_t labelled(hid_t obj, const char *name, const H5O_info_t *info, void *data)
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

static inline int read_complete(const char *path)
{
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0)
        return -1;
    int c = (int)read_num_attr(f, "complete");
    H5Fclose(f);
    return c;
}

/* ---- the tests ----------------------------------------------------------- */

typedef struct fixture {
    grid g;
    plan p;
    tables t;
    run_result r;
    provenance pv;
    dose_figures fig; /* of r's dose, as main.c works them out */
    float *psi0, *psi5;
} fixture;

static inline void make_fixture(fixture *fx, int n_steps)
{
    make_grid(&fx->g);
    make_plan(&fx->p);
    memset(&fx->t, 0, sizeof fx->t);
    snprintf(fx->t.path, sizeof fx->t.path, "data/pstar_water.h5");
    snprintf(fx->t.sha256, sizeof fx->t.sha256, "%064d", 7);
    make_result(&fx->r, &fx->g, n_steps);
    dose_figures_of(&fx->g, fx->r.dose_MeV, NULL, &fx->fig);
    char *argv[] = { "smx2d-sim", "config/test plan.yaml", "--overwrite" };
    provenance_init(&fx->pv, 3, argv);
    snprintf(fx->pv.plan_sha256, sizeof fx->pv.plan_sha256, "%064d", 42);
    provenance_finish(&fx->pv);
    fx->psi0 = malloc((size_t)fx->g.cells * sizeof(float));
    fx->psi5 = malloc((size_t)fx->g.cells * sizeof(float));
    /* psi5 leaves every third (E, theta) plane empty, as a beam does: the
     * writer skips those planes, and they must read back as zeros. */
    for (int64_t i = 0; i < fx->g.cells; i++) {
        fx->psi0[i] = (float)rnd();
        fx->psi5[i] = (i / fx->g.slice) % 3 == 0 ? 0.0f : (float)(rnd() * 1e-3);
    }
}

static inline void free_fixture(fixture *fx)
{
    free_grid(&fx->g);
    free(fx->p.yaml_text);
    free(fx->p.spots_text);
    free(fx->p.spots);
    run_result_free(&fx->r);
    free(fx->psi0);
    free(fx->psi5);
}

static inline int write_all(const char *path, int overwrite, fixture *fx, smx_error *err)
{
    output *o = NULL;
    int rc = output_open(&o, path, overwrite, err);
    if (rc)
        return rc;
    if (!(rc = output_write_setup(o, &fx->p, &fx->g, &fx->t, err)) &&
        !(rc = output_write_snapshot(o, &fx->g, 0, fx->psi0, err)) &&
        !(rc = output_write_snapshot(o, &fx->g, 5, fx->psi5, err)) &&
        !(rc = output_write_result(o, &(output_run){ &fx->p, &fx->g, &fx->r }, &fx->fig, &fx->pv,
                                   err)))
        rc = output_commit(o, err);
    if (rc)
        output_abort(o, 0);
    return rc;
}

static inline void check_psi(hid_t f, const fixture *fx, const char *path, const float *want,
                             int step)
{
    int rank;
    hsize_t d[4];
    float *psi = read_ds(f, path, 1, &rank, d);
    CHECK_MSG(psi && rank == 4 && d[0] == 3 && d[1] == 5 && d[2] == 7 && d[3] == 6, "%s shape",
              path);
    if (psi)
        CHECK_MSG(memcmp(psi, want, (size_t)fx->g.cells * sizeof(float)) == 0, "%s differs", path);
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

static inline void check_tallies(hid_t f, const run_result *r)
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
    const char *names[9] = { "deposited_per_step_MeV", "weight_in",      "weight_out",
                             "energy_in_MeV",          "energy_out_MeV", "weight_rel_err",
                             "energy_rel_err",         "step_ms",        "front_depth_mm" };
    for (int k = 0; k < 9; k++) {
        char path[128];
        snprintf(path, sizeof path, "/tallies/%s", names[k]);
        CHECK_DS(f, path, cols[k], n, DIMS(hn));
        free(cols[k]);
    }
    free(w);
    free(e);
    CHECK_DS(f, "/tallies/cumulative_weight", r->cumulative.weight, CH_COUNT, DIMS(CH_COUNT));
    CHECK_DS(f, "/tallies/cumulative_energy_MeV", r->cumulative.energy, CH_COUNT, DIMS(CH_COUNT));
    CHECK(read_scalar(f, "/tallies/cumulative_deposited_MeV") == r->cumulative.deposited);
    CHECK(read_scalar(f, "/tallies/initial_weight") == r->initial_weight);
    CHECK(read_scalar(f, "/tallies/initial_energy_MeV") == r->initial_energy_MeV);
    hid_t g = H5Gopen2(f, "/tallies", H5P_DEFAULT);
    char *s = read_str_attr(g, "channel_names");
    CHECK_STREQ(s ? s : "",
                "theta_boundary,theta_cutoff,energy_stopped,spatial_leak,nuclear,medium_rounding");
    free(s);
    H5Gclose(g);
}

/* Removes what either program may have written. SMX_TEST_KEEP=1 leaves the files
 * for inspection with h5dump or ParaView. */
static inline void cleanup(void)
{
    if (getenv("SMX_TEST_KEEP")) {
        printf("%s: files kept in %s\n", fixture_program, tmpdir);
        return;
    }
    const char *names[] = { "result.h5",  "result.xdmf",           "late.h5",  "late.incomplete.h5",
                            "aborted.h5", "aborted.incomplete.h5", "empty.h5", "empty.xdmf" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unlink(path_in(names[i]));
    if (rmdir(tmpdir) != 0)
        fprintf(stderr, "%s: %s not empty after the test: %s\n", fixture_program, tmpdir,
                strerror(errno));
    CHECK(!exists(tmpdir));
}

/* Creates this program's scratch folder under $TMPDIR (or /tmp); 0 on success. */
static inline int output_fixture_begin(const char *program)
{
    const char *base = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    fixture_program = program;
    snprintf(tmpdir, sizeof tmpdir, "%s/smx_%s.XXXXXX", base, program);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    smx_quiet = 1;
    return 0;
}

#endif
