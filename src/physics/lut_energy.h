/* Energy loss (A_E): slowing down, straggling and non-elastic removal, built once
 * per run.
 *
 * Source bin i (centre E_i) has after one step the mean energy
 * E' = R^-1(R(E_i) - rho ds) from the CSDA range table (exact for any step
 * length), split between the bracketing centres t, t+1 with weight and mean
 * energy kept. With straggling, a share of it goes to t-1 as well: the three
 * weights on t-1, t, t+1 keep weight and mean energy and add the step's
 * straggling variance to the split's own (coeff[i][0..2]). With non-elastic
 * interactions every
 * coefficient is scaled by the survival probability of the step; the weight
 * removed (nuclear_weight) leaves psi, the local share of its energy joins the
 * deposit and the rest (nuclear_energy) is tallied as NUCLEAR. Every target
 * lies at or below its source (t + 1 <= i, as E' < E_i), so A_E can update psi
 * in place walking energy upwards. Below
 * grid.E_stop the particle stops: its whole energy E_i is deposited and its
 * weight tallied as ENERGY_STOPPED.
 *
 * Two equivalent forms of the same coefficients:
 *  - scatter, per source: always valid; the fallback and the oracle;
 *  - gather, per target: at most ENERGY_TARGETS (source, coefficient) pairs
 *    per target, sources ascending, no atomics.
 *    Valid only when E' increases strictly with E (for an ascending grid) and no
 *    target has more sources; otherwise gather_ok = 0 and the backends fall
 *    back to scatter. */
#ifndef SMX_LUT_ENERGY_H
#define SMX_LUT_ENERGY_H

#include <stdint.h>

#include "base/error.h"
#include "physics/grid.h"
#include "physics/tables.h"

/* Targets of one source: t-1, t, t+1. */
#define ENERGY_TARGETS 3

typedef struct energy_gather_entry {
    int32_t src[ENERGY_TARGETS]; /* source bins, ascending */
    float coeff[ENERGY_TARGETS];
    int32_t count; /* 0 .. ENERGY_TARGETS */
} energy_gather_entry;

typedef struct energy_lut {
    int ne;
    /* scatter form, per source bin */
    double *E_after; /* E' (MeV); NAN when stopped */
    int32_t *target; /* bracketing lower bin t, or -1 when stopped */
    float (*coeff)[ENERGY_TARGETS]; /* weight to t-1, t, t+1 (0 outside the grid) */
    double *deposit_MeV; /* per unit weight: E_i - sum_k coeff_k E_k - nuclear_energy, or E_i
                             when stopped */
    double *nuclear_weight; /* per unit weight: removed by non-elastic interactions */
    double *nuclear_energy; /* per unit weight: MeV those carry out of the step's deposit */
    /* transport.nuclear: halo (grid.dose_planes > 1): per unit weight, the
     * MeV of nuclear_energy handed to secondary protons, released into dose
     * plane 1 + release_band (physics/nuclear_halo.h); the rest of
     * nuclear_energy is neutral and leaves. NULL otherwise. */
    double *release_MeV;
    int32_t *release_band; /* -1: nothing released */
    /* gather form, per target bin */
    energy_gather_entry *gather;
    int gather_ok;
    char gather_reason[256]; /* why gather was refused */
} energy_lut;

/* What A_E includes besides the slowing down. */
typedef struct energy_physics {
    int straggling, nuclear;
    double Z_over_A; /* straggling: the material's */
    double (*nonelastic_cm2_g)(double); /* nuclear: the material's cross section */
    /* transport.nuclear: halo: hydrogen nuclei per gram, whose p-p elastic
     * scattering (physics/pp_elastic.h) removes primaries too; 0: none. */
    double h_per_g;
} energy_physics;

/* From the CSDA table and the models of ph (NULL: slowing down only). */
int energy_lut_build(energy_lut *lut, const grid *g, const tables *t, const energy_physics *ph,
                     smx_error *err);
/* One step in a medium, per source bin (ne values in each array): where it
 * lands, E' (NAN or < E_stop = stops); the straggling variance the step adds
 * (MeV^2); the probability of surviving nuclear removal; the share of the
 * removal that is p-p elastic scattering. Read by energy_lut_from_map and
 * energy_dither_lut_build, where a NULL array is none of it: no straggling,
 * all survive, no p-p share. */
