#include "transport/step_log.h"

#include <stdio.h>
#include <unistd.h>

#include "base/error.h"
#include "base/progress.h"

#define STEP_LOG_REDRAW_S 0.2

double step_eta_s(double steps_s, int done, int expected)
{
    if (done <= 0 || expected <= done || steps_s <= 0.0)
        return 0.0;
    return steps_s / done * (expected - done);
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
    /* The leading \r overwrites a redrawn line; only where redrawing is allowed. */
    printf("%s%8d %10.2f %14.6e %10.3f %10.1f %10.1f %10.1f%s", sl->tty ? "\r" : "", done, front_mm,
           weight_left, steps_s * 1e3 / done, now - sl->t0, sl->write_s,
           step_eta_s(steps_s, done, sl->expected), line ? "\n" : "");
    fflush(stdout);
    if (!line)
        sl->last_draw = now;
}
