/* The step log on stdout: a legend once, then a fixed-width line every `every`
 * steps (and after the first and the last), with the latest line redrawn in
 * place in between on a terminal. Snapshot writing is timed apart (write_s)
 * and kept out of ms/step and the ETA, which extrapolate the steps alone: a
 * long write neither inflates the rate nor makes the ETA jump. */
#ifndef SMX_STEP_LOG_H
#define SMX_STEP_LOG_H

typedef struct step_log {
    int expected; /* steps the run is expected to take (simulate_expected_steps) */
    int every; /* a full line every this many steps */
    int tty; /* stdout is a terminal: redraw a progress line in between */
    double t0; /* when stepping began (CLOCK_MONOTONIC, s) */
    double write_s; /* spent writing snapshots since t0 */
    double last_draw; /* when the progress line was last drawn */
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
/* Seconds the steps from `done` to `expected` take at the rate of the first
 * `done` (steps_s of stepping, writes excluded); 0 when none remain or none ran. */
double step_eta_s(double steps_s, int done, int expected);

#endif
