#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "input/cli.h"

void cli_usage(FILE *f)
{
    fputs("usage: smx2d-sim PLAN.yaml [options]\n"
          "  --dry-run            validate plan and tables, print grid, memory and outputs; run nothing\n"
          "  --set KEY=VALUE      override a plan key, e.g. --set beam.energy_MeV=150 (repeatable)\n"
          "  --device auto|cpu|cuda  same as --set backend.device=...\n"
          "  --output FILE        same as --set output.file=FILE\n"
          "  --overwrite          same as --set output.overwrite=true\n"
          "  --threads N          same as --set backend.threads=N\n"
          "  --quiet              no step log or summary (errors still go to stderr)\n"
          "  --version            print version and build facts\n"
          "  --help               this text\n"
          "  --bench [GRIDS]      benchmark instead of a plan: GRIDS is a comma list of\n"
          "                       small, production, stress (default small,production)\n"
          "  --bench-steps N      timed steps per case (default 100)\n"
          "  --bench-variants     also time every kernel variant on the Production grid\n"
          "  --bench-json FILE    write the benchmark results as JSON\n"
          "  --print-plan-schema  write the plan's JSON Schema to stdout\n"
          "  --print-reference-plan  write the documented reference plan to stdout\n"
          "exit codes: 0 ok, 1 bad command line, 2 bad input (plan, tables, output path),\n"
          "            3 runtime or device error, 130 interrupted\n",
          f);
}

static int add_set(cli *c, const char *key, const char *value)
{
    if (c->n_owned >= 8 || c->n_sets >= CLI_MAX_SETS)
        return -1;
    char *s = c->owned[c->n_owned++];
    snprintf(s, sizeof c->owned[0], "%s=%s", key, value);
    c->sets[c->n_sets++] = s;
    return 0;
}

int cli_parse(cli *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    static const struct {
        const char *flag, *key;
    } aliases[] = {{"--device", "backend.device"},
                   {"--output", "output.file"},
                   {"--threads", "backend.threads"}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int matched = 0;
        for (size_t k = 0; k < sizeof aliases / sizeof aliases[0]; k++) {
            if (strcmp(a, aliases[k].flag) == 0) {
                if (i + 1 >= argc) {
                    fprintf(stderr, "smx2d-sim: %s needs a value\n", a);
                    return SMX_EXIT_USAGE;
                }
                if (add_set(c, aliases[k].key, argv[++i])) {
                    fprintf(stderr, "smx2d-sim: too many options\n");
                    return SMX_EXIT_USAGE;
                }
                matched = 1;
            }
        }
        if (matched)
            continue;
        if (strcmp(a, "--set") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "smx2d-sim: --set needs KEY=VALUE\n");
                return SMX_EXIT_USAGE;
            }
            if (c->n_sets >= CLI_MAX_SETS) {
                fprintf(stderr, "smx2d-sim: too many --set options\n");
                return SMX_EXIT_USAGE;
            }
            c->sets[c->n_sets++] = argv[++i];
        } else if (strcmp(a, "--overwrite") == 0) {
            add_set(c, "output.overwrite", "true");
        } else if (strcmp(a, "--dry-run") == 0) {
            c->dry_run = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            c->quiet = 1;
        } else if (strcmp(a, "--version") == 0) {
            c->version = 1;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            c->help = 1;
        } else if (strcmp(a, "--bench") == 0) {
            c->bench = 1;
            c->bench_grids = 3;
            if (i + 1 < argc && argv[i + 1][0] != '-') {
                c->bench_grids = 0;
                char buf[256];
                snprintf(buf, sizeof buf, "%s", argv[++i]);
                for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
                    if (strcmp(tok, "small") == 0)
                        c->bench_grids |= 1;
                    else if (strcmp(tok, "production") == 0)
                        c->bench_grids |= 2;
                    else if (strcmp(tok, "stress") == 0)
                        c->bench_grids |= 4;
                    else {
                        fprintf(stderr, "smx2d-sim: --bench: unknown grid '%s' (small, production, "
                                        "stress)\n", tok);
                        return SMX_EXIT_USAGE;
                    }
                }
            }
        } else if (strcmp(a, "--bench-steps") == 0) {
            if (i + 1 >= argc || (c->bench_steps = atoi(argv[++i])) < 1) {
                fprintf(stderr, "smx2d-sim: --bench-steps needs a positive number\n");
                return SMX_EXIT_USAGE;
            }
        } else if (strcmp(a, "--bench-variants") == 0) {
            c->bench_variants = 1;
        } else if (strcmp(a, "--bench-json") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "smx2d-sim: --bench-json needs a file\n");
                return SMX_EXIT_USAGE;
            }
            c->bench_json = argv[++i];
        } else if (strcmp(a, "--print-plan-schema") == 0) {
            c->print_schema = 1;
        } else if (strcmp(a, "--print-reference-plan") == 0) {
            c->print_reference = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "smx2d-sim: unknown option '%s' (see --help)\n", a);
            return SMX_EXIT_USAGE;
        } else if (c->plan_path) {
            fprintf(stderr, "smx2d-sim: more than one plan given ('%s' and '%s')\n", c->plan_path, a);
            return SMX_EXIT_USAGE;
        } else {
            c->plan_path = a;
        }
    }
    if (c->bench_steps == 0)
        c->bench_steps = 100;
    if (!c->plan_path && !c->version && !c->help && !c->print_schema && !c->print_reference &&
        !c->bench) {
        fprintf(stderr, "smx2d-sim: no plan given\n");
        cli_usage(stderr);
        return SMX_EXIT_USAGE;
    }
    return 0;
}