typedef struct energy_step_map {
    double *E_after, *var_MeV2, *survival, *pp_share;
} energy_step_map;

/* The plain model of one step in a medium into m's arrays (each ne long;
 * pp_share may be NULL): variance 0 without straggling, survival 1 without
 * nuclear removal, p-p share 0 without it. */
void energy_step_model(const grid *g, const tables *t, const energy_physics *ph,
                       double density_g_cm3, const energy_step_map *m);

/* A_E in a medium other than the grid's reference. There one step does not
 * move a particle a whole number of bins, and the mean-keeping split of the
 * plain table would spread the energy a little more every step (numerical
 * straggling). Instead, in each step the whole weight of a source bin moves
 * to one of the two centres bracketing E' (with the step's straggling about
 * that centre): the lower one in a share p_low of the steps, chosen by a
 * Bresenham sequence over the steps (src/numerics/dither_phase.h) so that any K
 * consecutive steps take it K p_low times within one. A particle crossing the
 * medium then loses its mean residual range within one bin, with no spread
 * added.
 * p_low is measured in the reference table `ref`'s residual range: on a range grid
 * it is the same for every bin of a medium whose stopping power is the
 * reference's times a constant, so all bins choose alike in a step and the
 * distribution moves as a whole. The step's deposit and removal stay the
 * plain table's (the dose has no stripes); the difference between the chosen
 * table's deposit and the plain one is tallied (CH_MEDIUM_ROUNDING). */
/* One (source, table) pair that can reach a target of the whole-bin tables. */
typedef struct energy_candidate {
    int32_t src; /* source bin */
    uint8_t upper; /* 1 = from the upper table */
    float coeff;
} energy_candidate;

typedef struct energy_dither_lut {
    energy_lut lower, upper; /* whole weight to the lower / upper bracketing centre */
    double *p_low; /* [ne] share of steps that take the lower table */
    double *steps; /* [n_steps] the medium's range in steps at each centre, from
                                   the lowest (the sequence's phase, dither_phase.h) */
    int n_steps; /* the grid's bins, or the run's where a per-spot state holds
                    fewer (sim_tables_share_steps) */
    /* Per target t, every (source, table) that can reach it, sources
     * ascending (the lower table's before the upper's for one source):
     * cand[cand_start[t] .. cand_start[t + 1]). A step uses those whose table
     * it chose. How many a target has depends on the medium: six where one
     * step maps the bins one to one (each table reaches three targets), more
     * where the step's map compresses the bins (a stopping-power ratio to the
     * reference that changes with energy, as titanium's at low energy), so
     * the lists are sized from the tables. */
    int32_t *cand_start; /* [ne + 1] */
    energy_candidate *cand; /* [cand_start[ne]] */
    /* Where one step's straggling is wider than three bins can carry (a dense
     * medium on a fine grid), the step adds what they carry: */
    int straggling_limited; /* (source, table) pairs limited; 0 = none */
    double straggling_limit_ratio; /* the largest model variance over the one kept */
    double straggling_limit_E_MeV; /* the lowest source energy limited (NAN: none) */
} energy_dither_lut;

/* From the plain table `mean` of the medium, the reference table (for the
 * shares) and the step's straggling variance and survival in m (its E_after
 * and pp_share are not read: the whole-bin tables land on centres, and the
 * plain table carries the removal's energy). */
int energy_dither_lut_build(energy_dither_lut *d, const grid *g, const energy_lut *mean,
                            const tables *ref, const energy_step_map *m, smx_error *err);
void energy_dither_lut_free(energy_dither_lut *d);
/* 1 when step `step` takes the lower centre for source bin i, over the
 * n_steps centres of d->steps. The CUDA kernels evaluate the same function
 * (dither_phase.h). */
int energy_dither_low(const energy_dither_lut *d, int i, int64_t step);

/* From an explicit step map m (E_after required; under transport.nuclear:
 * halo all of the p-p share's energy goes to the kernel); the tests use it to
 * force a non-monotone map. */
int energy_lut_from_map(energy_lut *lut, const grid *g, const energy_step_map *m, smx_error *err);
void energy_lut_free(energy_lut *lut);

/* Lowest and highest target bins of source i that receive weight; -1 when it
 * stops. */
int energy_lut_low_target(const energy_lut *lut, int i);
int energy_lut_top_target(const energy_lut *lut, int i);

#endif
