/* Minimal assertions for the CTest programs: each failed check prints
 * file:line and the values, and the program exits non-zero at the end. */
#ifndef SMX_TEST_CHECK_H
#define SMX_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures = 0;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                         \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            check_failures++;                                                        \
        }                                                                            \
    } while (0)

#define CHECK_STREQ(a, b)                                                                   \
    do {                                                                                    \
        const char *a_ = (a), *b_ = (b);                                                    \
        if (strcmp(a_, b_) != 0) {                                                          \
            fprintf(stderr, "%s:%d: CHECK_STREQ failed:\n  got:      %s\n  expected: %s\n", \
                    __FILE__, __LINE__, a_, b_);                                            \
            check_failures++;                                                               \
        }                                                                                   \
    } while (0)

/* |a - b| <= tol * max(|b|, tiny); the reason for tol goes beside each use. */
#define CHECK_REL(a, b, tol)                                                                      \
    do {                                                                                          \
        double a_ = (a), b_ = (b);                                                                \
        double d_ = fabs(a_ - b_), s_ = fabs(b_) > 1e-300 ? fabs(b_) : 1e-300;                    \
        if (!(d_ <= (tol)*s_)) {                                                                  \
            fprintf(stderr, "%s:%d: CHECK_REL failed: %s = %.17g, %s = %.17g, rel %.3g > %.3g\n", \
                    __FILE__, __LINE__, #a, a_, #b, b_, d_ / s_, (double)(tol));                  \
            check_failures++;                                                                     \
        }                                                                                         \
    } while (0)

#define CHECK_ABS(a, b, tol)                                                                 \
    do {                                                                                     \
        double a_ = (a), b_ = (b);                                                           \
        if (!(fabs(a_ - b_) <= (tol))) {                                                     \
            fprintf(stderr,                                                                  \
                    "%s:%d: CHECK_ABS failed: %s = %.17g, %s = %.17g, |diff| %.3g > %.3g\n", \
                    __FILE__, __LINE__, #a, a_, #b, b_, fabs(a_ - b_), (double)(tol));       \
            check_failures++;                                                                \
        }                                                                                    \
    } while (0)

/* A program of independent cases: `test_X CASE...` runs the cases named (CTest
 * runs each case, or a few small ones, as a test of its own, so that
 * `ctest -j2` spreads them over the cores), `test_X` all of them.
 * test_cases(argc, argv) once in main; then `if (test_case("name"))` around
 * each case. A name that matches no case fails the run. */
static char **test_case_names = NULL;
static int test_case_n = 0;
static unsigned test_case_found = 0; /* bit i: argument i + 1 matched */
static inline void test_cases(int argc, char **argv)
{
    test_case_names = argv + 1;
    test_case_n = argc > 1 ? argc - 1 : 0;
}
static inline int test_case(const char *name)
{
    int hit = test_case_n == 0;
    for (int i = 0; i < test_case_n; i++)
        if (strcmp(test_case_names[i], name) == 0) {
            hit = 1;
            test_case_found |= 1u << (i < 31 ? i : 31);
        }
    if (hit) {
        printf("== %s\n", name);
        fflush(stdout);
    }
    return hit;
}

/* Every test program ends with: return check_report(argv[0]); */
static inline int check_report(const char *name)
{
    for (int i = 0; i < test_case_n && i < 31; i++)
        if (!(test_case_found & (1u << i))) {
            fprintf(stderr, "%s: no case named '%s'\n", name, test_case_names[i]);
            check_failures++;
        }
    if (check_failures)
        fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
    else
        printf("%s: all checks passed\n", name);
    return check_failures ? 1 : 0;
}

/* SMX_TEST_QUICK=1 (`make test-asan`, docs/dev/testing.md): the long physics
 * regressions run each case at one low energy, with their checks unchanged, so
 * that a sanitized build (several times slower) runs the same code paths in
 * minutes. test_energy(E) is E, or that energy in quick mode. */
#define SMX_TEST_QUICK_MEV 70.0
static inline int test_quick(void)
{
    const char *s = getenv("SMX_TEST_QUICK");
    return s && s[0] && strcmp(s, "0") != 0;
}
static inline double test_energy(double E)
{
    return test_quick() ? SMX_TEST_QUICK_MEV : E;
}

/* CTest SKIP_RETURN_CODE for GPU tests on machines without a GPU. */
#define SMX_TEST_SKIP 77

#endif
