/* A robust plan's scenarios (scenarios.*, docs/planning.md) as
 * transformations of the loaded set-up: the plan copied with its densities
 * divided and its spots moved (plan_scenario_copy), the grid built again from
 * the loaded tables (a range grid's bins follow the density), the loaded
 * medium map with every density divided (medium_map_scaled). Nothing is read
 * from disk again; the material tables and the backend are the set-up's. */
#ifndef SMX_RUN_SCENARIO_H
#define SMX_RUN_SCENARIO_H

#include "run/run_setup.h"

typedef struct run_scenario {
    int index; /* 1 .. plan_scenario_count - 1; 0 is the nominal set-up itself */
    plan p;
    grid g;
    medium_map media;
    const run_setup *nominal; /* its tables, material tables and backend */
    double build_s; /* the time its build took (what a scenario costs beyond its transport,
                       with its lookup tables: scenario_runs) */
} run_scenario;

/* Scenario k of set-up s (built with media). Errors are worded with the
 * scenario's plan and name the scenario ("scenario 2 (range +3.5 %, shift
 * +0 mm): ..."). run_scenario_free is safe after an error. */
int run_scenario_build(run_scenario *sc, const run_setup *s, int k, smx_error *err);
void run_scenario_free(run_scenario *sc);

static inline sim_media run_scenario_media(const run_scenario *sc)
{
    return (sim_media){ &sc->media, sc->nominal->mtab.mt, sc->nominal->mtab.water };
}

/* Names scenario k in err's message, once. Returns err->code. */
int run_scenario_error(const plan *p, int k, smx_error *err);

/* One pass over scenarios 1.. of s: each built, handed to visit, and freed
 * before the next; the first error stops the pass, named with its scenario
 * (an interrupt is left as it is). visit may skip a scenario it has no share
 * of by returning 0 at once; `wanted`, if not NULL, says before the build
 * whether a scenario is to be visited at all. */
typedef struct scenario_pass {
    int (*wanted)(void *ctx, int k);
    int (*visit)(void *ctx, const run_scenario *sc, smx_error *err);
    void *ctx;
} scenario_pass;
int run_each_scenario(const run_setup *s, const scenario_pass *pass, smx_error *err);

#endif
