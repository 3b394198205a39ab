/* The per-spot runs' progress over a whole job: a robust plan's scenarios
 * (docs/planning.md) are one job of (scenario, spot) pairs, counted by one
 * progress line, "  scenario 2 of 20, spot 400/820: pairs 2040/17220
 * (11.8 %)  58.2 s  35.0 pairs/s  eta 433.0 s", printed at most once a second,
 * at the end of each scenario's spots and after the job's last pair. A field
 * without scenarios keeps "  spot 400/820  12.3 s  32.5 spots/s  eta 12.9 s".
 * The run layer owns the count (it knows the scenarios and, in an MPI job,
 * this rank's share of the pairs); the per-spot runs report their batches.
 *
 * The ETA is the work left at a smoothed rate, plus the time the scenarios
 * still to begin spend outside the per-spot batches (their totals, set-ups
 * and writing), at the mean measured so far. Work is counted in each pair's
 * expected steps (simulate_spot_steps), not in pairs: a scenario's batches
 * run its highest-energy spots first, so pairs alone would make every
 * scenario's start look slow and its end fast. The rate is the step log's
 * smoothed one (step_log.h) whose memory grows with the work measured up to a
 * tenth of the job's: until then it is the mean over the batches so far, so
 * that the first batch (its uploads, caches still cold) weighs only its
 * share, then it follows the recent batches. */
#ifndef SMX_SPOT_PROGRESS_H
#define SMX_SPOT_PROGRESS_H

#include <stdint.h>

typedef struct spot_progress {
    int scenarios; /* the plan's scenarios (with the nominal); 0: a plan without them */
    int scenario; /* the scenario running now (0: the nominal) */
    int scenarios_here; /* scenarios this process runs (a total or pairs of each) */
    int begun; /* of those, begun so far (spot_progress_scenario) */
    int share; /* an MPI rank's share of the pairs: the line says "here" */
    int64_t pairs, done; /* this process's pairs in the job; those done */
    double work, work_done; /* their expected steps in all; of those done */
    int spots, spots_done; /* the current scenario's spots here; those done */
    double t0, last_line; /* when the job began (CLOCK_MONOTONIC, s); the last line */
    double batch_s; /* time spent in per-spot batches */
    double rate_s, measured; /* smoothed seconds per step of work; work measured into it */
} spot_progress;

/* What a job holds for this process: `pairs` pairs of `work` expected steps
 * in all over `scenarios` scenarios (0: a plan without scenarios), of which it
 * runs `scenarios_here` (share: a part of the job's pairs). */
typedef struct spot_progress_size {
    int64_t pairs;
    double work;
    int scenarios, scenarios_here, share;
} spot_progress_size;

/* The count of a job of that size, begun at now. */
void spot_progress_begin(spot_progress *sp, const spot_progress_size *size, double now);
/* Scenario k begins: its total and set-up count as time outside the batches. */
void spot_progress_scenario(spot_progress *sp, int k);
/* The current scenario's per-spot runs begin, `spots` of them here. */
void spot_progress_spots(spot_progress *sp, int spots);
/* A batch of `pairs` pairs and `work` expected steps done in `seconds`. */
void spot_progress_batch(spot_progress *sp, int pairs, double work, double seconds);
/* The ETA in seconds at now: 0 when no pair and no scenario is left, or no
 * rate is known yet. */
double spot_progress_eta(const spot_progress *sp, double now);
/* The line, when a second has passed since the last one or `force`. */
void spot_progress_log(spot_progress *sp, double now, int force);

#endif
