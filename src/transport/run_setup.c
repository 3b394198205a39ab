#include "transport/run_setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/test_pause.h"
#include "physics/medium_plan.h"
#include "transport/backend_select.h"

/* The plan, from its file or from YAML text written to a temporary file. */
static int load_plan(plan *p, const run_setup_options *o, smx_error *err)
{
    if (o->plan_path)
        return plan_load(p, o->plan_path, o->sets, o->n_sets, err);
    char path[] = "/tmp/smx-plan-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return smx_fail(err, SMX_EXIT_RUNTIME, "cannot create a temporary plan file");
    FILE *f = fdopen(fd, "w");
    int ok = f && fputs(o->plan_text ? o->plan_text : "", f) >= 0;
    if (f ? fclose(f) != 0 : close(fd) != 0)
        ok = 0;
    int rc = ok ? plan_load(p, path, o->sets, o->n_sets, err)
                : smx_fail(err, SMX_EXIT_RUNTIME, "%s: cannot write the temporary plan file", path);
    unlink(path);
    return rc;
}

int run_setup_input(plan *p, tables *t, grid *g, const run_setup_options *o, smx_error *err)
{
    int rc = load_plan(p, o, err);
    if (rc)
        return rc;
    /* A scenario changes densities and positions before anything is built
     * from them: the grid's energy axis, the media and every table follow. */
    if (o->scenario > 0) {
        if (o->scenario >= plan_scenario_count(p))
            return smx_fail(err, SMX_EXIT_RUNTIME, "internal: scenario %d of a plan with %d",
                            o->scenario, plan_scenario_count(p));
        plan_apply_scenario(p, o->scenario);
    }
    smx_test_pause("input", &smx_interrupted);
    if ((rc = tables_load(t, p->table_path, err)))
        return plan_blame_key(p, "material.table_file", rc, err);
    if ((rc = grid_build(g, p, t, err)))
        plan_word_error(p, err);
    return rc;
}

int run_setup_init(run_setup *s, const run_setup_options *o, smx_error *err)
{
    memset(s, 0, sizeof *s);
    int rc = run_setup_input(&s->p, &s->t, &s->g, o, err);
    if (rc)
        return rc;
    /* What each cell is made of (docs/geometry.md): the one map the run
     * transports, the result file records and the dry run lists. */
    if (o->media && ((rc = medium_map_build(&s->media, &s->p, &s->g, err)) ||
                     (rc = medium_tables_load(&s->mtab, &s->media, &s->t, err)) ||
                     (s->p.dose_to_water &&
                      (rc = medium_tables_load_water(&s->mtab, &s->media, &s->p, err))))) {
        plan_word_error(&s->p, err);
        return rc;
    }
    if (!o->backend)
        return 0;
    gpu_query(&s->gi);
    /* The ranks of a host share its GPUs in turn. */
    if (s->gi.count > 0 && o->local_rank % s->gi.count != 0) {
        gpu_select(o->local_rank % s->gi.count);
        gpu_query(&s->gi);
    }
    if ((rc = backend_choose(&s->p, &s->gi, &s->be, err)) ||
        (o->check_memory && (rc = backend_check_host_memory(&s->p, &s->g, s->be, err))))
        plan_word_error(&s->p, err);
    return rc;
}

void run_setup_free(run_setup *s)
{
    medium_tables_free(&s->mtab);
    medium_map_free(&s->media);
    grid_free(&s->g);
    tables_free(&s->t);
    plan_free(&s->p);
    s->be = NULL;
}
