/* The step log and the run's phases keep snapshot writing apart from the
 * steps: the ETA and ms/step extrapolate the stepping alone, so a slow write
 * neither makes the ETA jump nor shows up as slow steps (src/transport/step_log.c,
 * simulate.c). Three parts: the ETA function; the log's arithmetic on a made-up
 * clock; a CPU run with a snapshot sink that sleeps, checked through identities
 * that hold however fast the machine steps (a loaded machine steps slowly). */
#include "check.h"
#include "sim_fixture.h"
#include "transport/spot_progress.h"
#include "transport/step_log.h"

#include <fcntl.h>
#include <time.h>

/* Each write sleeps this long. */
#define WRITE_S 0.25

static int slow_writes = 0;

static int slow_sink(void *ctx, const grid *g, int step, const float *psi, smx_error *err)
{
    (void)ctx, (void)g, (void)step, (void)psi, (void)err;
    struct timespec ts = { 0, (long)(WRITE_S * 1e9) };
    while (nanosleep(&ts, &ts) != 0)
        ;
    slow_writes++;
    return 0;
}

static double phase(const run_result *r, const char *name)
{
    for (int i = 0; i < r->n_phases; i++)
        if (strcmp(r->phase_name[i], name) == 0)
            return r->phase_s[i];
    return -1.0;
}

/* stdout into a temporary file between capture_begin and capture_end. */
static char cap_path[64];
static int cap_saved = -1;

static void capture_begin(void)
{
    snprintf(cap_path, sizeof cap_path, "/tmp/smx_step_log_XXXXXX");
    int fd = mkstemp(cap_path);
    CHECK(fd >= 0);
    fflush(stdout);
    cap_saved = dup(STDOUT_FILENO);
    dup2(fd, STDOUT_FILENO);
    close(fd);
    smx_quiet = 0;
}

static FILE *capture_end(void)
{
    fflush(stdout);
    dup2(cap_saved, STDOUT_FILENO);
    close(cap_saved);
    smx_quiet = 1;
    FILE *f = fopen(cap_path, "r");
    unlink(cap_path);
    return f;
}

typedef struct log_line {
    int step;
    double front, weight_left, ms, elapsed, write_s, eta;
} log_line;

/* The next step line of a captured log; 0 at the end. */
static int next_line(FILE *f, log_line *l)
{
    char buf[256];
    while (f && fgets(buf, sizeof buf, f))
        if (sscanf(buf, "%d %lf %lf %lf %lf %lf %lf", &l->step, &l->front, &l->weight_left, &l->ms,
                   &l->elapsed, &l->write_s, &l->eta) == 7)
            return 1;
    return 0;
}

static void eta_function(void)
{
    CHECK_REL(step_eta_s(0.1, 10, 30), 2.0, 1e-15); /* 0.1 s a step, 20 left */
    CHECK(step_eta_s(0.1, 30, 30) == 0.0);
    CHECK(step_eta_s(0.1, 31, 30) == 0.0); /* ran past the count given */
    CHECK(step_eta_s(0.0, 0, 30) == 0.0); /* no rate measured yet */
    /* Past the expected count the horizon moves on by a tenth of it. */
    CHECK(step_log_horizon(5, 30) == 30);
    CHECK(step_log_horizon(30, 30) == 33);
    CHECK(step_log_horizon(32, 30) == 33);
    CHECK(step_log_horizon(33, 30) == 36);
    CHECK(step_log_horizon(5, 5) == 6);
    /* The rate: the first measurement as it is, then an average whose
     * memory is in steps (a batch of k steps moves it by k / (k + memory)). */
    CHECK_REL(step_rate_update(0.0, 10, 1.0, 4.0), 0.1, 1e-15);
    CHECK_REL(step_rate_update(0.1, 1, 0.2, 4.0), 0.12, 1e-15);
    CHECK_REL(step_rate_update(0.1, 4, 0.8, 4.0), 0.15, 1e-15);
    CHECK(step_rate_update(0.1, 0, 1.0, 4.0) == 0.1);
}

/* The per-spot pairs' count (transport/spot_progress.h) on a made-up clock:
 * 2 scenarios of 10 pairs of 10 expected steps, each scenario's total taking
 * 2 s before its spots. The first batch (1 pair, 5 s: its uploads) weighs
 * only its share: after a second of 1 s the rate is the mean, 6 s over 20
 * steps, not the first batch's 0.5 s a step. A scenario still to begin adds
 * the time the begun ones spent outside their batches. */
