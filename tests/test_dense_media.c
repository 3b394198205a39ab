/* Every library material at half, once and twice its nominal density (dense
 * implants such as titanium screws, bone at the limits of a CT calibration,
 * lung to air) builds its energy-loss tables on three grids (0.25, 0.5, 1 mm), and
 * the whole-bin tables' per-target lists hold every (source, table) pair that
 * reaches the target exactly once, sources ascending: the form the CPU and
 * GPU gathers walk (src/physics/lut_energy.h). A fixed list length once made
 * titanium fail here ("receives from more than 6 pairs"); the lists are now
 * sized from the tables, and this test reports the longest one. Where one
 * step straggles more than three bins hold (the densest media on the finest
 * grid) the step adds what they hold and the run warns. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "physics/material.h"
#include "physics/material_library.h"
#include "physics/medium.h"
#include "physics/sim_tables.h"
#include "sim_fixture.h"

static const double DENSITY_FACTORS[] = { 0.5, 1.0, 2.0 };
#define N_FACTORS 3

/* 1 when the pair (i, u) with coefficient c is in target tb's list exactly once. */
static int listed_once(const energy_dither_lut *d, int tb, int i, int u, float c)
{
    int n = 0;
    for (int k = d->cand_start[tb]; k < d->cand_start[tb + 1]; k++)
        n += d->cand[k].src == i && d->cand[k].upper == u && d->cand[k].coeff == c;
    return n == 1;
}

/* The lists of medium m against its two tables; returns the longest list. */
static int check_lists(const sim_tables *s, int m, const char *what)
{
    const energy_dither_lut *d = sim_dither(s, m);
    const int ne = (int)s->g->ne;
    int pairs = 0, missing = 0, unordered = 0;
    for (int i = 0; i < ne; i++)
        for (int u = 0; u < 2; u++) {
            const energy_lut *l = u ? &d->upper : &d->lower;
            if (l->target[i] < 0)
                continue;
            for (int k = 0; k < ENERGY_TARGETS; k++) {
                const float c = l->coeff[i][k];
                if (c == 0.0f)
                    continue;
                pairs++;
                missing += !listed_once(d, l->target[i] - 1 + k, i, u, c);
            }
        }
    for (int tb = 0; tb < ne; tb++)
        for (int k = d->cand_start[tb] + 1; k < d->cand_start[tb + 1]; k++) {
            const energy_candidate *a = &d->cand[k - 1], *b = &d->cand[k];
            unordered += a->src > b->src || (a->src == b->src && a->upper >= b->upper);
        }
    CHECK_MSG(missing == 0, "%s: %d of %d (source, table) pairs not listed exactly once", what,
              missing, pairs);
    CHECK_MSG(unordered == 0, "%s: %d lists not in ascending source order", what, unordered);
    CHECK_MSG(d->cand_start[ne] == pairs, "%s: the lists hold %d pairs, the tables %d", what,
              d->cand_start[ne], pairs);
    int longest = 0;
    for (int tb = 0; tb < ne; tb++)
        longest = d->cand_start[tb + 1] - d->cand_start[tb] > longest
                      ? d->cand_start[tb + 1] - d->cand_start[tb]
                      : longest;
    return longest;
}

/* One material at one density in a water map, on the fixture's grid: the
 * tables build, and their lists are complete. */
static void one_medium(const fixture *f, const char *label, const char *key, double rho,
                       int nominal)
{
    smx_error err = { 0 };
    medium_map mm;
    tables t = { 0 };
    char name[256], path[512], what[160];
    material_library_table_name(key, name, sizeof name);
    snprintf(path, sizeof path, "data/%s", name);
    snprintf(what, sizeof what, "%s, %s at %.4g g/cm3", label, key, rho);
    const tables *mt[2] = { &f->t, &t };
    const uniform_medium water = { "water", f->p.table_path, f->g.density };
    int rc = tables_load(&t, path, &err) ||
             medium_map_uniform(&mm, (int)f->g.nz, (int)f->g.nx, &water, &err);
    if (rc) {
        CHECK_MSG(0, "%s: %s", what, err.msg);
        tables_free(&t);
        return;
    }
    const int mat = medium_map_add_material(&mm, key, path, &err);
    rc = mat < 0 || medium_map_add_medium(&mm, mat, rho, &err) < 0 || medium_map_cells(&mm, &err);
    /* Water (medium 0's material) is listed once: its table is the fixture's. */
    if (!rc && mat == 0)
        mt[1] = &f->t;
    sim_tables s;
    if (!rc && !(rc = sim_tables_build(&s, &f->p, &f->g, &f->t, &err))) {
        rc = sim_tables_set_media(&s, &mm, mt, NULL, &err);
        CHECK_MSG(rc == 0, "%s: %s", what, err.msg);
        if (!rc) {
            const int longest = check_lists(&s, s.n_media - 1, what);
            /* Six where one step maps bins one to one; more where the step's
             * map compresses them: any count is legitimate, printed for the record. */
            const energy_dither_lut *d = sim_dither(&s, s.n_media - 1);
            printf("%-50s longest list %d", what, longest);
            if (d->straggling_limited)
                printf(", straggling limited from %.4g MeV (x%.2f)", d->straggling_limit_E_MeV,
                       d->straggling_limit_ratio);
            printf("\n");
            /* At its nominal density every material's straggling fits these
             * grids' bins: a limit there would mean the tables lost physics. */
            CHECK_MSG(!nominal || !d->straggling_limited,
                      "%s: straggling limited at the nominal density", what);
        }
        sim_tables_free(&s);
    } else if (rc) {
        CHECK_MSG(0, "%s: %s", what, err.msg);
    }
    medium_map_free(&mm);
    tables_free(&t);
}

/* Every library material at every density factor, on one grid. */
static void all_materials(const char *label, const char *const *sets, int nsets)
{
    fixture f;
    if (fixture_load(&f, NULL, sets, nsets)) {
        CHECK_MSG(0, "%s: fixture", label);
        return;
    }
    for (int k = 0; k < MATERIAL_LIBRARY_N; k++) {
        const char *key = material_library_key(k);
        const double rho0 = material_library_props(key)->density_g_cm3;
        for (int q = 0; q < N_FACTORS; q++)
            one_medium(&f, label, key, rho0 * DENSITY_FACTORS[q], DENSITY_FACTORS[q] == 1.0);
    }
    fixture_free(&f);
}

int main(int argc, char **argv)
{
    (void)argc;
    /* The default grid up to the highest clinical energy, a coarse one (1 mm
     * steps: wider bins, more of them sharing a bracket) and a fine one
     * (0.25 mm: narrow bins against one step's straggling). */
    const char *fine[] = { "grid.energy.E_max_MeV=230", "beam.energy_MeV=230" };
    const char *coarse[] = { "grid.energy.E_max_MeV=120", "beam.energy_MeV=120",
                             "transport.step_mm=1", "grid.space.dz_mm=1", "grid.space.dx_mm=1" };
    all_materials("0.5 mm to 230 MeV", fine, 2);
    all_materials("1 mm to 120 MeV", coarse, 5);
    const char *finest[] = { "grid.energy.E_max_MeV=230", "beam.energy_MeV=230",
                             "transport.step_mm=0.25", "grid.space.dz_mm=0.25",
                             "grid.space.dx_mm=0.25" };
    all_materials("0.25 mm to 230 MeV", finest, 5);
    return check_report(argv[0]);
}
