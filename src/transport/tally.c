#include "transport/tally.h"

#include <math.h>
#include <string.h>

/* Lower-case snake_case because these names end up as HDF5 attribute values and
 * column headers, where they are matched by scripts. */
const char *const tally_channel_names[CH_COUNT] = {
    "theta_boundary", "theta_cutoff", "energy_stopped",
    "spatial_leak",   "nuclear",      "medium_rounding",
};

void tally_clear(step_tally *t)
{
    memset(t, 0, sizeof *t);
}

void tally_add(step_tally *sum, const step_tally *t)
{
    for (int c = 0; c < CH_COUNT; c++) {
        sum->weight[c] += t->weight[c];
        sum->energy[c] += t->energy[c];
    }
    sum->deposited += t->deposited;
}

/* Relative to the larger of what went in and what came out: a step that starts
 * empty is then measured against what came out, so weight appearing from nothing
 * is still caught. With both empty there is nothing to lose, and the error is 0
 * rather than NaN, which would poison every max() taken over the run. */
static double relative(double residual, double in, double out, double floor)
{
    double scale = fabs(in) > fabs(out) ? fabs(in) : fabs(out);
    scale = scale > floor ? scale : floor;
    return scale > 0.0 ? fabs(residual) / scale : 0.0;
}

void tally_close_balance(step_balance *b, double w0, double e0)
{
    double w = b->weight_in - b->weight_out;
    double e = b->energy_in - b->energy_out - b->t.deposited;
    for (int c = 0; c < CH_COUNT; c++) {
        w -= b->t.weight[c];
        /* A stopped particle's residual energy is deposited where it stops, so it
         * is already inside `deposited`; subtracting it again would count it twice. */
        if (c != CH_ENERGY_STOPPED)
            e -= b->t.energy[c];
    }
    b->weight_rel_err = relative(w, b->weight_in, b->weight_out, SMX_BALANCE_FLOOR * fabs(w0));
    b->energy_rel_err = relative(e, b->energy_in, b->energy_out, SMX_BALANCE_FLOOR * fabs(e0));
}