static void spot_progress_counts_the_job(void)
{
    spot_progress sp;
    spot_progress_begin(&sp, &(spot_progress_size){ 20, 200.0, 2, 2, 0 }, 0.0);
    spot_progress_scenario(&sp, 0);
    spot_progress_spots(&sp, 10);
    spot_progress_batch(&sp, 1, 10.0, 5.0);
    CHECK_REL(sp.rate_s, 0.5, 1e-15);
    spot_progress_batch(&sp, 1, 10.0, 1.0);
    CHECK_REL(sp.rate_s, 0.3, 1e-15);
    CHECK(sp.done == 2 && sp.spots_done == 2);
    /* At t = 8 s: 180 steps left at 0.3 s, and scenario 1's 2 s outside. */
    CHECK_REL(spot_progress_eta(&sp, 8.0), 180 * 0.3 + 2.0, 1e-12);
    spot_progress_batch(&sp, 8, 80.0, 8.0);
    spot_progress_scenario(&sp, 1);
    spot_progress_spots(&sp, 10);
    CHECK(sp.spots_done == 0 && sp.done == 10);
    /* Every scenario begun: only the pairs are left. */
    CHECK_REL(spot_progress_eta(&sp, 18.0), 100 * sp.rate_s, 1e-12);
    spot_progress_batch(&sp, 10, 100.0, 10.0);
    CHECK(sp.done == 20 && spot_progress_eta(&sp, 30.0) == 0.0);
    /* An MPI rank 0 past its last pair still runs the totals of the
     * scenarios after it: 4 s outside in 1 scenario begun, 1 to begin. */
    spot_progress_begin(&sp, &(spot_progress_size){ 2, 20.0, 3, 2, 1 }, 0.0);
    spot_progress_scenario(&sp, 0);
    spot_progress_spots(&sp, 2);
    spot_progress_batch(&sp, 2, 20.0, 2.0);
    CHECK_REL(spot_progress_eta(&sp, 6.0), 4.0, 1e-12);
}

/* Steps that slow down as the beam spreads: 10 steps of 0.1 s, then 10 of
 * 0.3 s, of 40 expected. The mean since the start (0.2 s) would give 4 s
 * for the 20 left; the recent rate gives near 6 s. Then the run goes past
 * its count (steps 41 to 45): the ETA stays above 0 until the last line. */
static void eta_follows_the_recent_rate(void)
{
    capture_begin();
    step_log sl;
    step_log_begin(&sl, 40, 1, 0.0);
    double t = 0.0;
    for (int k = 1; k <= 45; k++) {
        t += k <= 10 ? 0.1 : 0.3;
        step_log_step(&sl, k, 0.5 * k, 1.0, k == 45, t);
    }
    FILE *f = capture_end();
    log_line l;
    int n = 0;
    while (next_line(f, &l)) {
        n++;
        if (l.step == 20)
            CHECK_MSG(l.eta >= 5.0 && l.eta <= 6.05, "step 20: eta %.2f s, expected about 6 s",
                      l.eta);
        if (l.step > 40 && l.step < 45)
            CHECK_MSG(l.eta > 0.0, "step %d, past the expected 40: eta %.2f s", l.step, l.eta);
        if (l.step == 45)
            CHECK(l.eta == 0.0);
    }
    if (f)
        fclose(f);
    CHECK(n == 45);
}

/* 20 steps expected, 10 ms each, and a 5 s write between steps 2 and 3. */
static void log_on_a_made_up_clock(void)
{
    capture_begin();
    step_log sl;
    step_log_begin(&sl, 20, 1, 100.0);
    step_log_step(&sl, 1, 0.25, 1.0, 0, 100.01);
    step_log_step(&sl, 2, 0.75, 1.0, 0, 100.02);
    step_log_wrote(&sl, 5.0);
    step_log_step(&sl, 3, 1.25, 1.0, 0, 105.03);
    FILE *f = capture_end();
    log_line l[3];
    int n = 0;
    while (n < 3 && next_line(f, &l[n]))
        n++;
    if (f)
        fclose(f);
    CHECK(n == 3);
    if (n < 3)
        return;
    CHECK(l[1].step == 2 && l[2].step == 3);
    CHECK_ABS(l[1].ms, 10.0, 5e-4); /* printed with 3 decimals */
    CHECK_ABS(l[2].ms, 10.0, 5e-4); /* the write is not a slow step */
    CHECK_ABS(l[2].elapsed, 5.0, 0.05); /* wall time, printed with 1 decimal */
    CHECK_ABS(l[2].write_s, 5.0, 0.05);
    CHECK_ABS(l[1].eta, 0.18, 0.05); /* 18 steps left at 10 ms */
    CHECK_ABS(l[2].eta, 0.17, 0.05); /* not 5.03 s / 3 * 17 = 28.5 s */
}

