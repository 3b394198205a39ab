/* What a backend takes from the run beyond the tables' arrays, worked out on
 * the host as plain values: a backend (cuda/) reads no plan and calls no
 * physics function; it asks here, at setup and upload. */
#ifndef SMX_BACKEND_HOST_H
#define SMX_BACKEND_HOST_H

#include <stdint.h>

#include "base/plan_choices.h"
#include "physics/sim_tables.h"

/* The plan's keys a backend acts on (s->p's, as the tables now point to it:
 * a field's spots run with a plan of their own, transport/per_spot.c). */
typedef struct backend_settings {
    int steps; /* transport.steps: 0 = auto */
    double auto_stop_weight; /* the tables' (sim_tables.auto_stop_weight): 0 in a per-spot state */
    int operator_order[PLAN_ORDER_MAX]; /* transport.operator_order: enum op_id */
    int variant_angular, variant_stream; /* backend.angular, backend.stream: enum variant_* */
    int fused, cuda_graph; /* backend.fused, backend.cuda_graph */
    double gpu_memory_fraction, gpu_memory_bytes; /* backend.gpu_memory_*: 0 bytes = no cap */
    int early_exit; /* backend.early_exit: enum early_exit_mode */
    double early_exit_threshold; /* backend.early_exit_threshold */
    int snapshots; /* output.snapshot_*: the run copies psi out */
    int mass_varies; /* the media's densities differ (physics/medium.h, medium_map_mass_varies) */
} backend_settings;

backend_settings backend_settings_of(const sim_tables *s);

/* The early exit's threshold: 0 when off, the plan's value when fixed, and
 * that value times source_max (the source's largest value of psi) when
 * adaptive. Both backends drop what falls below it, so they must agree. */
float backend_early_exit_threshold(const backend_settings *b, double source_max);

/* Lowest and highest target bin of source bin ie over every medium's tables
 * (*hi < 0: it stops in all of them). */
void backend_target_range(const sim_tables *s, int ie, int *lo, int *hi);
/* The same over medium 0's table alone (s->el). */
void backend_target_range0(const sim_tables *s, int ie, int *lo, int *hi);

/* The medium of every cell of s->mm (0 everywhere without a map) in rows of
 * `pitch` bytes: out[z * pitch + x]; the columns past nx are left as they are. */
void backend_medium_rows(const sim_tables *s, int64_t pitch, unsigned char *out);

/* The name of a transport.streaming_scheme (enum streaming_scheme), as the plan writes it. */
const char *backend_scheme_name(int scheme);

#endif
