#include "run/run_setup.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/test_hooks.h"
#include "physics/angle_grid.h"
#include "physics/medium_plan.h"
#include "physics/out_of_plane.h"
#include "transport/backend_select.h"

static int load_plan(plan *p, const run_setup_options *o, smx_error *err)
{
    if (o->plan_path)
        return plan_load(p, o->plan_path, o->sets, o->n_sets, err);
    return plan_load_text(p, "(plan text)", o->plan_text, o->sets, o->n_sets, err);
}

static int build_input(plan *p, tables *t, grid *g, const run_setup_options *o, smx_error *err)
{
    int rc = load_plan(p, o, err);
    if (rc)
        return rc;
    smx_test_pause("input", &smx_interrupted);
    if ((rc = tables_load(t, p->table_path, err)))
        return plan_blame_key(p, "material.table_file", rc, err);
    const out_of_plane_model m = out_of_plane_of_plan(p, t);
    if ((rc = tables_set_path_range(t, t, &m, err)))
        return plan_blame_key(p, "transport.out_of_plane_detour", rc, err);
    angle_choice c;
    const int beam = p->angle_spacing == ANGLE_BEAM;
    if ((p->angle_auto || beam) && angle_grid_from_beam(p, t, &c) == 0) {
        p->angle_bins = c.n_bins;
        p->angle_half_width_deg = c.half_width_deg;
        p->angle_theta_c_deg = c.theta_c_deg;
    } else if (beam) {
        return smx_fail_key(err, SMX_EXIT_INPUT, "grid.angle.spacing",
                            "beam sizes the direction bins from the beam's theta_0, and this "
                            "plan gives none to size them from (no scattering, or no path in "
                            "the grid); expected uniform");
    }
    return grid_build(g, p, t, err);
}

int run_setup_input(plan *p, tables *t, grid *g, const run_setup_options *o, smx_error *err)
{
    const int rc = build_input(p, t, g, o, err);
    return rc ? plan_word_error(p, err) : 0;
}

/* What each cell is made of (docs/geometry.md): the one map the run
 * transports, the result file records and the dry run lists. */
static int build_media(run_setup *s, smx_error *err)
{
    const out_of_plane_model detour = out_of_plane_of_plan(&s->p, &s->t);
    int rc;
    if ((rc = medium_map_build(&s->media, &s->p, &s->g, err)) ||
        (rc = medium_tables_load(&s->mtab, &s->media, &s->t, &detour, err)))
        return rc;
    return s->p.dose_to_water ? medium_tables_load_water(&s->mtab, &s->media, &s->p, err) : 0;
}

static int choose_backend(run_setup *s, int local_rank, smx_error *err)
{
    if (s->p.device == DEVICE_CPU) {
        /* A CPU run leaves the GPU alone: the query starts the CUDA driver
         * and a context on the device (0.2 s of a command on an H200 host,
         * and device memory held while the CPU works). */
        memset(&s->gi, 0, sizeof s->gi);
        snprintf(s->gi.why_none, sizeof s->gi.why_none, "not queried (backend.device: cpu)");
    } else {
        gpu_query(&s->gi);
        /* The ranks of a host share its GPUs in turn. */
        if (s->gi.count > 0 && local_rank % s->gi.count != 0) {
            gpu_select(local_rank % s->gi.count);
            gpu_query(&s->gi);
        }
    }
    int rc = backend_choose(&s->p, &s->gi, &s->be, err);
    if (!rc && s->check_memory)
        rc = backend_check_host_memory(&s->p, &s->g, s->be, err);
    return rc;
}

int run_setup_init(run_setup *s, const run_setup_options *o, smx_error *err)
{
    memset(s, 0, sizeof *s);
    s->check_memory = o->backend && o->check_memory;
    int rc = build_input(&s->p, &s->t, &s->g, o, err);
    if (!rc && o->media)
        rc = build_media(s, err);
    if (!rc && o->backend)
        rc = choose_backend(s, o->local_rank, err);
    return rc ? plan_word_error(&s->p, err) : 0;
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
