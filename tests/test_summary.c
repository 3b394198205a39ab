/* The run's summary (report/analysis.c) and the dry run's reach (physics/beam_reach.c)
 * on small synthetic dose maps and plans:
 *  - a dense slab before the Bragg peak: the energy per cell is highest in the
 *    slab, the dose is not; the figures are the dose's (the slab is not the peak);
 *  - in one medium the figures are the old energy-sum ones, bit for bit;
 *  - a dose still rising at the far edge: R80 undefined, with the reason, and a
 *    far-edge warning; a dose reaching the sides: a side warning;
 *  - a spread-out peak with a proximal overshoot: the distal peak, not the
 *    overshoot, is the peak, and R80/R20 are of its dose;
 *  - the reach of a 100 MeV beam in water: its CSDA range inside a deep grid,
 *    the far edge of a shallow one, the side for a beam near it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axis_fixture.h"
#include "check.h"
#include "report/analysis.h"
#include "physics/beam_reach.h"

static grid make_grid(int nz, int nx, double dz, double dx)
{
    grid g = { 0 };
    g.nz = nz, g.nx = nx, g.dz = dz, g.dx = dx, g.density = 1.0, g.E_stop = 1.0;
    make_axis(&g.z, nz, 0.0, dz);
    make_axis(&g.x, nx, -0.5 * nx * dx, dx);
    return g;
}

static void free_grid(grid *g)
{
    free(g->z.centres);
    free(g->z.edges);
    free(g->x.centres);
    free(g->x.edges);
}

/* A pristine Bragg-like depth curve (relative dose): a slow rise to a peak at
 * z_peak, a Gaussian fall-off of width w beyond it. */
static double bragg(double z, double z_peak, double w)
{
    if (z <= z_peak)
        return 1.0 / (1.0 + 3.0 * (z_peak - z) / z_peak);
    return exp(-0.5 * (z - z_peak) * (z - z_peak) / (w * w));
}

/* dose[z][x] = curve(z) x a Gaussian profile of sigma 2 mm. */
static double *fill_dose(const grid *g, const double *curve)
{
    double *d = malloc((size_t)(g->nz * g->nx) * sizeof *d);
    for (int64_t z = 0; z < g->nz; z++)
        for (int64_t x = 0; x < g->nx; x++) {
            double xc = g->x.centres[x];
            d[z * g->nx + x] = curve[z] * exp(-0.5 * xc * xc / 4.0);
        }
    return d;
}

/* Two media, water (medium 0, 1 g/cm3) and a denser one in rows z0..z1. */
static void slab_map(medium_map *m, const grid *g, int z0, int z1, double rho)
{
    static medium_material mats[1] = { { "water", "data/pstar_water.h5" } };
    memset(m, 0, sizeof *m);
    m->nz = (int)g->nz, m->nx = (int)g->nx, m->n_materials = 1, m->materials = mats;
    m->n_media = 2;
    m->media = malloc(2 * sizeof *m->media);
    m->media[0] = (medium){ 0, 1.0 };
    m->media[1] = (medium){ 0, rho };
    m->cell = calloc((size_t)(g->nz * g->nx), 1);
    for (int z = z0; z <= z1; z++)
        memset(m->cell + (int64_t)z * g->nx, 1, (size_t)g->nx);
}

static void test_dense_slab(void)
{
    grid g = make_grid(200, 21, 0.5, 1.0);
    double curve[200], *energy;
    for (int z = 0; z < 200; z++)
        curve[z] = bragg(g.z.centres[z], 70.0, 1.5);
    double *dose = fill_dose(&g, curve);
    /* Bone (1.85 g/cm3) in rows 110-129 (55 to 65 mm): its energy per cell is
     * 1.85 times its dose, up to 1.85 x 0.82 = 1.5 times the peak's. */
    medium_map m;
    slab_map(&m, &g, 110, 129, 1.85);
    energy = malloc((size_t)(g.nz * g.nx) * sizeof *energy);
    for (int64_t c = 0; c < g.nz * g.nx; c++)
        energy[c] = dose[c] * m.media[m.cell[c]].density_g_cm3;
    dose_figures with, without, want;
    CHECK(dose_figures_of(&g, energy, &m, &with) == 0);
    CHECK(dose_figures_of(&g, energy, NULL, &without) ==
          0); /* the energy sums: the slab looks like a peak */
    CHECK(dose_figures_of(&g, dose, NULL, &want) == 0);
    CHECK_MSG(without.max_depth_mm > 55.0 && without.max_depth_mm < 65.0,
              "the energy's maximum at %g mm, want in "
              "the slab",
              without.max_depth_mm);
    CHECK_MSG(with.peak_depth_mm == 69.75 || with.peak_depth_mm == 70.25,
              "distal peak at %g mm, want 70", with.peak_depth_mm);
    CHECK(with.max_depth_mm == with.peak_depth_mm);
    /* The dose's own figures, up to the rounding of energy x 1.85 / 1.85. */
    CHECK_REL(with.r80_mm, want.r80_mm, 1e-12); /* rounding of the products only */
    CHECK_REL(with.r20_mm, want.r20_mm, 1e-12);
    CHECK_REL(with.peak_to_entrance, want.peak_to_entrance, 1e-12);
    CHECK_REL(with.lateral_rms_half_r80_mm, want.lateral_rms_half_r80_mm, 1e-12);
    /* R80 of a Gaussian fall-off of 1.5 mm beyond 70 mm: 70 + 1.5 sqrt(2 ln 1.25), to the
     * linear interpolation of the Gaussian between rows 0.5 mm apart (0.02 mm at 20 %). */
    CHECK_ABS(with.r80_mm, 70.0 + 1.5 * sqrt(2.0 * log(1.25)), 0.05);
    CHECK_ABS(with.r20_mm, 70.0 + 1.5 * sqrt(2.0 * log(5.0)), 0.05);
    CHECK(with.far_edge_rel < 1e-12 && with.side_rel < SUMMARY_EDGE_REL);
    char w[1024];
    CHECK(summary_warnings(&with, 1e-6, w, sizeof w) == 0 && w[0] == '\0');
    free(energy);
    free(dose);
    free(m.media);
    free(m.cell);
    free_grid(&g);
}

