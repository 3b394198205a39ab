/* The published reference data of tests/reference/ (each file's header names
 * its source): whitespace-separated numeric columns, '#' lines are comments.
 * The tests run from the repository root (the WORKING_DIRECTORY of their CTest entries),
 * so a file is read by its path from there. A file that is missing or
 * malformed fails the check that reads it, never skips it. */
#ifndef SMX_TEST_REFERENCE_DATA_H
#define SMX_TEST_REFERENCE_DATA_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REF_MAX_COLS 12

typedef struct ref_table {
    int nrows, ncols;
    double *v; /* row-major, nrows x ncols */
} ref_table;

/* Reads tests/reference/NAME, every row of exactly ncols numbers; 0 on success. */
static inline int ref_table_load(ref_table *t, const char *name, int ncols)
{
    char path[512], line[1024];
    snprintf(path, sizeof path, "tests/reference/%s", name);
    t->nrows = 0;
    t->ncols = ncols;
    t->v = NULL;
    FILE *fp = fopen(path, "r");
    if (!fp) {
        fprintf(stderr, "reference data %s: cannot open\n", path);
        return 1;
    }
    int cap = 0, lineno = 0;
    while (fgets(line, sizeof line, fp)) {
        lineno++;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '#' || *s == '\n' || *s == '\0')
            continue;
        double row[REF_MAX_COLS];
        int n = 0;
        char *end = s;
        while (n < REF_MAX_COLS) {
            double x = strtod(s, &end);
            if (end == s)
                break;
            row[n++] = x;
            s = end;
        }
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n')
            s++;
        if (n != ncols || *s != '\0') {
            fprintf(stderr, "%s:%d: want %d numbers\n", path, lineno, ncols);
            fclose(fp);
            free(t->v);
            t->v = NULL;
            return 1;
        }
        if (t->nrows == cap) {
            cap = cap ? 2 * cap : 64;
            double *nv = realloc(t->v, (size_t)cap * ncols * sizeof *nv);
            if (!nv) {
                fclose(fp);
                free(t->v);
                t->v = NULL;
                return 1;
            }
            t->v = nv;
        }
        memcpy(t->v + (size_t)t->nrows * ncols, row, ncols * sizeof *row);
        t->nrows++;
    }
    fclose(fp);
    if (t->nrows == 0) {
        fprintf(stderr, "reference data %s: no rows\n", path);
        return 1;
    }
    return 0;
}

static inline double ref_at(const ref_table *t, int row, int col)
{
    return t->v[(size_t)row * t->ncols + col];
}

static inline void ref_table_free(ref_table *t)
{
    free(t->v);
    t->v = NULL;
    t->nrows = 0;
}

/* Column ycol at xcol = x, the rows ascending in xcol: linear, or log-log when
 * loglog; NAN outside the table (a test must not extrapolate a reference). */
static inline double ref_interp(const ref_table *t, int xcol, int ycol, double x, int loglog)
{
    for (int i = 0; i + 1 < t->nrows; i++) {
        double x0 = ref_at(t, i, xcol), x1 = ref_at(t, i + 1, xcol);
        if (x < x0 || x > x1)
            continue;
        double y0 = ref_at(t, i, ycol), y1 = ref_at(t, i + 1, ycol);
        if (loglog)
            return exp(log(y0) + (log(y1) - log(y0)) * (log(x) - log(x0)) / (log(x1) - log(x0)));
        return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
    }
    return NAN;
}

/* The row whose column col equals x, or -1. */
static inline int ref_row_of(const ref_table *t, int col, double x)
{
    for (int i = 0; i < t->nrows; i++)
        if (ref_at(t, i, col) == x)
            return i;
    return -1;
}

/* ---- tests/reference/pstar_water_ranges.txt --------------------------- */
enum { PSTAR_E, PSTAR_S, PSTAR_CSDA, PSTAR_PROJECTED, PSTAR_NCOLS };

/* PSTAR's range (mm of water at 1 g/cm3) at E: a printed row, or log-log
 * between the two rows around E; NAN if the file is unreadable or E is
 * outside it. col: PSTAR_CSDA or PSTAR_PROJECTED. */
static inline double pstar_reference_mm(double E_MeV, int col)
{
    ref_table t;
    if (ref_table_load(&t, "pstar_water_ranges.txt", PSTAR_NCOLS))
        return NAN;
    double R = 10.0 * ref_interp(&t, PSTAR_E, col, E_MeV, 1);
    ref_table_free(&t);
    return R;
}

#endif
