/* The step log on stdout: a legend once, then a fixed-width line every `every`
 * steps (and after the first and the last), with the latest line redrawn in
 * place in between on a terminal. Snapshot writing is timed apart (write_s)
 * and kept out of ms/step and the ETA, which extrapolate the steps alone: a
 * long write neither inflates the rate nor makes the ETA jump.
 *
 * The ETA multiplies the steps left by a smoothed recent time per step, not
 * the mean since the start: a step's cost follows the beam (few rows early,
 * the whole spread-out beam later), so the mean of the cheap first steps
 * underestimates the rest. Steps left are those of the expected count; a run
 * that outlives it (a path through media lighter than the reference) is
 * given another tenth of the count at a time, so the ETA never reads 0
 * while steps remain to be taken. */
#ifndef SMX_STEP_LOG_H
#define SMX_STEP_LOG_H

typedef struct step_log {
    int expected; /* steps the run is expected to take (simulate_expected_steps) */
    int every; /* a full line every this many steps */
    int tty; /* stdout is a terminal: redraw a progress line in between */
    double t0; /* when stepping began (CLOCK_MONOTONIC, s) */
    double write_s; /* spent writing snapshots since t0 */
    double last_draw; /* when the progress line was last drawn */
    double rate_s; /* smoothed seconds per step (0 until measured) */
    double rate_at_s; /* steps_s when rate_s was last updated */
    int rate_at; /* steps done then */
} step_log;

/* Prints the legend; t0 = now. */
void step_log_begin(step_log *sl, int expected, int every, double now);
/* Adds `seconds` of snapshot writing (excluded from the step time). */
void step_log_wrote(step_log *sl, double seconds);
/* Seconds spent stepping since t0: the wall time less the writing. */
double step_log_steps_s(const step_log *sl, double now);
/* Logs the state after `done` steps (last: the run's final step, always a line). */
void step_log_step(step_log *sl, int done, double front_mm, double weight_left, int last,
                   double now);
/* Seconds the steps from `done` to `expected` take at `rate_s` seconds a
 * step; 0 when none remain or no rate is known. */
double step_eta_s(double rate_s, int done, int expected);
/* The steps the ETA counts on after `done`: `expected`, or past it the next
 * multiple of a tenth of it (at least one step more than done). */
int step_log_horizon(int done, int expected);
/* The smoothed rate after `steps` more steps took `seconds`: an exponential
 * average whose memory is `memory` steps (the first measurement is taken as
 * it is). */
double step_rate_update(double rate_s, int steps, double seconds, double memory);

#endif
