#include "transport/spot_progress.h"

#include "base/error.h"
#include "transport/step_log.h"

#define SPOT_PROGRESS_PERIOD_S 1.0

void spot_progress_begin(spot_progress *sp, const spot_progress_size *size, double now)
{
    *sp = (spot_progress){ .scenarios = size->scenarios,
                           .scenarios_here = size->scenarios_here > 1 ? size->scenarios_here : 1,
                           .share = size->share,
                           .pairs = size->pairs,
                           .work = size->work,
                           .t0 = now,
                           .last_line = now };
}

void spot_progress_scenario(spot_progress *sp, int k)
{
    sp->scenario = k;
    sp->begun++;
}

void spot_progress_spots(spot_progress *sp, int spots)
{
    sp->spots = spots;
    sp->spots_done = 0;
    if (sp->begun == 0) /* a field alone: its one scenario begins with its spots */
        sp->begun = 1;
}

void spot_progress_batch(spot_progress *sp, int pairs, double work, double seconds)
{
    sp->done += pairs;
    sp->spots_done += pairs;
    sp->work_done += work;
    sp->batch_s += seconds;
    const int w = work >= 1.0 ? (int)work : 1;
    /* The memory grows with the work measured (a mean over the batches so
     * far) up to a tenth of the job's, then the rate follows the recent ones. */
    const double tenth = 0.1 * sp->work;
    const double memory = sp->measured < tenth ? sp->measured : tenth;
    sp->rate_s = step_rate_update(sp->rate_s, w, seconds, memory);
    sp->measured += w;
}

double spot_progress_eta(const spot_progress *sp, double now)
{
    if (!(sp->rate_s > 0.0))
        return 0.0;
    double eta = 0.0;
    if (sp->done < sp->pairs) {
        double left = sp->work - sp->work_done;
        /* A pair's expected steps are at least one: never 0 while pairs remain. */
        if (left < (double)(sp->pairs - sp->done))
            left = (double)(sp->pairs - sp->done);
        eta = left * sp->rate_s;
    }
    /* The scenarios still to begin (an MPI rank 0 runs every scenario's
     * total, past its last pair): their totals and set-ups at the mean time
     * each begun one spent outside the batches. */
    const int to_begin = sp->scenarios_here - sp->begun;
    const double outside = now - sp->t0 - sp->batch_s;
    if (to_begin > 0 && sp->begun > 0 && outside > 0.0)
        eta += outside / sp->begun * to_begin;
    return eta;
}

void spot_progress_log(spot_progress *sp, double now, int force)
{
    if (!force && now - sp->last_line <= SPOT_PROGRESS_PERIOD_S)
        return;
    sp->last_line = now;
    const double el = now - sp->t0;
    const double per_s = el > 0.0 ? sp->done / el : 0.0;
    const double eta = spot_progress_eta(sp, now);
    const char *here = sp->share ? " here" : "";
    if (!sp->scenarios) {
        smx_info("  spot %d/%d  %.1f s  %.1f spots/s  eta %.1f s\n", sp->spots_done, sp->spots, el,
                 per_s, eta);
        return;
    }
    const double pct = sp->pairs > 0 ? 100.0 * sp->done / sp->pairs : 100.0;
    smx_info("  scenario %d of %d, spot %d/%d%s: pairs %lld/%lld%s (%.1f %%)  %.1f s  %.1f "
             "pairs/s  eta %.1f s\n",
             sp->scenario, sp->scenarios - 1, sp->spots_done, sp->spots, here, (long long)sp->done,
             (long long)sp->pairs, here, pct, el, per_s, eta);
}
