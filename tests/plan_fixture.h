/* Shared by the plan reader's test programs (test_plan_errors.c: what a bad
 * plan is told; test_plan.c: defaults, overrides, table lookup, the shipped
 * schema files and the resolved round trip): files in a scratch folder, the
 * reader called as the program calls it, expected-error helpers. */
#ifndef SMX_TEST_PLAN_FIXTURE_H
#define SMX_TEST_PLAN_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "input/plan.h"
#include "input/plan_access.h"

#define CASES "tests/plan_cases/"

static char tmp_dir[64];

static inline void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot create %s", path);
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

/* Whole file, NUL-terminated; NULL if it cannot be read. */
static inline char *read_text(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            cap = cap ? 2 * cap : 8192;
            buf = realloc(buf, cap);
            if (!buf)
                break;
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

typedef void (*writer)(FILE *);

static inline char *capture(writer w, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    w(f);
    fclose(f);
    return buf;
}

static inline char *value_text(const plan *p, const plan_key *k)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    plan_write_value(f, p, k, 0);
    fclose(f);
    return buf;
}

static inline int load(plan *p, const char *path, const char *const *sets, int n, smx_error *err)
{
    memset(err, 0, sizeof *err);
    return plan_load(p, path, sets, n, err);
}

static inline void expect_error_set(const char *path, const char *const *sets, int n,
                                    const char *want)
{
    plan p;
    smx_error err;
    int rc = load(&p, path, sets, n, &err);
    CHECK_MSG(rc == SMX_EXIT_INPUT, "%s: plan_load returned %d, expected %d", path, rc,
              SMX_EXIT_INPUT);
    CHECK_STREQ(err.msg, want);
    /* A failed load leaves nothing allocated, and plan_free stays safe. */
    CHECK(p.loc == NULL && p.yaml_text == NULL);
    plan_free(&p);
    plan_free(&p);
}

static inline void expect_error(const char *path, const char *want)
{
    expect_error_set(path, NULL, 0, want);
}

static inline void expect_set_error(const char *set, const char *want)
{
    const char *sets[] = { set };
    expect_error_set(CASES "minimal.yaml", sets, 1, want);
}

static inline int ki(const char *path)
{
    int i = plan_key_index(path);
    CHECK_MSG(i >= 0, "no key %s", path);
    return i < 0 ? 0 : i;
}

/* A scratch folder with an empty pstar_water.h5 in it, found through
 * $SMX2D_DATA_DIR by plans that name the table without a path. */
static inline int plan_fixture_begin(char *table, size_t size)
{
    snprintf(tmp_dir, sizeof tmp_dir, "/tmp/smx2d-test-plan-XXXXXX");
    if (!mkdtemp(tmp_dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(table, size, "%s/pstar_water.h5", tmp_dir);
    write_text(table, "");
    setenv("SMX2D_DATA_DIR", tmp_dir, 1);
    return 0;
}

static inline void plan_fixture_end(const char *table)
{
    remove(table);
    rmdir(tmp_dir);
}

#endif
