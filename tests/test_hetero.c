/* Heterogeneous media against references computed here from the PSTAR ranges
 * of the materials (no code of the transport is reused):
 *  - a 2 cm slab (compact bone, lung) or a 1 cm air gap in water, 100 and
 *    200 MeV: R80 against PSTAR's published projected range in water
 *    (tests/reference/pstar_water_ranges.txt) less the slab's
 *    water-equivalent thickness excess (WET - t, from the two CSDA range
 *    tables over the slab's actual entrance energy; for compact bone PSTAR's
 *    published ranges, tests/reference/pstar_bone_compact_ranges.txt), so
 *    that a range error shared by water and slab does not cancel: within
 *    SLAB_TOL_SHIFT_MM (0.7 mm) under the shift scheme and
 *    SLAB_TOL_MOMENTS_MM (0.3 mm) under moments (the reasons are at their
 *    definitions). For lung, air and titanium the WET comes from the table
 *    the transport reads, so an error in that table itself would cancel;
 *  - behind the slab, R80 - R20 within 15 % of a homogeneous water run of the
 *    same water-equivalent range (the scheme's numerical energy spread);
 *  - no one-row dose spike at a slab's faces: each row's dose per mass within
 *    3 % of its own side's trend, on rows of 0.25, 0.5 and 1 mm;
 *  - lateral rms width behind a 2 cm bone slab within 5 % of Fermi-Eyges with
 *    Highland's theta_0 over the two media (x/X0 summed over the layers);
 *  - a half-plane interface (bone for x < 0, water for x > 0): the depth dose
 *    of each side ends at that side's own range (R80 within 0.5 mm), no
 *    negative dose, no stripes in the plateau, and the jump in dose (Gy) at
 *    the interface within 3 % of the mass stopping-power ratio;
 *  - every step conserves weight and energy (1e-6).
 * Under the moments scheme (numerics/moments.h), every slab at 100 MeV with
 * its faces (its depth held by the row of the step's midpoint: held by the
 * row of its start, a step through titanium's first row was charged to the
 * water before it, -43 %, and +75 % in the last), R80 within 0.3 mm, and
 * water with +-2 % and +-5 % random density per cell (a CT's noise): R80
 * within 0.05 mm and R80 - R20 within 5 % of clean water; the lung slab on
 * rows and steps of 1.0 and 0.25 mm, R80 within 0.4 mm.
 * The homogeneous water R80 itself is test_range's (PSTAR within 0.2 mm). */
#include <math.h>

#include "check.h"
#include "reference_data.h"
#include "physics/material.h"
#include "physics/material_library.h"
#include "physics/medium.h"
#include "reference_models.h"
#include "report/analysis.h"
#include "sim_fixture.h"

typedef struct slab_case {
    const char *key; /* library material */
    double thickness_mm;
    double rho; /* g/cm3; 0 = the material's nominal density */
} slab_case;

