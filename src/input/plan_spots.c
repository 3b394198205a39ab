/* The spots of a treatment field: beam.spots_file, a CSV spot map, or one
 * spot made of the beam.* keys.
 *
 * The file: lines starting with '#' and blank lines are skipped; the first
 * other line names the columns (the beam.* keys' names, any order), each
 * further line is one spot. energy_MeV, x_mm and weight are required; a
 * missing optional column takes its beam.* value for every spot. Every error
 * names the file, line and column, the column's name, the value and what was
 * expected. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input/plan_access.h"
#include "input/plan_internal.h"

/* A spot map of more lines than this is the wrong file. */
#define SPOTS_MAX 1000000
#define SPOTS_MAX_BYTES (256u << 20)
#define LINE_MAX_BYTES 4096

enum {
    COL_ENERGY,
    COL_ENERGY_SIGMA,
    COL_DIRECTION,
    COL_X,
    COL_SIGMA_X,
    COL_DIVERGENCE,
    COL_CORRELATION,
    COL_WEIGHT,
    COL_COUNT
};

static const char *const col_name[COL_COUNT] = { "energy_MeV",    "energy_sigma_MeV",
                                                 "direction_deg", "x_mm",
                                                 "sigma_x_mm",    "divergence_mrad",
                                                 "correlation",   "weight" };
static const int col_required[COL_COUNT] = { 1, 0, 0, 1, 0, 0, 0, 1 };

static double *spot_field(plan_spot *s, int c)
{
    double *f[COL_COUNT] = { &s->energy_MeV, &s->energy_sigma_MeV, &s->direction_deg, &s->x_mm,
                             &s->sigma_x_mm, &s->divergence_mrad,  &s->correlation,   &s->weight };
    return f[c];
}

int plan_spot_fail(const plan *p, const plan_spot *s, const char *column, smx_error *err,
                   const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char key[64];
    snprintf(key, sizeof key, "beam.%s", column);
    int c = -1;
    for (int k = 0; k < COL_COUNT; k++)
        if (!strcmp(column, col_name[k]))
            c = k;
    if (s->line == 0)
        return plan_fail_at(p, err, key, "%s", msg);
    if (c >= 0 && s->col[c] == 0) /* the value came from the plan's key */
        return smx_fail(err, SMX_EXIT_INPUT,
                        "%s:%d: %s (the default of every spot without a %s column): %s "
                        "(beam.spots_file)",
                        p->spots_path, s->line, key, column, msg);
    return smx_fail(err, SMX_EXIT_INPUT, "%s:%d:%d: %s: %s (beam.spots_file)", p->spots_path,
                    s->line, c >= 0 ? s->col[c] : 1, column, msg);
}

/* The cell [b, e) of a line, with surrounding blanks removed. */
static void trim(const char **b, const char **e)
{
    while (*b < *e && (**b == ' ' || **b == '\t'))
        (*b)++;
    while (*e > *b && ((*e)[-1] == ' ' || (*e)[-1] == '\t' || (*e)[-1] == '\r' || (*e)[-1] == '\n'))
        (*e)--;
}

static int fail_at(const plan *p, smx_error *err, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int fail_at(const plan *p, smx_error *err, int line, int col, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return smx_fail(err, SMX_EXIT_INPUT, "%s:%d:%d: %s (beam.spots_file)", p->spots_path, line, col,
                    msg);
}

/* The header line: how many cells a line has, and which column each cell
 * is (map[k] = COL_*). */
typedef struct spot_header {
    int map[COL_COUNT];
    int ncells;
} spot_header;

/* The header. */
static int read_header(const plan *p, smx_error *err, const char *text, int line, spot_header *h)
{
    int *map = h->map, *ncells = &h->ncells;
    int seen[COL_COUNT] = { 0 };
    const char *c = text;
    *ncells = 0;
    for (;;) {
        const char *e = strchr(c, ',');
        const char *end = e ? e : c + strlen(c);
        const char *b = c, *t = end;
        trim(&b, &t);
        int col = (int)(b - text) + 1, found = -1;
        for (int k = 0; k < COL_COUNT; k++)
            if ((size_t)(t - b) == strlen(col_name[k]) && !strncmp(b, col_name[k], (size_t)(t - b)))
                found = k;
        char shown[SHOW_MAX + 4];
        if (found < 0)
            return fail_at(
                p, err, line, col,
                "unknown column '%s'; expected the header's names from energy_MeV, x_mm, weight, "
                "direction_deg, energy_sigma_MeV, sigma_x_mm, divergence_mrad, correlation",
                smx_show(b, (size_t)(t - b), shown, sizeof shown));
        if (seen[found])
            return fail_at(p, err, line, col,
                           "column '%s' appears twice; expected each column once", col_name[found]);
        if (*ncells == COL_COUNT)
            return fail_at(p, err, line, col, "more than %d columns", COL_COUNT);
        seen[found] = 1;
        map[(*ncells)++] = found;
        if (!e)
            break;
        c = e + 1;
    }
    for (int k = 0; k < COL_COUNT; k++)
        if (col_required[k] && !seen[k])
            return fail_at(p, err, line, 1,
                           "the header has no column '%s'; expected energy_MeV, x_mm and weight "
                           "at least",
                           col_name[k]);
    return 0;
}

/* One spot's line. */
static int read_spot(const plan *p, smx_error *err, const char *text, int line,
                     const spot_header *h, plan_spot *s)
{
    const int *map = h->map, ncells = h->ncells;
    *s = plan_beam_spot(p);
    s->line = line;
    const char *c = text;
    for (int k = 0; k < ncells; k++) {
        const char *e = strchr(c, ',');
        if (!e && k + 1 < ncells)
            return fail_at(p, err, line, (int)(c - text) + 1 + (int)strlen(c),
                           "%d values; expected %d, one per column of the header", k + 1, ncells);
        const char *end = e ? e : c + strlen(c);
        const char *b = c, *t = end;
        trim(&b, &t);
        int col = (int)(b - text) + 1;
        char cell[64], shown[SHOW_MAX + 4];
        int len = (int)(t - b);
        if (len == 0 || len >= (int)sizeof cell)
            return fail_at(p, err, line, col, "%s: %s; expected a number", col_name[map[k]],
                           len ? "a value too long" : "no value");
        memcpy(cell, b, (size_t)len);
        cell[len] = '\0';
        char *stop;
        errno = 0;
        double v = strtod(cell, &stop);
        if (*stop || errno == ERANGE || !isfinite(v))
            return fail_at(p, err, line, col, "%s: '%s' is not a finite number; expected a number",
                           col_name[map[k]], smx_show(cell, (size_t)len, shown, sizeof shown));
        *spot_field(s, map[k]) = v;
        s->col[map[k]] = col;
        if (k + 1 == ncells && e)
            return fail_at(p, err, line, (int)(e - text) + 1,
                           "more values than the header's %d columns", ncells);
        c = e ? e + 1 : end;
    }
    /* What a single value shows; the grid's own rules follow (plan_spot_check). */
    const struct {
        int col, bad;
        const char *expected;
    } rules[] = {
        { COL_WEIGHT, !(s->weight > 0.0), "a weight > 0" },
        { COL_ENERGY_SIGMA, s->energy_sigma_MeV < 0.0, "a spread >= 0" },
        { COL_SIGMA_X, s->sigma_x_mm < 0.0, "a width >= 0" },
        { COL_DIVERGENCE, s->divergence_mrad < 0.0, "a divergence >= 0" },
        { COL_CORRELATION, !(fabs(s->correlation) < 1.0), "a correlation in (-1, 1)" },
    };
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++)
        if (rules[r].bad)
            return plan_spot_fail(p, s, col_name[rules[r].col], err,
                                  "%g is out of range; expected %s", *spot_field(s, rules[r].col),
                                  rules[r].expected);
    return 0; /* the grid's rules: plan_spot_check, once the grid's keys are settled */
}

