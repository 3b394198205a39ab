/* What the layers above input/ read of a loaded plan besides its fields: its
 * spots, the rules the reader and the builders share (the cells of a range,
 * the top of a spectrum), the names of its choices. Each is a computation on
 * the plan's data alone, inline here, so that physics/ and transport/ read the
 * plan without calling into the reader (docs/architecture.md: errors and
 * lookups that need the reader happen where the plan is owned). */
#ifndef SMX_PLAN_ACCESS_H
#define SMX_PLAN_ACCESS_H

#include "input/plan.h"

/* The field's spots: the spot file's, or one from the beam.* keys as they are
 * now. */
static inline int plan_spot_count(const plan *p)
{
    return p->spots_file[0] ? p->n_spots : 1;
}

/* The spot of the beam.* keys (also every column's default in a spot file). */
static inline plan_spot plan_beam_spot(const plan *p)
{
    return (plan_spot){ p->beam_energy_MeV,
                        p->beam_energy_sigma_MeV,
                        p->beam_direction_deg,
                        p->beam_x_mm,
                        p->beam_sigma_x_mm,
                        p->beam_divergence_mrad,
                        p->beam_correlation,
                        p->beam_weight,
                        0,
                        { 0 } };
}

static inline plan_spot plan_spot_at(const plan *p, int i)
{
    return p->spots_file[0] ? p->spots[i] : plan_beam_spot(p);
}

/* The highest spot energy (the differential Highland scattering power's
 * reference energy, docs/physics.md). */
static inline double plan_reference_energy_MeV(const plan *p)
{
    double e = 0.0;
    for (int i = 0; i < plan_spot_count(p); i++) {
        double v = plan_spot_at(p, i).energy_MeV;
        e = v > e ? v : e;
    }
    return e;
}

/* The top of a spot's energy spectrum that the grid must hold: its energy
 * plus PLAN_SPECTRUM_SIGMAS energy spreads. The one rule behind the grid a
 * plan without grid.energy.E_max_MeV gets and the check of one that has it. */
#define PLAN_SPECTRUM_SIGMAS 4.0
static inline double plan_spectrum_top_MeV(const plan_spot *s)
{
    return s->energy_MeV + PLAN_SPECTRUM_SIGMAS * s->energy_sigma_MeV;
}

/* An axis of n cells of width d starting at origin. */
typedef struct plan_axis {
    double origin, d;
    int n;
} plan_axis;

/* The cells [*first, *last] of axis a whose centre c = origin + d (i + 0.5)
 * satisfies lo <= c < hi (the same expression as the grid's centres, so the
 * plan check and the map builder agree on every cell). Returns 0 when no
 * centre is inside. */
static inline int plan_axis_cells(const plan_axis *a, double lo, double hi, int *first, int *last)
{
    *first = -1;
    *last = -2;
    for (int i = 0; i < a->n; i++) {
        double c = a->origin + a->d * (i + 0.5);
        if (lo <= c && c < hi) {
            if (*first < 0)
                *first = i;
            *last = i;
        }
    }
    return *first >= 0;
}

/* The early exit's threshold of each spot's own run (output.per_spot_dose),
 * tied to what its row keeps: output.per_spot_early_exit_ratio times
 * output.per_spot_threshold, scaled by the phase-space cell a psi value
 * holds (dx dz ds against 0.5 mm cubed), never below
 * backend.early_exit_threshold (the field's total keeps that). A psi value
 * is a cell's weight: halving dx, dz and the step spreads a spot over eight
 * times the values, and a fixed threshold then dropped eight times more of
 * the row's dose (measured at 1.0, 0.5 and 0.25 mm:
 * docs/accuracy-and-speed.md). */
static inline double plan_spot_early_exit(const plan *p)
{
    const double cell = p->dx_mm * p->dz_mm * p->step_mm / (0.5 * 0.5 * 0.5);
    const double tied = p->per_spot_early_exit_ratio * p->per_spot_threshold * cell;
    return tied > p->early_exit_threshold ? tied : p->early_exit_threshold;
}

#endif