/* A library table, loaded once. */
static int load_material(const char *key, tables *t)
{
    char name[256], path[512];
    smx_error err = { 0 };
    material_library_table_name(key, name, sizeof name);
    snprintf(path, sizeof path, "data/%s", name);
    if (tables_load(t, path, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    return 0;
}

static double material_density(const tables *t)
{
    const material_props *m = material_props_find(t->material);
    return m ? m->density_g_cm3 : NAN;
}

/* Energy (MeV) after L mm of a medium, from its CSDA range table. */
static double energy_after(const tables *t, double rho, double E, double L_mm)
{
    return tables_energy_at_range(t, tables_csda_range(t, E) - L_mm * 0.1 * rho);
}

/* Water-equivalent thickness (mm) of L mm of medium (t, rho) entered at E. */
static double wet_mm(const tables *w, const tables *t, double rho, double E, double L_mm)
{
    double Eo = energy_after(t, rho, E, L_mm);
    return (tables_csda_range(w, E) - tables_csda_range(w, Eo)) * 10.0;
}

/* The same for compact bone from PSTAR's published ranges of bone and water
 * (tests/reference/pstar_bone_compact_ranges.txt, pstar_water_ranges.txt),
 * the entrance energy after z0_mm of water likewise: apart from the library
 * table the transport reads, so that an error in that table or its reader
 * does not cancel. NAN if the files are unreadable or E is outside them. */
static double wet_bone_reference_mm(double rho, double E, double z0_mm, double L_mm)
{
    ref_table b, w;
    if (ref_table_load(&b, "pstar_bone_compact_ranges.txt", 3))
        return NAN;
    if (ref_table_load(&w, "pstar_water_ranges.txt", 4)) {
        ref_table_free(&b);
        return NAN;
    }
    /* Columns: E 0, CSDA range 2 (both files); ascending in both. */
    const double E_in = ref_interp(&w, 2, 0, ref_interp(&w, 0, 2, E, 1) - 0.1 * z0_mm, 1);
    const double E_out = ref_interp(&b, 2, 0, ref_interp(&b, 0, 2, E_in, 1) - 0.1 * rho * L_mm, 1);
    const double wet = 10.0 * (ref_interp(&w, 0, 2, E_in, 1) - ref_interp(&w, 0, 2, E_out, 1));
    ref_table_free(&b);
    ref_table_free(&w);
    return wet;
}

typedef struct geometry {
    int kind; /* 0 water, 1 slab in z, 2 half plane x < 0, 3 noisy water */
    const tables *t; /* the second material */
    double rho;
    double z0_mm, z1_mm; /* slab */
} geometry;

typedef struct run_out {
    double r80, r20;
    double *dose; /* MeV per cell per unit weight (owned) */
    double *rho; /* density per cell */
    grid g;
    int violations;
} run_out;

/* The streaming scheme of every run (run_geo), and its nuclear model (the
 * default, or local where a width is compared with Fermi-Eyges, which has no
 * nuclear halo). */
static const char *run_scheme = "transport.streaming_scheme=shift";
static const char *run_nuclear = "transport.nuclear=halo";

/* Runs a pencil (or broad, sigma_x_mm > 0) beam through geometry geo, on
 * rows and steps of dz mm. */
static int run_geo(double E, const geometry *geo, int nx, double dx, double sigma_x_mm, double dz,
                   run_out *o)
{
    fixture f;
    char e[64], b[64], nzs[64], nxs[64], dxs[64], sx[64], dzs[64], st[64];
    tables w = { 0 };
    if (load_material("water", &w))
        return 1;
    double R_mm = tables_csda_range(&w, E) * 10.0;
    tables_free(&w);
    snprintf(e, sizeof e, "grid.energy.E_max_MeV=%g", E);
    snprintf(b, sizeof b, "beam.energy_MeV=%g", E);
    /* Enough depth for the longest range (a low-density slab adds its deficit). */
    double extra = geo->kind == 1 ? (geo->z1_mm - geo->z0_mm) : 0.0;
    snprintf(nzs, sizeof nzs, "grid.space.nz=%d", (int)((R_mm + extra) / dz) + (int)(10.0 / dz));
    snprintf(nxs, sizeof nxs, "grid.space.nx=%d", nx);
    snprintf(dxs, sizeof dxs, "grid.space.dx_mm=%g", dx);
    snprintf(sx, sizeof sx, "beam.sigma_x_mm=%g", sigma_x_mm);
    snprintf(dzs, sizeof dzs, "grid.space.dz_mm=%g", dz);
    snprintf(st, sizeof st, "transport.step_mm=%g", dz);
    const char *sets[] = { e, b, nzs, nxs, dxs, sx, dzs, st, run_scheme, run_nuclear };
    if (fixture_load(&f, NULL, sets, 10))
        return 1;
    medium_map mm;
    smx_error err = { 0 };
    const uniform_medium water = { "water", f.p.table_path, f.g.density };
    int rc = medium_map_uniform(&mm, (int)f.g.nz, (int)f.g.nx, &water, &err);
    const tables *mt[2] = { &f.t, geo->t };
    if (!rc && geo->kind == 3) {
        /* Water whose density is 1 + rho (k - 4) / 4 in every cell, k in 0..8
         * drawn per cell by a fixed generator: a CT's noise, mean density 1. */
        int meds[9];
        for (int k = 0; k < 9 && !rc; k++)
            if ((meds[k] = medium_map_add_medium(&mm, 0, 1.0 + geo->rho * (k - 4) / 4.0, &err)) < 0)
                rc = 1;
        if (!rc && medium_map_cells(&mm, &err))
            rc = 1;
        uint64_t st = 12345;
        for (int64_t i = 0; !rc && i < f.g.slice; i++) {
            st = st * 6364136223846793005ULL + 1442695040888963407ULL;
            mm.cell[i] = (uint8_t)meds[(st >> 33) % 9];
        }
    } else if (!rc && geo->kind) {
        int mat = medium_map_add_material(&mm, geo->t->material, geo->t->path, &err);
        int med = mat < 0 ? -1 : medium_map_add_medium(&mm, mat, geo->rho, &err);
        if (med < 0 || medium_map_cells(&mm, &err))
            rc = 1;
        for (int z = 0; !rc && z < f.g.nz; z++)
            for (int x = 0; x < f.g.nx; x++) {
                double zc = f.g.z.centres[z], xc = f.g.x.centres[x];
                int in = geo->kind == 1 ? zc > geo->z0_mm && zc < geo->z1_mm : xc < 0.0;
                if (in)
                    mm.cell[(int64_t)z * f.g.nx + x] = (uint8_t)med;
            }
    }
    sim_media media = { &mm, mt, NULL };
    if (!rc)
        rc = simulate(&(sim_input){ &f.p, &f.g, &f.t, &media }, &backend_cpu, NULL, &f.r, &f.err);
    if (rc) {
        fprintf(stderr, "run: %s%s\n", err.msg, f.err.msg);
        medium_map_free(&mm);
        fixture_free(&f);
        return 1;
    }
    double *dd = malloc(f.g.nz * sizeof *dd);
    depth_dose(&f.g, f.r.dose_MeV, dd);
    o->r80 = distal_depth_mm(&f.g, dd, 0.8);
    o->r20 = distal_depth_mm(&f.g, dd, 0.2);
    free(dd);
    o->violations = f.r.conservation_violations;
    o->dose = f.r.dose_MeV;
    f.r.dose_MeV = NULL;
    o->rho = malloc(f.g.slice * sizeof *o->rho);
    for (int64_t i = 0; i < f.g.slice; i++)
        o->rho[i] = mm.media[mm.cell ? mm.cell[i] : 0].density_g_cm3;
    /* Keep the axes: the caller reads positions. */
    o->g = f.g;
    f.g = (grid){ 0 };
    medium_map_free(&mm);
    fixture_free(&f);
    return 0;
}

static void run_free(run_out *o)
{
    free(o->dose);
    free(o->rho);
    grid_free(&o->g);
}

/* ---- slabs: range shift and distal fall-off ------------------------------ */
/* The rows on both sides of each face of a slab (uniform across x): the
 * depth dose per unit mass of each row, sum_x dose / rho, against the line
 * through the two rows beyond it on its own side. Far from the Bragg peak the
 * dose per mass changes smoothly within a medium (under 1 % per mm at 100
 * MeV). Sharing the deposit by length alone put a dense row's energy into the
 * light row before it: the last row of the 100 MeV slabs +4.4 % in lung and
 * 8.8 times in air (capped mass: +0.05 % and +0.12 %). 3 %: what sharing
 * cannot cure, the held medium's stopping power (deposit_path.h): weight held
 * in the first light row that truly lies in the last dense one loses energy
 * at the light rate, so that row is low (compact bone before water at 100
 * MeV: -2.4 %). */
static void interface_rows(const run_out *o, const char *key, double E)
{
    const grid *g = &o->g;
    double *m = calloc(g->nz, sizeof *m);
    int faces[2] = { -1, -1 }, nf = 0;
    for (int z = 0; z < g->nz; z++) {
        const double rho = o->rho[(int64_t)z * g->nx];
        for (int x = 0; x < g->nx; x++)
            m[z] += o->dose[(int64_t)z * g->nx + x] / rho;
        if (z > 0 && rho != o->rho[(int64_t)(z - 1) * g->nx] && nf < 2)
            faces[nf++] = z; /* first row of the new medium */
    }
    for (int f = 0; f < nf; f++) {
        const int z = faces[f];
        /* The last row before the face, extrapolated from the two before it;
         * the first row after, from the two after it. */
        const int zb = z - 1, za = z;
        if (zb < 2 || za + 2 >= g->nz)
            continue;
        const double before = m[zb] / (2.0 * m[zb - 1] - m[zb - 2]) - 1.0;
        const double after = m[za] / (2.0 * m[za + 1] - m[za + 2]) - 1.0;
        printf(
            "%6.0f MeV %-14s face at %6.2f mm: dose per mass of the row before %+.2f %%, after %+.2f %%\n",
            E, key, g->z.edges[z], 100.0 * before, 100.0 * after);
        CHECK_MSG(fabs(before) <= 0.03 && fabs(after) <= 0.03,
                  "%g MeV %s face at %.2f mm: rows %+.2f %% / %+.2f %% off their own side's line",
                  E, key, g->z.edges[z], 100.0 * before, 100.0 * after);
    }
    free(m);
}

/* The faces of the lung slab and the air gap on rows of 0.25 and 1 mm (the
 * slab runs above use 0.5 mm): the sharing must hold on every grid. */
static void faces_on_grids(void)
{
    const slab_case sc[] = { { "lung", 20.0, 0.26 }, { "air", 10.0, 0 } };
    const double dzs[] = { 0.25, 1.0 };
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 2; i++) {
            tables t = { 0 };
            if (load_material(sc[i].key, &t)) {
                CHECK_MSG(0, "table of %s", sc[i].key);
                continue;
            }
            double rho = sc[i].rho > 0.0 ? sc[i].rho : material_density(&t);
            geometry geo = { 1, &t, rho, 20.0, 20.0 + sc[i].thickness_mm };
            run_out o;
            char what[64];
            snprintf(what, sizeof what, "%s, dz %g mm", sc[i].key, dzs[k]);
            if (run_geo(100.0, &geo, 21, 2.0, 0.0, dzs[k], &o) == 0) {
                interface_rows(&o, what, 100.0);
                CHECK_MSG(o.violations == 0, "%s: %d steps broke conservation", what, o.violations);
                run_free(&o);
            } else {
                CHECK_MSG(0, "%s run", what);
            }
            tables_free(&t);
        }
}

/* The bounds of slab_ranges on R80 against PSTAR less the WET excess: the
 * water's own R80 against PSTAR, test_range's 0.2 mm (its reasons), plus the
 * crossing's:
 *  - shift scheme: outside the reference medium a step moves whole energy
 *    bins chosen by the step number, so a crossing's water-equivalent length
 *    is right within one bin, 0.5 mm here (docs/physics.md): 0.7 mm. A 0.5 mm
 *    range error of the opposite sign to the crossing's may pass here; the
 *    moments runs below catch it;
 *  - moments scheme: its energy moments move every crossing exactly, to the
 *    rows' attribution of the faces, 0.1 mm: 0.3 mm (0.4 mm on rows of 1 mm,
 *    where the water's R80 reads between centres 1 mm apart: 0.2 mm more).
 * The fall-off behind the slab against the same beam in water: 15 % under
 * shift (the whole-bin choice's spread), 10 % under moments. */
#define SLAB_TOL_SHIFT_MM 0.7
#define SLAB_TOL_MOMENTS_MM 0.3
static double slab_tol_mm = SLAB_TOL_SHIFT_MM, slab_tol_fall = 0.15;

static void slab_ranges(const tables *w, double E, const slab_case *sc, int n, double dz)
{
    run_out ref;
    geometry water = { 0 };
    CHECK(run_geo(E, &water, 21, 2.0, 0.0, dz, &ref) == 0);
    CHECK(ref.violations == 0);
    const double z0 = 20.0;
    for (int i = 0; i < n; i++) {
        tables t = { 0 };
        if (load_material(sc[i].key, &t)) {
            CHECK_MSG(0, "table of %s", sc[i].key);
            continue;
        }
        double rho = sc[i].rho > 0.0 ? sc[i].rho : material_density(&t);
        geometry geo = { 1, &t, rho, z0, z0 + sc[i].thickness_mm };
        double E_in = energy_after(w, 1.0, E, z0);
        /* Compact bone: PSTAR's published ranges; the other materials (lung is
         * computed, not PSTAR's: data/README.md) from their library tables. */
        double wet = strcmp(sc[i].key, "bone_compact") == 0
                         ? wet_bone_reference_mm(rho, E, z0, sc[i].thickness_mm)
                         : wet_mm(w, &t, rho, E_in, sc[i].thickness_mm);
        double expected = pstar_reference_mm(E, PSTAR_PROJECTED) - (wet - sc[i].thickness_mm);
        double relative = ref.r80 - (wet - sc[i].thickness_mm); /* the crossing's own */
        run_out o;
        if (run_geo(E, &geo, 21, 2.0, 0.0, dz, &o)) {
            CHECK_MSG(0, "%s run", sc[i].key);
            tables_free(&t);
            continue;
        }
        /* The fall-off to compare: the same beam in water. Straggling builds up
         * along the water-equivalent path, which is the same (exactly so for
         * water at another density), so the fall-off after the slab is that of
         * the homogeneous beam; what the slab's scheme adds shows here. */
        double fo = o.r20 - o.r80, fo_h = ref.r20 - ref.r80;
        printf("%6.0f MeV %-14s %5.1f mm rho %.4f dz %.2f: WET %8.3f mm  R80 %8.3f expected %8.3f "
               "diff %+6.3f mm (the crossing's own %+6.3f)  R80-R20 %.3f vs %.3f (%+.1f %%)\n",
               E, sc[i].key, sc[i].thickness_mm, rho, dz, wet, o.r80, expected, o.r80 - expected,
               o.r80 - relative, fo, fo_h, 100.0 * (fo / fo_h - 1.0));
        CHECK_MSG(fabs(o.r80 - expected) <= slab_tol_mm,
                  "%g MeV %s: R80 %.3f mm, PSTAR less the WET excess %.3f mm (limit %.2f)", E,
                  sc[i].key, o.r80, expected, slab_tol_mm);
        /* The numerical energy spread the slab may add: the 15 %. */
        CHECK_MSG(fabs(fo / fo_h - 1.0) <= slab_tol_fall,
                  "%g MeV %s: R80-R20 %.3f mm vs %.3f homogeneous", E, sc[i].key, fo, fo_h);
        CHECK_MSG(o.violations == 0, "%s: %d steps broke conservation", sc[i].key, o.violations);
        interface_rows(&o, sc[i].key, E);
        run_free(&o);
        tables_free(&t);
    }
    run_free(&ref);
}

/* ---- lateral width behind a bone slab --------------------------------- */
/* Highland's theta_0^2 after u mm of the layered medium (water to z0, bone
 * to z1, water beyond): 14.1 MeV (1 + log10(sum x/X0) / 9) squared times the
 * integral of dx / (X0 (p v)^2), both over the layers crossed. */
static double theta0_sq_layers(const tables *w, const tables *b, double rho_b, double X0w,
                               double X0b, double E0, double z0, double z1, double u)
{
    const double m = SMX_PROTON_MASS_MEV;
    const int n = 400;
    double h = u / n, I = 0.0, L = 0.0, E = E0;
    for (int i = 0; i < n && E > 1.0; i++) {
        double zc = (i + 0.5) * h;
        int bone = zc > z0 && zc < z1;
        const tables *t = bone ? b : w;
        double rho = bone ? rho_b : 1.0, X0 = bone ? X0b : X0w;
        double Em = energy_after(t, rho, E, 0.5 * h); /* mid-step energy */
        double pv = Em * (Em + 2.0 * m) / (Em + m);
        I += h * 0.1 * rho / (X0 * pv * pv);
        L += h * 0.1 * rho / X0;
        E = energy_after(t, rho, E, h);
    }
    if (L <= 0.0)
        return 0.0;
    double c = 14.1 * (1.0 + log10(L) / 9.0);
    return c * c * I;
}

static double fe_layers_mm(const tables *w, const tables *b, double rho_b, double E0, double z0,
                           double z1, double z)
{
    const material_props *mw = material_props_find(w->material),
                         *mb = material_props_find(b->material);
    const int n = 200;
    double h = z / n, s = 0.0;
    for (int i = 0; i < n; i++) {
        double u = (i + 0.5) * h;
        s += (z - u) * theta0_sq_layers(w, b, rho_b, mw->X0_g_cm2, mb->X0_g_cm2, E0, z0, z1, u) * h;
    }
    return sqrt(2.0 * s);
}

static void slab_lateral(const tables *w)
{
    tables b = { 0 };
    if (load_material("bone_compact", &b)) {
        CHECK_MSG(0, "bone table");
        return;
    }
    const double E = 200.0, z0 = 20.0, z1 = 40.0;
    double rho = material_density(&b);
    geometry geo = { 1, &b, rho, z0, z1 };
    run_out o;
    run_nuclear = "transport.nuclear=local";
    /* x within +-20 mm, 5 sigma of the widest width read (3.95 mm at 80 % of
     * R80), as test_lateral sizes its domain: the rms of what lies beyond is
     * below 1e-5 of the width. */
    const int failed = run_geo(E, &geo, 81, 0.5, 0.0, 0.5, &o);
    run_nuclear = "transport.nuclear=halo";
    if (failed) {
        CHECK_MSG(0, "lateral run");
        tables_free(&b);
        return;
    }
    const double at[] = { 0.5, 0.8 };
    for (int i = 0; i < 2; i++) {
        double z = at[i] * o.r80;
        double sim = lateral_rms_at(&o.g, o.dose, z);
        double fe = fe_layers_mm(w, &b, rho, E, z0, z1, z);
        printf(
            "lateral, 200 MeV behind 2 cm bone at z = %6.1f mm: rms %.3f mm, Fermi-Eyges %.3f mm (%+.1f %%)\n",
            z, sim, fe, 100.0 * (sim / fe - 1.0));
        /* The target. */
        CHECK_MSG(fabs(sim / fe - 1.0) <= 0.05,
                  "lateral width %.3f mm vs Fermi-Eyges %.3f mm at %.1f mm", sim, fe, z);
    }
    run_free(&o);
    tables_free(&b);
}

/* ---- half-plane interface ------------------------------------------------ */
static void half_plane(const tables *w)
{
    tables b = { 0 };
    if (load_material("bone_compact", &b)) {
        CHECK_MSG(0, "bone table");
        return;
    }
    const double E = test_energy(150.0);
    double rho = material_density(&b);
    geometry geo = { 2, &b, rho, 0, 0 };
    run_out o;
    /* A broad beam (sigma 15 mm) on 1 mm cells: each side far from the
     * interface is a broad field of its own medium. Every figure below is
     * read within 20 mm of the interface; the grid's +-40 mm keeps its sides
     * (where what scatters out is not replaced) 20 mm, five multiple-scattering
     * widths at the end of the range, away from them. */
    if (run_geo(E, &geo, 81, 1.0, 15.0, 0.5, &o)) {
        CHECK_MSG(0, "half-plane runs");
        tables_free(&b);
        return;
    }
    const grid *g = &o.g;
    /* Depth doses of the two sides, 5 to 15 mm from the interface (away from
     * the particles that cross it). */
    double *dd_b = calloc(g->nz, sizeof *dd_b), *dd_w = calloc(g->nz, sizeof *dd_w);
    for (int z = 0; z < g->nz; z++)
        for (int x = 0; x < g->nx; x++) {
            double xc = g->x.centres[x];
            double v = o.dose[(int64_t)z * g->nx + x];
            if (xc < -5.0 && xc > -15.0)
                dd_b[z] += v;
            else if (xc > 5.0 && xc < 15.0)
                dd_w[z] += v;
        }
    double r80_b = distal_depth_mm(g, dd_b, 0.8), r80_w = distal_depth_mm(g, dd_w, 0.8);
    /* Each side's expected R80: Bortfeld's straggled Bragg curve (1997) for the
     * side's CSDA range, its range straggling that of water for the same
     * water-equivalent range, scaled to the medium's length. */
    double Rw = tables_csda_range(w, E), Rb = tables_csda_range(&b, E) / rho; /* cm */
    bragg_figures fw = bortfeld_figures(Rw, bortfeld_sigma_cm(Rw));
    bragg_figures fb = bortfeld_figures(Rb, bortfeld_sigma_cm(Rw) * Rb / Rw);
    double exp_w = 10.0 * fw.r80_cm, exp_b = 10.0 * fb.r80_cm;
    printf(
        "half plane %g MeV: water side R80 %.3f mm (Bortfeld %.3f), bone side %.3f mm (Bortfeld %.3f)\n",
        E, r80_w, exp_w, r80_b, exp_b);
    /* The target: each edge within 0.5 mm. The bone side, where the
     * particles stop outside the reference medium, measured -0.16 mm at 70 MeV
     * and -0.24 mm at 150 MeV (dither_phase.h; the step-indexed sequence it
     * replaced gave -0.94 and -0.88). */
    CHECK_MSG(fabs(r80_w - exp_w) <= 0.5, "water side R80 %.3f vs %.3f", r80_w, exp_w);
    CHECK_MSG(fabs(r80_b - exp_b) <= 0.5, "bone side R80 %.3f vs %.3f", r80_b, exp_b);
    double dmin = 0.0;
    for (int64_t i = 0; i < g->slice; i++)
        dmin = fmin(dmin, o.dose[i]);
    CHECK_MSG(dmin >= 0.0, "negative dose %g", dmin);
    /* Plateau at a quarter of the bone range: dose in Gy (per mass) across x. */
    int zp = (int)(0.25 * exp_b / g->dz);
    const double *row = o.dose + (int64_t)zp * g->nx;
    const double *rr = o.rho + (int64_t)zp * g->nx;
    int ix0 = 0;
    while (ix0 + 1 < g->nx && g->x.centres[ix0 + 1] < 0.0)
        ix0++; /* last bone cell */
    /* No stripes: the second difference of the Gy profile on each side, 5 to
     * 20 mm from the interface, stays below 2 % of the value (a 15 mm Gaussian
     * bends by under 0.5 % per mm^2 there; a stripe pattern by far more). */
    double worst = 0.0;
    for (int x = 1; x < g->nx - 1; x++) {
        double ax = fabs(g->x.centres[x]);
        if (ax < 5.0 || ax > 20.0)
            continue;
        double a = row[x - 1] / rr[x - 1], c = row[x] / rr[x], d = row[x + 1] / rr[x + 1];
        worst = fmax(worst, fabs(a - 2 * c + d) / c);
    }
    printf("plateau at z = %.1f mm: largest second difference %.2e of the dose\n", g->z.centres[zp],
           worst);
    CHECK_MSG(worst < 0.02, "stripes in the plateau: second difference %.3g", worst);
    /* The jump: the Gy dose 10 mm either side (the same fluence of the
     * symmetric beam, away from what scatters across the interface) against
     * the mass stopping-power ratio at the local energy. */
    double Ez = energy_after(w, 1.0, E, g->z.centres[zp]);
    double Eb = energy_after(&b, rho, E, g->z.centres[zp]);
    double ratio_ref = tables_stopping_power(&b, Eb) / tables_stopping_power(w, Ez);
    int xb = 0, xw = 0;
    for (int x = 0; x < g->nx; x++) {
        if (fabs(g->x.centres[x] + 10.0) < fabs(g->x.centres[xb] + 10.0))
            xb = x;
        if (fabs(g->x.centres[x] - 10.0) < fabs(g->x.centres[xw] - 10.0))
            xw = x;
    }
    double gy_b = row[xb] / rr[xb], gy_w = row[xw] / rr[xw];
    printf("interface jump bone/water %.4f (x = %.1f / %.1f mm), mass stopping-power ratio %.4f\n",
           gy_b / gy_w, g->x.centres[xb], g->x.centres[xw], ratio_ref);
    /* 3 %: the fluence on the two sides still differs by what the two media
     * scatter out of the beam and by the non-elastic removal (more per cm in
     * bone). */
    CHECK_MSG(fabs(gy_b / gy_w / ratio_ref - 1.0) <= 0.03, "jump %.4f vs %.4f", gy_b / gy_w,
              ratio_ref);
    CHECK(o.violations == 0);
    free(dd_b);
    free(dd_w);
    run_free(&o);
    tables_free(&b);
}

/* ---- noisy density ------------------------------------------------------- */
/* A CT's noise: water whose density is drawn per cell from 1 +- 2 % (mean 1),
 * so R80 should be water's (the WET noise along a path, 0.07 mm rms, is far
 * below the straggling). Each medium's whole-bin choice has its own phase,
 * and a particle changing medium every row meets phases that do not follow
 * one another: the choices act as if drawn at random, and the range spreads
 * numerically (docs/physics.md, Known defects). Measured at 100 MeV: R80
 * -0.180 mm, R80 - R20 +16 % (+30 %, -0.30 mm at +-5 %). */
/* The clean water it is compared with: run once per scheme (*ref zeroed
 * before the first call, run_free'd by the caller). */
static void noisy_density(double amplitude, double r80_mm, double fall, run_out *clean)
{
    const double E = test_energy(100.0);
    geometry noisy = { 3, NULL, amplitude, 0, 0 }, water = { 0 };
    run_out o;
    if (!clean->dose && run_geo(E, &water, 41, 1.0, 8.0, 0.5, clean)) {
        CHECK_MSG(0, "clean-water run");
        return;
    }
    if (run_geo(E, &noisy, 41, 1.0, 8.0, 0.5, &o)) {
        CHECK_MSG(0, "noisy-density run");
        return;
    }
    const run_out ref = *clean;
    const double fo = o.r20 - o.r80, fo_h = ref.r20 - ref.r80;
    printf("noisy water (1 +- %g %%), %g MeV: R80 %.3f vs %.3f (%+.3f mm), R80-R20 %.3f vs %.3f "
           "(%+.1f %%)\n",
           100.0 * amplitude, E, o.r80, ref.r80, o.r80 - ref.r80, fo, fo_h,
           100.0 * (fo / fo_h - 1.0));
    CHECK_MSG(fabs(o.r80 - ref.r80) <= r80_mm, "noisy water (%g): R80 %+.3f mm from water's",
              amplitude, o.r80 - ref.r80);
    CHECK_MSG(fabs(fo / fo_h - 1.0) <= fall, "noisy water (%g): fall-off %+.1f %% from water's",
              amplitude, 100.0 * (fo / fo_h - 1.0));
    CHECK_MSG(o.violations == 0, "conservation: %d violations", o.violations);
    CHECK_MSG(ref.violations == 0, "clean water: %d violations", ref.violations);
    run_free(&o);
}

/* The cases, each a CTest test of its own (tests/physics.cmake): `test_hetero
 * CASE` runs one, `test_hetero` all. */
int main(int argc, char **argv)
{
    test_cases(argc, argv);
    tables w = { 0 };
    setenv("SMX2D_DATA_DIR", "data", 1);
    if (load_material("water", &w))
        return 1;
    /* Water at another density first: its WET is exactly rho t. */
    /* Lung inflated (0.26 g/cm3), not the library's tissue density (1.05). */
    /* Titanium (a dense implant) at its nominal 4.54 g/cm3 and at 3.0, the two
     * densities whose tables once failed to build. */
    const slab_case slabs[] = { { "water", 20.0, 1.85 }, { "bone_compact", 20.0, 0 },
                                { "lung", 20.0, 0.26 },  { "air", 10.0, 0 },
                                { "titanium", 2.0, 0 },  { "titanium", 2.0, 3.0 } };
    const int nslabs = 6;
    if (test_case("slabs")) {
        slab_ranges(&w, 100.0, slabs, nslabs, 0.5);
        faces_on_grids();
    }
    /* At 200 MeV the two real materials that bracket the densities. */
    if (test_case("slabs_200") && !test_quick())
        slab_ranges(&w, 200.0, slabs + 1, 2, 0.5);
    if (test_case("lateral") && !test_quick())
        slab_lateral(&w);
    if (test_case("half_plane"))
        half_plane(&w);
    /* The shift scheme's whole-bin choice per step and medium: measured
     * -0.08 mm and +16.5 % (docs/physics.md); bounds with a margin. */
    if (test_case("noisy") && !test_quick()) {
        run_out clean = { 0 };
        noisy_density(0.02, 0.15, 0.25, &clean);
        run_free(&clean);
    }
    run_scheme = "transport.streaming_scheme=moments";
    slab_tol_mm = SLAB_TOL_MOMENTS_MM;
    slab_tol_fall = 0.10;
    if (test_case("moments_slabs")) {
        printf("moments scheme:\n");
        slab_ranges(&w, 100.0, slabs, nslabs, 0.5);
    }
    /* The targets: R80 within 0.05 mm and R80 - R20 within 5 % of
     * clean water, at +-2 % and +-5 % per cell (measured +0.017 mm, -0.3 %
     * and +0.031 mm, +3.6 %). */
    if (test_case("moments_noisy")) {
        run_out clean = { 0 };
        noisy_density(0.02, 0.05, 0.05, &clean);
        if (!test_quick())
            noisy_density(0.05, 0.05, 0.05, &clean);
        run_free(&clean);
    }
    if (test_case("moments_lung_grids") && !test_quick()) {
        /* The lung slab on rows and steps of 1.0 and 0.25 mm (fall-off -4.8 %
         * on both): 0.4 mm on 1 mm rows, 0.3 mm on 0.25 mm (above). */
        slab_tol_mm = SLAB_TOL_MOMENTS_MM + 0.1;
        slab_ranges(&w, 100.0, slabs + 2, 1, 1.0);
        slab_tol_mm = SLAB_TOL_MOMENTS_MM;
        slab_ranges(&w, 100.0, slabs + 2, 1, 0.25);
    }
    tables_free(&w);
    return check_report(argv[0]);
}