/* One medium: the figures are the energy sums' of before, bit for bit
 * (distal_depth_mm and the first maximum), with or without a uniform map. */
static void test_water_unchanged(void)
{
    grid g = make_grid(170, 41, 0.5, 0.5);
    double curve[170];
    for (int z = 0; z < 170; z++)
        curve[z] = bragg(g.z.centres[z], 76.25, 0.9) *
                   (1.0 + 1e-3 * sin(z * 1.7)); /* a ripple of the plateau */
    double *e = fill_dose(&g, curve), dd[170];
    depth_dose(&g, e, dd);
    medium_map m = { 0 };
    m.nz = 170, m.nx = 41, m.n_media = 1;
    medium one = { 0, 1.0 };
    m.media = &one;
    dose_figures a, b;
    CHECK(dose_figures_of(&g, e, NULL, &a) == 0 && dose_figures_of(&g, e, &m, &b) == 0);
    CHECK(a.r80_mm == distal_depth_mm(&g, dd, 0.8) && a.r20_mm == distal_depth_mm(&g, dd, 0.2));
    CHECK(a.peak_depth_mm == peak_depth_mm(&g, dd) && a.max_depth_mm == a.peak_depth_mm &&
          a.max_to_peak == 1.0);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    free(e);
    free_grid(&g);
}

/* A beam that leaves the far edge (the dose rises to it) and one at a side. */
static void test_edges(void)
{
    grid g = make_grid(80, 21, 0.5, 1.0);
    double curve[80];
    for (int z = 0; z < 80; z++)
        curve[z] = bragg(g.z.centres[z], 70.0, 1.5); /* the peak beyond the grid's 40 mm */
    double *e = fill_dose(&g, curve);
    dose_figures f;
    CHECK(dose_figures_of(&g, e, NULL, &f) == 0);
    CHECK(isnan(f.r80_mm) && isnan(f.r20_mm) && isnan(f.peak_depth_mm) &&
          isnan(f.lateral_rms_half_r80_mm));
    CHECK(f.max_depth_mm == g.z.centres[79] && f.far_edge_rel == 1.0);
    char why[256], w[2048];
    dose_figures_why_undefined(&f, 0.8, why, sizeof why);
    CHECK_MSG(strstr(why, "does not fall below half its maximum inside the grid"), "%s", why);
    CHECK(summary_warnings(&f, 0.91, w, sizeof w) == 1);
    CHECK_MSG(strstr(w, "far edge") && strstr(w, "91 % of the protons") &&
                  strstr(w, "R80 is undefined"),
              "%s", w);
    free(e);

    /* Beyond the sides: the profile moved to the first column. */
    for (int z = 0; z < 80; z++)
        curve[z] = bragg(g.z.centres[z], 30.0, 1.0);
    e = fill_dose(&g, curve);
    for (int64_t z = 0; z < g.nz; z++)
        for (int64_t x = 0; x < g.nx; x++)
            e[z * g.nx + x] = curve[z] * exp(-0.5 * pow((g.x.centres[x] + 10.0) / 3.0, 2));
    CHECK(dose_figures_of(&g, e, NULL, &f) == 0);
    CHECK(isfinite(f.r80_mm) && f.side_rel > 0.9);
    CHECK(summary_warnings(&f, 0.3, w, sizeof w) == 1);
    CHECK_MSG(strstr(w, "sides") && strstr(w, "30 % of the protons"), "%s", w);
    /* Leak alone (a beam's tails) above the threshold, below it. */
    f.side_rel = 0.0;
    CHECK(summary_warnings(&f, 2e-3, w, sizeof w) == 1 && strstr(w, "0.2 % of the protons left"));
    CHECK(summary_warnings(&f, 1e-5, w, sizeof w) == 0);
    free(e);
    free_grid(&g);
}

