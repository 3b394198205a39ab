/* Conservation: the weight and energy identities of docs/physics.md hold to
 * 1e-6 relative at every step, in window and full angular modes, on both
 * energy grids, both streaming schemes and every operator variant, with weight
 * leaving through every channel. Also: steps: auto stops where it should. */
#include <math.h>

#include "check.h"
#include "sim_fixture.h"

typedef struct config {
    const char *name;
    const char *sets[16];
    int nsets;
    int expect[CH_COUNT]; /* 1 = this configuration must send weight through the channel */
} config;

static const config configs[] = {
    { "window narrow, range grid, shift, 30 MeV tilted beam stops inside a narrow slab",
      { "beam.energy_MeV=30", "grid.energy.E_max_MeV=30", "grid.angle.n_bins=9",
        "grid.angle.half_width_deg=4", "grid.angle.centre_deg=80", "beam.direction_deg=80",
        "beam.x_mm=3", "grid.space.nx=15", "grid.space.nz=40" },
      9,
      { 1, 0, 1, 1, 1 } },
    { "full circle, uniform grid, bilinear, tilted wide beam leaving the far end",
      { "grid.angle.mode=full", "grid.angle.n_bins=32", "grid.energy.kind=uniform",
        "grid.energy.n_bins=60", "transport.streaming_scheme=bilinear", "beam.direction_deg=60",
        "beam.sigma_x_mm=2", "beam.energy_sigma_MeV=1.5", "grid.energy.E_max_MeV=106",
        "grid.space.nz=40", "transport.steps=60" },
      11,
      { 0, 0, 0, 1, 1 } },
    { "reversed operator order, scatter variants, window, uniform grid, stops",
      { "transport.operator_order=[stream, energy, theta]", "backend.energy=scatter",
        "backend.streaming=atomic", "grid.energy.kind=uniform", "grid.energy.n_bins=40",
        "grid.energy.E_max_MeV=40", "beam.energy_MeV=38", "grid.angle.n_bins=11",
        "grid.angle.half_width_deg=6", "grid.space.nx=21", "beam.x_mm=4", "grid.space.nz=40",
        "transport.streaming_scheme=bilinear" },
      13,
      { 1, 0, 1, 1, 1 } },
    { "slowing down only (no straggling, no nuclear removal), range grid",
      { "transport.straggling=false", "transport.nuclear=false", "beam.x_mm=3", "grid.space.nx=15",
        "grid.space.nz=40" },
      5,
      { 0, 0, 0, 1, 0 } },
    /* The early exit (adaptive: 1 % of the source's largest value) drops a
     * pencil's tails where A_theta reads them: they must leave through
     * THETA_CUTOFF and the balance still close. */
    { "early exit dropping 1 % of the source's largest value, range grid, shift",
      { "backend.early_exit=adaptive", "backend.early_exit_threshold=0.01", "beam.x_mm=3",
        "grid.space.nx=15", "grid.space.nz=40" },
      5,
      { 0, 1, 0, 1, 0 } },
};

int main(int argc, char **argv)
{
    (void)argc;
    for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
        const config *c = &configs[k];
        fixture f;
        CHECK(fixture_run(&f, NULL, c->sets, c->nsets) == 0);
        printf("%s\n  %d steps, max relative error: weight %.3e, energy %.3e\n", c->name,
               f.r.n_steps, f.r.max_weight_rel_err, f.r.max_energy_rel_err);
        /* The conservation tolerance (docs/physics.md), per step, in double. */
        for (int n = 0; n < f.r.n_steps; n++) {
            CHECK_MSG(f.r.steps[n].weight_rel_err <= 1e-6, "%s: step %d weight %.3e", c->name,
                      n + 1, f.r.steps[n].weight_rel_err);
            CHECK_MSG(f.r.steps[n].energy_rel_err <= 1e-6, "%s: step %d energy %.3e", c->name,
                      n + 1, f.r.steps[n].energy_rel_err);
        }
        CHECK(f.r.conservation_violations == 0);
        for (int ch = 0; ch < CH_COUNT; ch++) {
            printf("  %-15s weight %.6e  energy %.6e MeV\n", tally_channel_names[ch],
                   f.r.cumulative.weight[ch], f.r.cumulative.energy[ch]);
            if (c->expect[ch])
                CHECK_MSG(f.r.cumulative.weight[ch] > 1e-4 * f.r.initial_weight,
                          "%s: channel %s carried nothing", c->name, tally_channel_names[ch]);
        }
        /* THETA_CUTOFF carries the float rounding of the kernel weights and the
         * values the early exit drops (at 1e-12 here, next to nothing): tiny,
         * of either sign, but never silently zero. */
        if (k == 0)
            CHECK(f.r.cumulative.weight[CH_THETA_CUTOFF] != 0.0);
        /* A switched-off term tallies nothing at all. */
        if (k == 3)
            CHECK(f.r.cumulative.weight[CH_NUCLEAR] == 0.0 &&
                  f.r.cumulative.energy[CH_NUCLEAR] == 0.0);
        /* Whole-run closure from the cumulative tallies, as a second view. */
        double left = f.r.steps[f.r.n_steps - 1].weight_out, esc = 0.0;
        for (int ch = 0; ch < CH_COUNT; ch++)
            esc += f.r.cumulative.weight[ch];
        CHECK_REL(left + esc, f.r.initial_weight, 1e-6 * f.r.n_steps); /* per-step bound summed */
        fixture_free(&f);
    }

    /* Determinism: the same plan run twice gives the same dose, bit for bit. */
    {
        fixture a, b;
        CHECK(fixture_run(&a, NULL, configs[1].sets, configs[1].nsets) == 0);
        CHECK(fixture_run(&b, NULL, configs[1].sets, configs[1].nsets) == 0);
        CHECK(a.r.n_steps == b.r.n_steps);
        CHECK(memcmp(a.r.dose_MeV, b.r.dose_MeV, a.g.slice * sizeof(double)) == 0);
        CHECK(memcmp(a.r.steps, b.r.steps, a.r.n_steps * sizeof(step_balance)) == 0);
        printf("determinism: two runs of the same plan give identical dose and tallies\n");
        fixture_free(&a);
        fixture_free(&b);
    }

    /* steps: auto stops once the remaining weight is below the threshold. */
    {
        const char *sets[] = { "beam.energy_MeV=30", "grid.energy.E_max_MeV=30", "grid.space.nz=40",
                               "transport.auto_stop_weight=1e-3" };
        fixture f;
        CHECK(fixture_run(&f, NULL, sets, 4) == 0);
        double last = f.r.steps[f.r.n_steps - 1].weight_out;
        double prev = f.r.n_steps > 1 ? f.r.steps[f.r.n_steps - 2].weight_out : f.r.initial_weight;
        printf("auto: stopped after %d steps, weight left %.3e (previous step %.3e)\n", f.r.n_steps,
               last / f.r.initial_weight, prev / f.r.initial_weight);
        CHECK(f.r.stop_reason == STOP_WEIGHT_BELOW);
        CHECK(last < 1e-3 * f.r.initial_weight);
        CHECK(prev >= 1e-3 * f.r.initial_weight);
        fixture_free(&f);
    }
    return check_report(argv[0]);
}