int main(int argc, char **argv)
{
    (void)argc;
    eta_function();
    log_on_a_made_up_clock();
    eta_follows_the_recent_rate();
    spot_progress_counts_the_job();

    /* 30 MeV in 12 mm of water: about 20 steps. Snapshots at 2, 4, 6 are
     * written during the loop (each when the next is taken), 8 after it. */
    const char *sets[] = { "beam.energy_MeV=30",   "grid.energy.E_max_MeV=30",
                           "grid.space.nx=21",     "grid.space.nz=24",
                           "grid.angle.n_bins=15", "grid.angle.half_width_deg=14",
                           "output.log_every=1",   "output.snapshot_steps=[2,4,6,8]" };
    fixture f;
    if (fixture_load(&f, NULL, sets, (int)(sizeof sets / sizeof sets[0])))
        return 1;
    const int expected = simulate_expected_steps(&f.p, &f.g, &f.t);

    capture_begin();
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    snapshot_sink sink = { slow_sink, NULL };
    int rc = simulate(&(sim_input){ &f.p, &f.g, &f.t, NULL }, &backend_cpu, &sink, &f.r, &f.err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    FILE *log = capture_end();
    const double wall = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
    CHECK_MSG(rc == 0, "%s", f.err.msg);
    CHECK(slow_writes == 4);

    /* Phases: the writes are "snapshots" only. Counted in "steps" as well,
     * the phases would add up to more than the wall time by the 0.75 s of
     * the three writes inside the loop. */
    double steps = phase(&f.r, "steps"), snaps = phase(&f.r, "snapshots"), total = 0.0;
    for (int i = 0; i < f.r.n_phases; i++)
        total += f.r.phase_s[i];
    CHECK_MSG(snaps >= 4 * WRITE_S, "snapshots phase %.3f s, 4 writes of %.2f s", snaps, WRITE_S);
    CHECK_MSG(steps >= 0.0, "no steps phase");
    CHECK_MSG(total <= wall + 1e-3, "phases add up to %.3f s, the run took %.3f s", total, wall);
    /* The per-step times cover the loop less its writes: at most the steps phase. */
    double sum_ms = 0.0;
    for (int i = 0; i < f.r.n_steps; i++)
        sum_ms += f.r.step_ms[i];
    CHECK_MSG(sum_ms <= 1e3 * steps + 1e-6, "step_ms sums to %.1f ms, the steps phase is %.1f ms",
              sum_ms, 1e3 * steps);

    /* The log: on every line ms/step covers the elapsed time less the
     * writing, the ETA is positive until the last line (0 there) and no more
     * than the steps left times the slowest rate the log has shown (the
     * writes stay out of it), and write_s reaches the three in-loop writes.
     * Printed rounding: elapsed and write_s 0.05 s each, eta 0.05 s,
     * ms/step 5e-4 ms. */
    log_line l;
    int lines = 0, last_step = 0;
    double last_write = -1.0, prev_elapsed = 0.0, prev_write = 0.0, slowest = 0.0;
    int prev_step = 0;
    while (next_line(log, &l)) {
        lines++;
        last_step = l.step;
        last_write = l.write_s;
        CHECK_MSG(fabs(l.elapsed - l.write_s - l.ms * l.step * 1e-3) <= 0.1 + 1e-6 * l.step,
                  "step %d: ms/step %.3f x steps is not elapsed %.1f - write %.1f s", l.step, l.ms,
                  l.elapsed, l.write_s);
        const double between = (l.elapsed - prev_elapsed) - (l.write_s - prev_write);
        if (l.step > prev_step && between / (l.step - prev_step) > slowest)
            slowest = between / (l.step - prev_step);
        const int left = step_log_horizon(l.step, expected) - l.step;
        CHECK_MSG(l.eta <= (slowest + 0.1) * left + 0.05,
                  "step %d: eta %.1f s for %d steps left, the slowest rate %.3f s", l.step, l.eta,
                  left, slowest);
        CHECK_MSG(l.step == f.r.n_steps ? l.eta == 0.0 : l.eta >= 0.0, "step %d: eta %.1f s",
                  l.step, l.eta);
        prev_step = l.step, prev_elapsed = l.elapsed, prev_write = l.write_s;
    }
    if (log)
        fclose(log);
    CHECK_MSG(lines == f.r.n_steps && last_step == f.r.n_steps,
              "%d log lines, last step %d, %d steps", lines, last_step, f.r.n_steps);
    CHECK_MSG(last_write >= 3 * WRITE_S - 0.05, "write_s ends at %.1f s", last_write);

    fixture_free(&f);
    return check_report(argv[0]);
}
