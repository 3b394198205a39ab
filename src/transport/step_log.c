#include "transport/step_log.h"

#include <stdio.h>
#include <unistd.h>

#include "base/error.h"
#include "base/progress.h"

#define STEP_LOG_REDRAW_S 0.2

double step_eta_s(double rate_s, int done, int expected)
{
    if (done < 0 || expected <= done || !(rate_s > 0.0))
        return 0.0;
    return rate_s * (expected - done);
}

int step_log_horizon(int done, int expected)
{
    if (done < expected)
        return expected;
    int tenth = expected >= 10 ? expected / 10 : 1;
    return expected + ((done - expected) / tenth + 1) * tenth;
}

double step_rate_update(double rate_s, int steps, double seconds, double memory)
{
    if (steps <= 0 || !(seconds >= 0.0))
        return rate_s;
    const double now = seconds / steps;
    if (!(rate_s > 0.0))
        return now;
    /* Weighted by the steps measured: a batch of many steps counts for more. */
    const double a = steps / (steps + (memory > 1.0 ? memory : 1.0));
    return rate_s + a * (now - rate_s);
}

void step_log_begin(step_log *sl, int expected, int every, double now)
{
    *sl = (step_log){ .expected = expected,
                      .every = every > 0 ? every : 1,
                      .tty = progress_terminal(),
                      .t0 = now,
                      .last_draw = now };
    smx_info("%8s %10s %14s %10s %10s %10s %10s\n", "step", "front_mm", "weight_left", "ms/step",
             "elapsed_s", "write_s", "eta_s");
}

void step_log_wrote(step_log *sl, double seconds)
{
    sl->write_s += seconds;
}

double step_log_steps_s(const step_log *sl, double now)
{
    double s = now - sl->t0 - sl->write_s;
    return s > 0.0 ? s : 0.0;
}

void step_log_step(step_log *sl, int done, double front_mm, double weight_left, int last,
                   double now)
{
    if (smx_quiet || done <= 0)
        return;
    int line = last || done == 1 || done % sl->every == 0;
    if (!line && !(sl->tty && now - sl->last_draw > STEP_LOG_REDRAW_S))
        return;
    double steps_s = step_log_steps_s(sl, now);
    /* Steps collected in a batch share one clock reading: the rate moves
     * when the clock does. Its memory is a tenth of the run (at least 4 steps). */
    if (done > sl->rate_at && steps_s > sl->rate_at_s) {
        const double memory = sl->expected >= 40 ? 0.1 * sl->expected : 4.0;
        sl->rate_s =
            step_rate_update(sl->rate_s, done - sl->rate_at, steps_s - sl->rate_at_s, memory);
        sl->rate_at = done;
        sl->rate_at_s = steps_s;
    }
    const double eta =
        last ? 0.0 : step_eta_s(sl->rate_s, done, step_log_horizon(done, sl->expected));
    /* The leading \r overwrites a redrawn line; only where redrawing is allowed. */
    printf("%s%8d %10.2f %14.6e %10.3f %10.1f %10.1f %10.1f%s", sl->tty ? "\r" : "", done, front_mm,
           weight_left, steps_s * 1e3 / done, now - sl->t0, sl->write_s, eta, line ? "\n" : "");
    fflush(stdout);
    if (!line)
        sl->last_draw = now;
}
