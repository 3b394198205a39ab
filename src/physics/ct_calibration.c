#include "physics/ct_calibration.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CT_ROWS_MAX 4096
#define CT_LINE_MAX 1024

enum { C_HU, C_DENSITY, C_MATERIAL, C_COUNT };
static const char *const col_name[C_COUNT] = { "hu", "density_g_cm3", "material" };

static int fail_at(smx_error *err, const char *path, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail_at(smx_error *err, const char *path, int line, int col, const char *fmt, ...)
{
    char msg[1500];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return smx_fail(err, SMX_EXIT_INPUT, "%s:%d:%d: %s (geometry.ct.calibration)", path, line, col,
                    msg);
}

static void trim(const char **b, const char **e)
{
    while (*b < *e && (**b == ' ' || **b == '\t'))
        (*b)++;
    while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r' || (*e)[-1] == '\n'))
        (*e)--;
}

/* Splits a line at commas: cells [b[k], e[k]) trimmed, at most max of them. */
static int split(const char *text, const char **b, const char **e, int max)
{
    int n = 0;
    const char *c = text;
    for (;;) {
        const char *comma = strchr(c, ',');
        const char *end = comma ? comma : c + strlen(c);
        if (n == max)
            return max + 1;
        b[n] = c;
        e[n] = end;
        trim(&b[n], &e[n]);
        n++;
        if (!comma)
            return n;
        c = comma + 1;
    }
}

static int number(const char *b, const char *e, double *out)
{
    char cell[64];
    size_t len = (size_t)(e - b);
    if (len == 0 || len >= sizeof cell)
        return -1;
    memcpy(cell, b, len);
    cell[len] = '\0';
    char *stop;
    errno = 0;
    *out = strtod(cell, &stop);
    return *stop || errno == ERANGE || !isfinite(*out) ? -1 : 0;
}

static int grow(ct_calibration *c, int cap)
{
    double *ph = realloc(c->point_hu, (size_t)cap * sizeof *ph);
    if (ph)
        c->point_hu = ph;
    double *pd = realloc(c->point_density, (size_t)cap * sizeof *pd);
    if (pd)
        c->point_density = pd;
    double *mh = realloc(c->material_hu, (size_t)cap * sizeof *mh);
    if (mh)
        c->material_hu = mh;
    char(*mn)[MEDIUM_NAME_MAX] = realloc(c->material, (size_t)cap * sizeof *mn);
    if (mn)
        c->material = mn;
    int *ml = realloc(c->material_line, (size_t)cap * sizeof *ml);
    if (ml)
        c->material_line = ml;
    int *mc = realloc(c->material_col, (size_t)cap * sizeof *mc);
    if (mc)
        c->material_col = mc;
    return ph && pd && mh && mn && ml && mc ? 0 : -1;
}

/* Where the reader is in the file: the line being read and the header's
 * column of each value (map[k]: the column name of the k-th cell). */
typedef struct ct_reader {
    const char *path;
    int line;
    const char *text; /* the line */
    int map[C_COUNT];
    int rows;
} ct_reader;

/* The header line's n cells: the three column names, each once. */
static int read_header(ct_reader *r, const char *const *b, const char *const *e, int n,
                       smx_error *err)
{
    int seen[C_COUNT] = { 0 }, rc = 0;
    for (int k = 0; k < n && k < C_COUNT && !rc; k++) {
        int found = -1;
        for (int j = 0; j < C_COUNT; j++)
            if ((size_t)(e[k] - b[k]) == strlen(col_name[j]) &&
                !strncmp(b[k], col_name[j], (size_t)(e[k] - b[k])))
                found = j;
        if (found < 0 || seen[found])
            rc = fail_at(err, r->path, r->line, (int)(b[k] - r->text) + 1,
                         "column '%.*s' is %s; expected the "
                         "header hu, density_g_cm3, material",
                         (int)(e[k] - b[k] > 40 ? 40 : e[k] - b[k]), b[k],
                         found < 0 ? "unknown" : "given twice");
        else
            seen[found] = 1, r->map[k] = found;
    }
    if (!rc && n != C_COUNT)
        rc = fail_at(err, r->path, r->line, 1,
                     "the header has %d columns; expected the three columns hu, "
                     "density_g_cm3, material",
                     n);
    return rc;
}

/* One row's cells in the columns' order (C_HU, ...), and their columns in
 * the file. */
typedef struct ct_row {
    const char *cb[C_COUNT], *ce[C_COUNT];
    int at[C_COUNT];
    double hu;
} ct_row;

/* A density point of a row: its density after its CT number, in ascending HU. */
static int take_point(ct_calibration *c, const ct_reader *r, const ct_row *w, smx_error *err)
{
    const char *cb = w->cb[C_DENSITY], *ce = w->ce[C_DENSITY];
    const int *at = w->at;
    const double hu = w->hu;
    double rho;
    if (number(cb, ce, &rho) || !(rho > 0 && rho <= 25))
        return fail_at(err, r->path, r->line, at[C_DENSITY],
                       "density_g_cm3: '%.*s' is not a density; expected a "
                       "number in (0, 25] g/cm3",
                       (int)(ce - cb > 40 ? 40 : ce - cb), cb);
    if (c->n_points && !(hu > c->point_hu[c->n_points - 1]))
        return fail_at(err, r->path, r->line, at[C_HU],
                       "hu: %g does not follow the previous density point's %g; "
                       "expected density points in strictly ascending HU",
                       hu, c->point_hu[c->n_points - 1]);
    c->point_hu[c->n_points] = hu;
    c->point_density[c->n_points++] = rho;
    return 0;
}

/* A material row of a row: the material from its CT number on, in ascending HU. */
static int take_material(ct_calibration *c, const ct_reader *r, const ct_row *w, smx_error *err)
{
    const char *cb = w->cb[C_MATERIAL], *ce = w->ce[C_MATERIAL];
    const int *at = w->at;
    const double hu = w->hu;
    size_t len = (size_t)(ce - cb);
    if (len >= MEDIUM_NAME_MAX)
        return fail_at(err, r->path, r->line, at[C_MATERIAL],
                       "material: a name longer than %d bytes", MEDIUM_NAME_MAX - 1);
    if (c->n_materials && !(hu > c->material_hu[c->n_materials - 1]))
        return fail_at(err, r->path, r->line, at[C_HU],
                       "hu: %g does not follow the previous material row's %g; "
                       "expected material rows in strictly ascending HU",
                       hu, c->material_hu[c->n_materials - 1]);
    int m = c->n_materials++;
    c->material_hu[m] = hu;
    memcpy(c->material[m], cb, len);
    c->material[m][len] = '\0';
    c->material_line[m] = r->line;
    c->material_col[m] = at[C_MATERIAL];
    return 0;
}

/* One row after the header, of n cells: a CT number with a density point, a
 * material row, or both. */
static int read_row(ct_calibration *c, ct_reader *r, const char *const *b, const char *const *e,
                    int n, smx_error *err)
{
    if (n != C_COUNT)
        return fail_at(
            err, r->path, r->line, n > C_COUNT ? (int)(b[C_COUNT - 1] - r->text) + 1 : 1,
            "%d values; expected %d (hu, density_g_cm3, material; leave one of the last two empty)",
            n > C_COUNT ? C_COUNT + 1 : n, C_COUNT);
    if (r->rows == CT_ROWS_MAX)
        return fail_at(err, r->path, r->line, 1, "more than %d rows; expected a calibration table",
                       CT_ROWS_MAX);
    r->rows++;
    ct_row w;
    for (int k = 0; k < C_COUNT; k++) {
        w.cb[r->map[k]] = b[k];
        w.ce[r->map[k]] = e[k];
        w.at[r->map[k]] = (int)(b[k] - r->text) + 1;
    }
    const char *const *cb = w.cb, *const *ce = w.ce;
    const int *at = w.at;
    if (number(cb[C_HU], ce[C_HU], &w.hu))
        return fail_at(err, r->path, r->line, at[C_HU],
                       "hu: '%.*s' is not a finite number; expected a CT number",
                       (int)(ce[C_HU] - cb[C_HU] > 40 ? 40 : ce[C_HU] - cb[C_HU]), cb[C_HU]);
    int has_rho = ce[C_DENSITY] > cb[C_DENSITY], has_mat = ce[C_MATERIAL] > cb[C_MATERIAL];
    if (!has_rho && !has_mat)
        return fail_at(err, r->path, r->line, at[C_DENSITY],
                       "neither a density nor a material; expected at least one");
    int rc = 0;
    if (has_rho)
        rc = take_point(c, r, &w, err);
    if (!rc && has_mat)
        rc = take_material(c, r, &w, err);
    return rc;
}

int ct_calibration_load(ct_calibration *c, const char *path, smx_error *err)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "r");
    if (!f)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot open the CT calibration: %s", path,
                        strerror(errno));
    char text[CT_LINE_MAX];
    ct_reader r = { .path = path, .text = text };
    int have_header = 0, rc = 0;
    if (grow(c, CT_ROWS_MAX)) {
        fclose(f);
        ct_calibration_free(c);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", path);
    }
    while (!rc && fgets(text, sizeof text, f)) {
        r.line++;
        size_t len = strlen(text);
        if (len + 1 == sizeof text && text[len - 1] != '\n') {
            rc = fail_at(err, path, r.line, 1,
                         "the line is longer than %d bytes; expected one row per line",
                         CT_LINE_MAX - 2);
            break;
        }
        const char *lb = text, *le = text + len;
        trim(&lb, &le);
        if (lb == le || *lb == '#')
            continue;
        const char *b[C_COUNT], *e[C_COUNT];
        int n = split(text, b, e, C_COUNT);
        if (!have_header) {
            rc = read_header(&r, b, e, n, err);
            have_header = 1;
        } else {
            rc = read_row(c, &r, b, e, n, err);
        }
    }
    if (!rc && ferror(f))
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: cannot read the CT calibration", path);
    fclose(f);
    if (!rc && (c->n_points < 2 || c->n_materials < 1))
        rc = smx_fail(
            err, SMX_EXIT_INPUT,
            "%s: %d density points and %d material rows (geometry.ct.calibration); "
            "expected at least 2 points and 1 material row after the header hu, density_g_cm3, material",
            path, c->n_points, c->n_materials);
    if (rc)
        ct_calibration_free(c);
    return rc;
}

void ct_calibration_free(ct_calibration *c)
{
    free(c->point_hu);
    free(c->point_density);
    free(c->material_hu);
    free(c->material);
    free(c->material_line);
    free(c->material_col);
    memset(c, 0, sizeof *c);
}

int ct_calibration_eval(const ct_calibration *c, double hu, double *density, int *material_row)
{
    const int n = c->n_points;
    if (hu < c->point_hu[0] || hu < c->material_hu[0])
        return -1;
    if (hu > c->point_hu[n - 1])
        return 1;
    int lo = 0, hi = n - 1; /* point_hu[lo] <= hu <= point_hu[hi] */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (c->point_hu[mid] <= hu)
            lo = mid;
        else
            hi = mid;
    }
    double t = (hu - c->point_hu[lo]) / (c->point_hu[hi] - c->point_hu[lo]);
    *density = hu == c->point_hu[hi]
                   ? c->point_density[hi]
                   : c->point_density[lo] + t * (c->point_density[hi] - c->point_density[lo]);
    int m = 0;
    while (m + 1 < c->n_materials && c->material_hu[m + 1] <= hu)
        m++;
    *material_row = m;
    return 0;
}
