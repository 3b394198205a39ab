#include "run/scenario.h"

#include <string.h>

#include "transport/backend_select.h"
#include "transport/stepper.h"

int run_scenario_error(const plan *p, int k, smx_error *err)
{
    if (err->code == SMX_EXIT_INTERRUPTED)
        return err->code;
    const plan_scenario sc = plan_scenario_at(p, k);
    const smx_error inner = *err;
    err->code = 0; /* smx_fail keeps the first error: start afresh */
    return smx_fail(err, inner.code, "scenario %d (range %+g %%, shift %+g mm): %s", k,
                    sc.range_error_percent, sc.shift_mm, inner.msg);
}

static int build(run_scenario *sc, const run_setup *s, int k, smx_error *err)
{
    int rc = plan_scenario_copy(&sc->p, &s->p, k, err);
    if (rc)
        return rc;
    if ((rc = grid_build(&sc->g, &sc->p, &s->t, err)))
        return plan_word_error(&sc->p, err);
    const double divisor = 1.0 + plan_scenario_at(&s->p, k).range_error_percent / 100.0;
    if ((rc = medium_map_scaled(&sc->media, &s->media, divisor, err)))
        return rc;
    /* The scenario's range grid may hold more bins than the nominal's. */
    if (s->check_memory && s->be && (rc = backend_check_host_memory(&sc->p, &sc->g, s->be, err)))
        return plan_word_error(&sc->p, err);
    return 0;
}

int run_scenario_build(run_scenario *sc, const run_setup *s, int k, smx_error *err)
{
    const double t0 = stepper_now_s();
    memset(sc, 0, sizeof *sc);
    sc->index = k;
    sc->nominal = s;
    if (k <= 0 || k >= plan_scenario_count(&s->p))
        return smx_fail(err, SMX_EXIT_RUNTIME, "internal: scenario %d of a plan with %d", k,
                        plan_scenario_count(&s->p));
    const int rc = build(sc, s, k, err);
    sc->build_s = stepper_now_s() - t0;
    return rc ? run_scenario_error(&s->p, k, err) : 0;
}

void run_scenario_free(run_scenario *sc)
{
    medium_map_free(&sc->media);
    grid_free(&sc->g);
    plan_free(&sc->p);
}

int run_each_scenario(const run_setup *s, const scenario_pass *pass, smx_error *err)
{
    const int n = plan_scenario_count(&s->p);
    int rc = 0;
    for (int k = 1; k < n && !rc; k++) {
        if (pass->wanted && !pass->wanted(pass->ctx, k))
            continue;
        run_scenario sc;
        rc = run_scenario_build(&sc, s, k, err);
        if (!rc && (rc = pass->visit(pass->ctx, &sc, err)))
            run_scenario_error(&s->p, k, err);
        run_scenario_free(&sc);
    }
    return rc;
}