int plan_spots_load(plan *p, smx_error *err)
{
    if (plan_resolve_data_file(p, "beam.spots_file", p->spots_file, p->spots_path, err))
        return SMX_EXIT_INPUT;
    /* Read once and kept: the result file stores these bytes, whatever
     * happens to the file during the run. */
    FILE *in = fopen(p->spots_path, "rb");
    if (!in)
        return plan_fail_at(p, err, "beam.spots_file", "'%s' could not be opened: %s",
                            p->spots_path, strerror(errno));
    size_t tcap = 1 << 16;
    p->spots_text = malloc(tcap);
    for (size_t got = 1; p->spots_text && got > 0;) {
        if (p->spots_len + 1 == tcap) {
            char *grown = tcap < SPOTS_MAX_BYTES ? realloc(p->spots_text, tcap * 2) : NULL;
            if (!grown) {
                fclose(in);
                return plan_fail_at(p, err, "beam.spots_file",
                                    "'%s' is larger than %u MB or memory ran out; "
                                    "expected a spot map",
                                    p->spots_path, SPOTS_MAX_BYTES >> 20);
            }
            p->spots_text = grown;
            tcap *= 2;
        }
        got = fread(p->spots_text + p->spots_len, 1, tcap - 1 - p->spots_len, in);
        p->spots_len += got;
    }
    int bad = !p->spots_text || ferror(in);
    fclose(in);
    if (bad)
        return plan_fail_at(p, err, "beam.spots_file", "'%s' could not be read", p->spots_path);
    p->spots_text[p->spots_len] = '\0';
    FILE *f = fmemopen(p->spots_text, p->spots_len + 1, "r");
    if (!f)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory reading %s", p->spots_path);
    char text[LINE_MAX_BYTES];
    spot_header header = { .ncells = 0 };
    int line = 0, have_header = 0, cap = 0, rc = 0;
    while (fgets(text, sizeof text, f)) {
        line++;
        size_t len = strlen(text);
        if (len + 1 == sizeof text && text[len - 1] != '\n') {
            rc = fail_at(p, err, line, 1,
                         "the line is longer than %d bytes; expected one spot per line",
                         LINE_MAX_BYTES - 2);
            break;
        }
        const char *b = text, *t = text + len;
        trim(&b, &t);
        if (b == t || *b == '#')
            continue;
        if (!have_header) {
            if ((rc = read_header(p, err, text, line, &header)))
                break;
            have_header = 1;
            continue;
        }
        if (p->n_spots == SPOTS_MAX) {
            rc = fail_at(p, err, line, 1, "more than %d spots; expected a spot map", SPOTS_MAX);
            break;
        }
        if (p->n_spots == cap) {
            cap = cap ? 2 * cap : 64;
            plan_spot *grown = realloc(p->spots, (size_t)cap * sizeof *grown);
            if (!grown) {
                rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory reading %s", p->spots_path);
                break;
            }
            p->spots = grown;
        }
        if ((rc = read_spot(p, err, text, line, &header, &p->spots[p->n_spots])))
            break;
        p->n_spots++;
    }
    fclose(f);
    if (!rc && p->n_spots == 0)
        rc = smx_fail(err, SMX_EXIT_INPUT,
                      "%s: %s (beam.spots_file); expected a header line naming the columns, "
                      "then one line per spot",
                      p->spots_path,
                      have_header ? "no spots after the header"
                                  : "no "
                                    "header and no spots");
    return rc ? SMX_EXIT_INPUT : 0;
}
