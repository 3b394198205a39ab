/* Command-line options of smx2d-sim. */
#ifndef SMX_CLI_H
#define SMX_CLI_H

#define CLI_MAX_SETS 256

typedef struct cli {
    const char *plan_path;
    const char *sets[CLI_MAX_SETS]; /* "key.path=value", --device/--output/... become these */
    int n_sets;
    int dry_run, quiet, version, help;
    int print_schema, print_reference;
    int bench, bench_grids, bench_steps, bench_variants; /* --bench */
    const char *bench_json;
    char owned[8][4200]; /* storage for the synthesised --set strings */
    int n_owned;
} cli;

/* Returns 0, or SMX_EXIT_USAGE with a message on stderr. */
int cli_parse(cli *c, int argc, char **argv);
void cli_usage(FILE *f);

#endif
