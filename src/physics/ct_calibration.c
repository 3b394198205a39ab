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

int ct_calibration_load(ct_calibration *c, const char *path, smx_error *err)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "r");
    if (!f)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot open the CT calibration: %s", path,
                        strerror(errno));
    char text[CT_LINE_MAX];
    int line = 0, map[C_COUNT], have_header = 0, rows = 0, rc = 0;
    if (grow(c, CT_ROWS_MAX)) {
        fclose(f);
        ct_calibration_free(c);
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", path);
    }
    while (!rc && fgets(text, sizeof text, f)) {
        line++;
        size_t len = strlen(text);
        if (len + 1 == sizeof text && text[len - 1] != '\n') {
            rc = fail_at(err, path, line, 1,
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
            int seen[C_COUNT] = { 0 };
            for (int k = 0; k < n && k < C_COUNT && !rc; k++) {
                int found = -1;
                for (int j = 0; j < C_COUNT; j++)
                    if ((size_t)(e[k] - b[k]) == strlen(col_name[j]) &&
                        !strncmp(b[k], col_name[j], (size_t)(e[k] - b[k])))
                        found = j;
                if (found < 0 || seen[found])
                    rc = fail_at(err, path, line, (int)(b[k] - text) + 1,
                                 "column '%.*s' is %s; expected the "
                                 "header hu, density_g_cm3, material",
                                 (int)(e[k] - b[k] > 40 ? 40 : e[k] - b[k]), b[k],
                                 found < 0 ? "unknown" : "given twice");
                else
                    seen[found] = 1, map[k] = found;
            }
            if (!rc && n != C_COUNT)
                rc = fail_at(err, path, line, 1,
                             "the header has %d columns; expected the three columns hu, "
                             "density_g_cm3, material",
                             n);
            have_header = 1;
            continue;
        }
        if (n != C_COUNT) {
            rc = fail_at(
                err, path, line, n > C_COUNT ? (int)(b[C_COUNT - 1] - text) + 1 : 1,
                "%d values; expected %d (hu, density_g_cm3, material; leave one of the last two empty)",
                n > C_COUNT ? C_COUNT + 1 : n, C_COUNT);
            break;
        }
        if (rows == CT_ROWS_MAX) {
            rc = fail_at(err, path, line, 1, "more than %d rows; expected a calibration table",
                         CT_ROWS_MAX);
            break;
        }
        rows++;
        int at[C_COUNT];
        const char *cb[C_COUNT], *ce[C_COUNT];
        for (int k = 0; k < C_COUNT; k++) {
            cb[map[k]] = b[k];
            ce[map[k]] = e[k];
            at[map[k]] = (int)(b[k] - text) + 1;
        }
        double hu, rho;
        if (number(cb[C_HU], ce[C_HU], &hu)) {
            rc = fail_at(err, path, line, at[C_HU],
                         "hu: '%.*s' is not a finite number; expected a CT number",
                         (int)(ce[C_HU] - cb[C_HU] > 40 ? 40 : ce[C_HU] - cb[C_HU]), cb[C_HU]);
            break;
        }
        int has_rho = ce[C_DENSITY] > cb[C_DENSITY], has_mat = ce[C_MATERIAL] > cb[C_MATERIAL];
        if (!has_rho && !has_mat) {
            rc = fail_at(err, path, line, at[C_DENSITY],
                         "neither a density nor a material; expected at least one");
            break;
        }
        if (has_rho) {
            if (number(cb[C_DENSITY], ce[C_DENSITY], &rho) || !(rho > 0 && rho <= 25)) {
                rc = fail_at(
                    err, path, line, at[C_DENSITY],
                    "density_g_cm3: '%.*s' is not a density; expected a "
                    "number in (0, 25] g/cm3",
                    (int)(ce[C_DENSITY] - cb[C_DENSITY] > 40 ? 40 : ce[C_DENSITY] - cb[C_DENSITY]),
                    cb[C_DENSITY]);
                break;
            }
            if (c->n_points && !(hu > c->point_hu[c->n_points - 1])) {
                rc = fail_at(err, path, line, at[C_HU],
                             "hu: %g does not follow the previous density point's %g; "
                             "expected density points in strictly ascending HU",
                             hu, c->point_hu[c->n_points - 1]);
                break;
            }
            c->point_hu[c->n_points] = hu;
            c->point_density[c->n_points++] = rho;
        }
        if (has_mat) {
            size_t len2 = (size_t)(ce[C_MATERIAL] - cb[C_MATERIAL]);
            if (len2 >= MEDIUM_NAME_MAX) {
                rc = fail_at(err, path, line, at[C_MATERIAL],
                             "material: a name longer than %d bytes", MEDIUM_NAME_MAX - 1);
                break;
            }
            if (c->n_materials && !(hu > c->material_hu[c->n_materials - 1])) {
                rc = fail_at(err, path, line, at[C_HU],
                             "hu: %g does not follow the previous material row's %g; "
                             "expected material rows in strictly ascending HU",
                             hu, c->material_hu[c->n_materials - 1]);
                break;
            }
            int m = c->n_materials++;
            c->material_hu[m] = hu;
            memcpy(c->material[m], cb[C_MATERIAL], len2);
            c->material[m][len2] = '\0';
            c->material_line[m] = line;
            c->material_col[m] = at[C_MATERIAL];
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
