/* The host's answers to a backend (transport/backend_host.h): the plan's
 * values, the tables' target ranges and the medium map, so that the backends
 * need neither the plan nor physics' functions. */
#include "transport/backend_host.h"

#include "input/plan.h"
#include "physics/lut_energy.h"
#include "physics/medium.h"

#include <string.h>

backend_settings backend_settings_of(const sim_tables *s)
{
    const plan *p = s->p;
    backend_settings b = {
        .steps = p->steps,
        .auto_stop_weight = s->auto_stop_weight, /* the tables': 0 in a per-spot state */
        .variant_angular = p->variant_angular,
        .variant_stream = p->variant_stream,
        .fused = p->fused,
        .cuda_graph = p->cuda_graph,
        .gpu_memory_fraction = p->gpu_memory_fraction,
        .gpu_memory_bytes = p->gpu_memory_bytes,
        .early_exit = p->early_exit,
        .early_exit_threshold = s->early_exit_threshold, /* a per-spot state's own */
        .snapshots = p->snapshot_every > 0 || p->n_snapshot_steps > 0 || p->snapshot_final,
        .mass_varies = medium_map_mass_varies(s->mm),
    };
    for (int k = 0; k < PLAN_ORDER_MAX; k++)
        b.operator_order[k] = p->operator_order[k];
    return b;
}

float backend_early_exit_threshold(const backend_settings *b, double source_max)
{
    switch (b->early_exit) {
    case EARLY_EXIT_OFF:
        return 0.0f;
    case EARLY_EXIT_ADAPTIVE:
        return (float)(b->early_exit_threshold * source_max);
    default:
        return (float)b->early_exit_threshold;
    }
}

void backend_target_range0(const sim_tables *s, int ie, int *lo, int *hi)
{
    *lo = energy_lut_low_target(&s->el, ie);
    *hi = energy_lut_top_target(&s->el, ie);
}

void backend_target_range(const sim_tables *s, int ie, int *lo, int *hi)
{
    backend_target_range0(s, ie, lo, hi);
    for (int m = 1; m < s->n_media; m++)
        for (int u = 0; u < 2; u++) {
            const energy_lut *l = u ? &sim_dither(s, m)->upper : &sim_dither(s, m)->lower;
            const int a = energy_lut_low_target(l, ie), b = energy_lut_top_target(l, ie);
            if (b < 0)
                continue;
            *lo = *hi < 0 ? a : (a < *lo ? a : *lo);
            *hi = b > *hi ? b : *hi;
        }
}

void backend_medium_rows(const sim_tables *s, int64_t pitch, unsigned char *out)
{
    /* Row by row: a loop over cells storing bytes reloads the map's pointers
     * at every cell (a byte store may alias them), 0.37 ms a move of the CT
     * per-spot bench's windows. */
    const grid *g = s->g;
    const medium_map *m = s->mm;
    for (int64_t z = 0; z < g->nz; z++)
        if (m && m->cell)
            memcpy(out + z * pitch, m->cell + z * m->nx, (size_t)g->nx);
        else
            memset(out + z * pitch, 0, (size_t)g->nx);
}

const char *backend_scheme_name(int scheme)
{
    /* transport.streaming_scheme's choices (input/plan_schema.c), in enum order;
     * test_plan checks that they agree. */
    static const char *const names[] = { "bilinear", "shift", "moments" };
    return scheme >= 0 && scheme < 3 ? names[scheme] : NULL;
}
