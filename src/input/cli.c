#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/text.h"
#include "input/cli.h"
#include "input/plan.h"

void cli_usage(FILE *f)
{
    fputs(
        "usage: smx2d-sim PLAN.yaml [options]   (every --opt VALUE may be written --opt=VALUE)\n"
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

/* An option that stands for a plan key, passed on as "--output=FILE" so
 * that the plan reader's messages name it as typed (plan_load). */
static int add_option(cli *c, const char *option, const char *value)
{
    if (c->n_owned >= 8 || c->n_sets >= CLI_MAX_SETS)
        return -1;
    char *s = c->owned[c->n_owned++];
    snprintf(s, sizeof c->owned[0], "%s%s%s", option, value ? "=" : "", value ? value : "");
    c->sets[c->n_sets++] = s;
    return 0;
}

/* --set KEY=VALUE: anything without a key before '=' is a command-line
 * error (exit 1); whether the key exists is the plan's (exit 2). */
static int check_set(const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (eq && eq > arg)
        return 0;
    fprintf(
        stderr,
        "smx2d-sim: --set %s: %s; expected --set key.path=value, e.g. --set beam.energy_MeV=150\n",
        arg, eq ? "no key before '='" : "missing '='");
    return SMX_EXIT_USAGE;
}

/* "unknown option '--dryrun'; did you mean --dry-run?" */
static void unknown_option(const char *arg, const struct option *opts)
{
    const char *names[32];
    int n = 0;
    for (; opts[n].name && n < 32; n++)
        names[n] = opts[n].name;
    char word[128];
    const char *s = arg;
    while (*s == '-')
        s++;
    snprintf(word, sizeof word, "%.*s", (int)strcspn(s, "="), s);
    const char *near = word[0] ? smx_closest_name(word, names, n) : NULL;
    if (near)
        fprintf(stderr, "smx2d-sim: unknown option '%s'; did you mean --%s? (see --help)\n", arg,
                near);
    else
        fprintf(stderr, "smx2d-sim: unknown option '%s' (see --help)\n", arg);
}

/* Grids of --bench: a comma list of small, production, stress. */
static int parse_bench_grids(cli *c, const char *list)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", list);
    c->bench_grids = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, "small") == 0)
            c->bench_grids |= 1;
        else if (strcmp(tok, "production") == 0)
            c->bench_grids |= 2;
        else if (strcmp(tok, "stress") == 0)
            c->bench_grids |= 4;
        else {
            fprintf(stderr, "smx2d-sim: --bench: unknown grid '%s' (small, production, stress)\n",
                    tok);
            return SMX_EXIT_USAGE;
        }
    }
    return c->bench_grids ? 0 : SMX_EXIT_USAGE;
}

enum {
    OPT_DRY_RUN = 256,
    OPT_SET,
    OPT_DEVICE,
    OPT_OUTPUT,
    OPT_OVERWRITE,
    OPT_THREADS,
    OPT_VERSION,
    OPT_BENCH,
    OPT_BENCH_STEPS,
    OPT_BENCH_VARIANTS,
    OPT_BENCH_JSON,
    OPT_PRINT_SCHEMA,
    OPT_PRINT_REFERENCE
};

/* Every option also takes the --opt=value form (getopt_long). */
static const struct option cli_options[] = {
    { "dry-run", no_argument, NULL, OPT_DRY_RUN },
    { "set", required_argument, NULL, OPT_SET },
    { "device", required_argument, NULL, OPT_DEVICE },
    { "output", required_argument, NULL, OPT_OUTPUT },
    { "overwrite", no_argument, NULL, OPT_OVERWRITE },
    { "threads", required_argument, NULL, OPT_THREADS },
    { "quiet", no_argument, NULL, 'q' },
    { "version", no_argument, NULL, OPT_VERSION },
    { "help", no_argument, NULL, 'h' },
    { "bench", optional_argument, NULL, OPT_BENCH },
    { "bench-steps", required_argument, NULL, OPT_BENCH_STEPS },
    { "bench-variants", no_argument, NULL, OPT_BENCH_VARIANTS },
    { "bench-json", required_argument, NULL, OPT_BENCH_JSON },
    { "print-plan-schema", no_argument, NULL, OPT_PRINT_SCHEMA },
    { "print-reference-plan", no_argument, NULL, OPT_PRINT_REFERENCE },
    { NULL, 0, NULL, 0 },
};

