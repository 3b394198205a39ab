/* libFuzzer target: the plan reader (YAML, --set overrides, the spot map).
 *
 * An input is up to three parts separated by the line "#%%": the plan's YAML,
 * the spot map (written as spots.csv beside the plan), and --set overrides,
 * one per line. They go through plan_load() from files, as a run reads them.
 * A plan that loads must write a resolved plan that loads back to the same
 * values (plan.h promises it); anything else that goes wrong is a sanitizer
 * report. Seeds: fuzz/run.sh; docs/dev/testing.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "input/plan.h"

#define MAX_SETS 8

static char dir[64];
static char plan_path[96], resolved_path[96], spots_path[96];

static int write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = n ? fwrite(data, 1, n, f) : 0;
    return (fclose(f) != 0 || w != n) ? -1 : 0;
}

/* The next part of [*at, end): up to the separator line, which is skipped. */
static const char *next_part(const char **at, const char *end, size_t *len)
{
    static const char sep[] = "\n#%%\n";
    const char *s = *at;
    if (s >= end) {
        *len = 0;
        return s;
    }
    const char *hit = memmem(s, (size_t)(end - s), sep, sizeof sep - 1);
    const char *stop = hit ? hit + 1 : end; /* the part keeps its last newline */
    *len = (size_t)(stop - s);
    *at = hit ? hit + sizeof sep - 1 : end;
    return s;
}

/* The resolved text with its trailing provenance comments removed: a reloaded
 * plan gives every key in the file, so only the values must agree. */
static void strip_comments(char *s)
{
    static const char *const marks[] = { "  # --set\n", "  # from the beam\n", "  # default\n" };
    char *w = s;
    for (const char *r = s; *r;) {
        int skipped = 0;
        for (size_t k = 0; k < sizeof marks / sizeof marks[0]; k++) {
            size_t n = strlen(marks[k]);
            if (!strncmp(r, marks[k], n)) {
                *w++ = '\n';
                r += n;
                skipped = 1;
                break;
            }
        }
        if (!skipped)
            *w++ = *r++;
    }
    *w = '\0';
}

static void check_round_trip(const plan *p)
{
    char *text = plan_resolved_text(p);
    if (!text)
        return; /* out of memory: not the reader's fault */
    if (write_file(resolved_path, text, strlen(text))) {
        free(text);
        return;
    }
    plan q;
    smx_error err = { 0 };
    if (plan_load(&q, resolved_path, NULL, 0, &err)) {
        fprintf(stderr, "fuzz_plan: the resolved plan does not load back: %s\n--- resolved:\n%s",
                err.msg, text);
        abort();
    }
    char *again = plan_resolved_text(&q);
    if (again) {
        strip_comments(text);
        strip_comments(again);
        if (strcmp(text, again)) {
            fprintf(stderr,
                    "fuzz_plan: the resolved plan reloads to other values\n--- first:\n"
                    "%s--- reloaded:\n%s",
                    text, again);
            abort();
        }
    }
    free(again);
    plan_free(&q);
    free(text);
}

static void remove_dir(void)
{
    unlink(plan_path);
    unlink(resolved_path);
    unlink(spots_path);
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%.40s/smx-fuzz-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("fuzz_plan: mkdtemp");
        exit(1);
    }
    snprintf(plan_path, sizeof plan_path, "%s/plan.yaml", dir);
    snprintf(resolved_path, sizeof resolved_path, "%s/resolved.yaml", dir);
    snprintf(spots_path, sizeof spots_path, "%s/spots.csv", dir);
    atexit(remove_dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
    const char *at = (const char *)data, *end = at + size;
    size_t yaml_len, csv_len, sets_len;
    const char *yaml = next_part(&at, end, &yaml_len);
    const char *csv = next_part(&at, end, &csv_len);
    const char *sets_text = next_part(&at, end, &sets_len);

    /* --set values are C strings: one per line, cut at a NUL. */
    char *sets_buf = malloc(sets_len + 1);
    if (!sets_buf)
        return 0;
    memcpy(sets_buf, sets_text, sets_len);
    sets_buf[sets_len] = '\0';
    const char *sets[MAX_SETS];
    int n_sets = 0;
    for (char *line = sets_buf, *nl; n_sets < MAX_SETS && line < sets_buf + sets_len;
         line = nl + 1) {
        nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        else
            nl = sets_buf + sets_len;
        if (line[0])
            sets[n_sets++] = line;
    }

    unlink(spots_path);
    if (write_file(plan_path, yaml, yaml_len) ||
        (csv_len && write_file(spots_path, csv, csv_len))) {
        free(sets_buf);
        return 0;
    }
    plan p;
    smx_error err = { 0 };
    int rc = plan_load(&p, plan_path, sets, n_sets, &err);
    if (rc == 0) {
        /* Every error is reported with a message; success leaves none. */
        if (err.code || err.msg[0])
            abort();
        check_round_trip(&p);
        plan_free(&p);
    } else if (!err.msg[0] || err.code != rc) {
        fprintf(stderr, "fuzz_plan: error %d without its message (code %d)\n", rc, err.code);
        abort();
    }
    free(sets_buf);
    return 0;
}