/* A spread-out peak: plateau 80-110 mm with a proximal overshoot of +4.5 %
 * at 77.75 mm and the deepest peak at 109.25 mm (the sobp example's shape). */
static void test_spread_out_peak(void)
{
    grid g = make_grid(260, 11, 0.5, 2.0);
    double curve[260];
    for (int z = 0; z < 260; z++) {
        double zc = g.z.centres[z], v;
        if (zc < 77.75)
            v = 0.5 + 0.545 * zc / 77.75;
        else if (zc < 80.0)
            v = 1.045 - 0.045 * (zc - 77.75) / 2.25;
        else if (zc <= 109.25)
            v = 1.0 + 0.01 * sin((zc - 80.0) * 0.7); /* the plateau's ripple */
        else
            v = (1.0 + 0.01 * sin(29.25 * 0.7)) * exp(-0.5 * pow((zc - 109.25) / 1.5, 2));
        curve[z] = v;
    }
    double *e = fill_dose(&g, curve);
    dose_figures f;
    CHECK(dose_figures_of(&g, e, NULL, &f) == 0);
    CHECK_MSG(f.max_depth_mm == 77.75, "maximum at %g", f.max_depth_mm);
    CHECK_MSG(f.peak_depth_mm == 109.25, "distal peak at %g", f.peak_depth_mm);
    double peak = 1.0 + 0.01 * sin(29.25 * 0.7);
    CHECK_REL(f.max_to_peak, 1.045 / peak, 1e-12); /* the rows' own values: rounding only */
    /* R80 of the distal peak's dose (80 % of the overshoot's is 0.08 mm
     * shallower): a Gaussian fall-off of 1.5 mm, to the linear interpolation
     * between rows 0.5 mm apart (0.01 mm at 80 %, 0.03 mm at 20 %). */
    CHECK_ABS(f.r80_mm, 109.25 + 1.5 * sqrt(2.0 * log(1.25)), 0.02);
    CHECK_ABS(f.r20_mm, 109.25 + 1.5 * sqrt(2.0 * log(5.0)), 0.05);
    free(e);
    free_grid(&g);
}

static void test_reach(void)
{
    tables w = { 0 };
    smx_error err = { 0 };
    if (tables_load(&w, "data/pstar_water.h5", &err)) {
        fprintf(stderr, "%s\n", err.msg);
        check_failures++;
        return;
    }
    const tables *mt[1] = { &w };
    medium one = { 0, 1.0 };
    medium_map m = { 0 };
    m.nz = 200, m.nx = 81, m.n_media = 1, m.media = &one;
    plan_spot s = { .energy_MeV = 100.0, .direction_deg = 90.0, .weight = 1.0 };
    grid g = make_grid(200, 81, 0.5, 0.5);
    g.E_stop = 3.0; /* the range runs on below the transport's stopping energy */
    beam_reach b;
    beam_reach_of(&g, &m, mt, &s, REACH_SIGMAS, &b);
    /* The CSDA range of 100 MeV in water, 7.718 g/cm2, to a quarter cell's step
     * (0.125 mm) and the table's interpolation. */
    CHECK_ABS(b.stop_mm, 10.0 * tables_csda_range(&w, 100.0), 0.13);
    CHECK(!b.exit_side && b.x_lo_mm > -20.0 && b.x_hi_mm < 20.0 && b.x_hi_mm > 3.0);
    free_grid(&g);

    /* 40 mm of water: it leaves with the energy of 40 mm less range. */
    g = make_grid(80, 81, 0.5, 0.5);
    m.nz = 80;
    beam_reach_of(&g, &m, mt, &s, REACH_SIGMAS, &b);
    CHECK(isnan(b.stop_mm) && !b.exit_side);
    CHECK_ABS(b.exit_MeV, tables_energy_at_range(&w, tables_csda_range(&w, 100.0) - 4.0),
              0.05); /* a step's error */
    free_grid(&g);

    /* Near the side: x +- 3 sigma beyond the grid's edge at 20.25 mm. */
    g = make_grid(200, 81, 0.5, 0.5);
    m.nz = 200;
    s.x_mm = 18.0;
    beam_reach_of(&g, &m, mt, &s, REACH_SIGMAS, &b);
    CHECK(isfinite(b.stop_mm) && b.x_hi_mm > g.x.edges[g.nx]);
    free_grid(&g);
    tables_free(&w);
}

int main(int argc, char **argv)
{
    (void)argc;
    test_dense_slab();
    test_water_unchanged();
    test_edges();
    test_spread_out_peak();
    test_reach();
    return check_report(argv[0]);
}