/* --bench-steps N: 1 to a million. */
static int parse_bench_steps(cli *c, const char *arg)
{
    char *end = NULL;
    long n = strtol(arg, &end, 10);
    c->bench_steps = (int)n;
    if (*arg == '\0' || *end != '\0' || n < 1 || n > 1000000) {
        fprintf(stderr, "smx2d-sim: --bench-steps needs a positive number, got '%s'\n", arg);
        return SMX_EXIT_USAGE;
    }
    return 0;
}

/* --set KEY=VALUE, kept as it is. */
static int take_set(cli *c, const char *arg)
{
    if (c->n_sets >= CLI_MAX_SETS) {
        fprintf(stderr, "smx2d-sim: too many --set options\n");
        return SMX_EXIT_USAGE;
    }
    int rc = check_set(arg);
    if (!rc)
        c->sets[c->n_sets++] = arg;
    return rc;
}

/* One option getopt_long returned (opt; its value in optarg). The aliases
 * become --set strings so that their errors name the plan key. */
static int take_option(cli *c, int opt, char **argv)
{
    switch (opt) {
    case OPT_DRY_RUN:
        c->dry_run = 1;
        return 0;
    case OPT_SET:
        return take_set(c, optarg);
    case OPT_DEVICE:
        return add_option(c, "--device", optarg);
    case OPT_OUTPUT:
        return add_option(c, "--output", optarg);
    case OPT_THREADS:
        return add_option(c, "--threads", optarg);
    case OPT_OVERWRITE:
        return add_option(c, "--overwrite", NULL);
    case 'q':
        c->quiet = 1;
        return 0;
    case OPT_VERSION:
        c->version = 1;
        return 0;
    case 'h':
        c->help = 1;
        return 0;
    case OPT_BENCH:
        c->bench = 1;
        c->bench_grids = 3;
        return optarg ? parse_bench_grids(c, optarg) : 0;
    case OPT_BENCH_STEPS:
        return parse_bench_steps(c, optarg);
    case OPT_BENCH_VARIANTS:
        c->bench_variants = 1;
        return 0;
    case OPT_BENCH_JSON:
        c->bench_json = optarg;
        return 0;
    case OPT_PRINT_SCHEMA:
        c->print_schema = 1;
        return 0;
    case OPT_PRINT_REFERENCE:
        c->print_reference = 1;
        return 0;
    case ':':
        fprintf(stderr, "smx2d-sim: %s needs a value (see --help)\n", argv[optind - 1]);
        return SMX_EXIT_USAGE;
    default:
        unknown_option(argv[optind - 1], cli_options);
        return SMX_EXIT_USAGE;
    }
}

/* Operands: the plan; with --bench (which takes no plan), `--bench GRIDS`
 * written with a space leaves the grid list here. */
static int take_operands(cli *c, int argc, char **argv)
{
    for (int i = optind; i < argc; i++) {
        if (c->bench && !c->plan_path && i == optind) {
            if (parse_bench_grids(c, argv[i]))
                return SMX_EXIT_USAGE;
        } else if (c->bench) {
            fprintf(stderr, "smx2d-sim: --bench takes no plan ('%s')\n", argv[i]);
            return SMX_EXIT_USAGE;
        } else if (c->plan_path) {
            fprintf(stderr, "smx2d-sim: more than one plan given ('%s' and '%s')\n", c->plan_path,
                    argv[i]);
            return SMX_EXIT_USAGE;
        } else {
            c->plan_path = argv[i];
        }
    }
    return 0;
}

int cli_parse(cli *c, int argc, char **argv)
{
    memset(c, 0, sizeof *c);
    int rc = 0, opt;
    opterr = 0; /* our own messages, which name the option as given */
    optind = 1;
    while (!rc && (opt = getopt_long(argc, argv, ":qh", cli_options, NULL)) != -1)
        rc = take_option(c, opt, argv);
    if (rc) {
        if (rc != SMX_EXIT_USAGE)
            fprintf(stderr, "smx2d-sim: too many options\n");
        return SMX_EXIT_USAGE;
    }
    if (take_operands(c, argc, argv))
        return SMX_EXIT_USAGE;
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
