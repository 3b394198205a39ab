/* Plan reader: YAML text -> node tree -> struct plan, every step checked
 * against the schema table in plan_schema.c.
 *
 * Order of work: built-in defaults, then the file, then --set overrides, then
 * required keys, then the rules that tie keys together, then the table file.
 * The first problem found is the one reported: later ones are usually its
 * consequences, and a message that names one place is one the user can act on. */
#include "input/plan.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "input/yaml_tree.h"

/* A plan is a few kilobytes; anything this large is the wrong file. */
#define PLAN_MAX_BYTES (16u << 20)
#define SHOW_MAX 80
#define MAX_SECTIONS 32

/* ---- small helpers ---- */

/* Optimal-string-alignment distance: Levenshtein plus adjacent transpositions,
 * the commonest typo ("cdua" for "cuda"), at cost 1. */
static int edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
    /* Key names are short; longer inputs are never a typo of one. */
    if (la > 63 || lb > 63)
        return INT_MAX;
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        for (size_t j = 1; j <= lb; j++) {
            int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    }
    return d[la][lb];
}

static int close_enough(int dist, size_t len)
{
    int limit = (int)(len / 3);
    return dist <= (limit > 2 ? limit : 2);
}

/* Quotes user text for a message: bounded length, no control characters. */
static const char *show(const char *text, size_t len, char *buf, size_t n)
{
    size_t max = n - 4 < SHOW_MAX ? n - 4 : SHOW_MAX, o = 0;
    for (size_t i = 0; i < len && o < max; i++)
        buf[o++] = (unsigned char)text[i] < 0x20 || text[i] == 0x7f ? '?' : text[i];
    if (len > max) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o] = '\0';
    return buf;
}

static const char *show_node(const yt_node *v, char *buf, size_t n)
{
    return show(v->text, v->len, buf, n);
}

static int is_section(const char *path, size_t len)
{
    for (size_t i = 0; i < plan_key_count; i++)
        if (!strncmp(plan_keys[i].path, path, len) && plan_keys[i].path[len] == '.')
            return 1;
    return 0;
}

int plan_key_index(const char *path)
{
    if (!path)
        return -1;
    for (size_t i = 0; i < plan_key_count; i++)
        if (!strcmp(plan_keys[i].path, path))
            return (int)i;
    return -1;
}

/* The names directly under a section (prefix of length plen, "" = top level),
 * in table order. */
typedef struct names {
    const char *name[64];
    size_t len[64];
    size_t n;
} names;

static void names_under(const char *prefix, size_t plen, names *out)
{
    out->n = 0;
    for (size_t i = 0; i < plan_key_count; i++) {
        const char *path = plan_keys[i].path;
        if (plen && (strncmp(path, prefix, plen) || path[plen] != '.'))
            continue;
        const char *name = path + (plen ? plen + 1 : 0);
        size_t len = strcspn(name, ".");
        size_t j;
        for (j = 0; j < out->n; j++)
            if (out->len[j] == len && !strncmp(out->name[j], name, len))
                break;
        if (j == out->n && out->n < 64) {
            out->name[out->n] = name;
            out->len[out->n++] = len;
        }
    }
}

static void join_names(const names *nm, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < nm->n && o < n; i++) {
        int w = snprintf(buf + o, n - o, "%s%.*s", i ? ", " : "", (int)nm->len[i], nm->name[i]);
        if (w < 0)
            break;
        o += (size_t)w;
    }
}

/* Choices of an enum are "a|b|c"; returns the index of text, or -1. */
static int choice_index(const char *choices, const char *text)
{
    size_t tlen = strlen(text);
    int i = 0;
    for (const char *s = choices; *s; i++) {
        size_t len = strcspn(s, "|");
        if (len == tlen && !strncmp(s, text, len))
            return i;
        s += len;
        if (*s == '|')
            s++;
    }
    return -1;
}

static void choices_text(const char *choices, char *buf, size_t n)
{
    size_t o = 0;
    buf[0] = '\0';
    for (const char *s = choices; *s && o < n;) {
        size_t len = strcspn(s, "|");
        int w = snprintf(buf + o, n - o, "%s%.*s", s == choices ? "" : ", ", (int)len, s);
        if (w < 0)
            break;
        o += (size_t)w;
        s += len;
        if (*s == '|')
            s++;
    }
}

/* Best choice within typo distance of text: writes it to buf, returns 1. */
static int suggest_choice(const char *choices, const char *text, char *buf, size_t n)
{
    size_t tlen = strlen(text);
    int best = INT_MAX;
    for (const char *s = choices; *s;) {
        size_t len = strcspn(s, "|");
        int d = edit_distance(text, tlen, s, len);
        if (d < best) {
            best = d;
            snprintf(buf, n, "%.*s", (int)len, s);
        }
        s += len;
        if (*s == '|')
            s++;
    }
    return best != INT_MAX && close_enough(best, tlen);
}

/* ---- numbers ---- */

/* The YAML 1.2 core forms, and nothing strtod would accept beyond them
 * ("inf", "0x10", "1e", leading spaces). */
static int is_yaml_int(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

static int is_yaml_float(const char *s)
{
    int digits = 0;
    if (*s == '-' || *s == '+')
        s++;
    for (; *s >= '0' && *s <= '9'; s++)
        digits++;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++)
            digits++;
    if (!digits)
        return 0;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (*s < '0' || *s > '9')
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

/* 0 inside the key's range, -1 below, +1 above. */
static int range_side(const plan_key *k, double v)
{
    if (k->min_exclusive ? !(v > k->min) : !(v >= k->min))
        return -1;
    if (k->max_exclusive ? !(v < k->max) : !(v <= k->max))
        return 1;
    return 0;
}

void plan_format_real(double v, char *buf, size_t n)
{
    if (!isfinite(v)) {
        snprintf(buf, n, "%s", isnan(v) ? ".nan" : v > 0 ? ".inf" : "-.inf");
        return;
    }
    if (v == 0) {
        snprintf(buf, n, "0");
        return;
    }
    /* Fewest significant digits that read back exactly; positional notation
     * where that stays short, so 1000 is not written 1e+03. */
    char e[40];
    int digits;
    for (digits = 1; digits < 17; digits++) {
        snprintf(e, sizeof e, "%.*e", digits - 1, v);
        if (strtod(e, NULL) == v)
            break;
    }
    snprintf(e, sizeof e, "%.*e", digits - 1, v);
    int exp10 = atoi(strchr(e, 'e') + 1);
    if (exp10 >= -4 && exp10 < 16) {
        int decimals = digits - 1 - exp10;
        snprintf(buf, n, "%.*f", decimals > 0 ? decimals : 0, v);
    } else {
        /* YAML 1.1 readers (PyYAML) take 1e-06 for a string; 1.0e-06 is a float to all. */
        char *mark = strchr(e, 'e');
        if (strchr(e, '.'))
            snprintf(buf, n, "%s", e);
        else
            snprintf(buf, n, "%.*s.0%s", (int)(mark - e), e, mark);
    }
}

static void range_text(const plan_key *k, char *buf, size_t n)
{
    char lo[40], hi[40];
    plan_format_real(k->min, lo, sizeof lo);
    plan_format_real(k->max, hi, sizeof hi);
    int has_lo = isfinite(k->min), has_hi = isfinite(k->max);
    if (has_lo && has_hi)
        snprintf(buf, n, " in %c%s, %s%c", k->min_exclusive ? '(' : '[', lo, hi,
                 k->max_exclusive ? ')' : ']');
    else if (has_lo)
        snprintf(buf, n, " %s %s", k->min_exclusive ? ">" : ">=", lo);
    else if (has_hi)
        snprintf(buf, n, " %s %s", k->max_exclusive ? "<" : "<=", hi);
    else
        buf[0] = '\0';
}

void plan_key_expected(const plan_key *k, char *buf, size_t n)
{
    char range[100], list[200];
    range_text(k, range, sizeof range);
    const char *sp = k->units[0] ? " " : "";
    switch (k->type) {
    case PT_BOOL:
        snprintf(buf, n, "true or false");
        break;
    case PT_INT:
        snprintf(buf, n, "an integer%s%s%s", range, sp, k->units);
        break;
    case PT_REAL:
        if (range[0])
            snprintf(buf, n, "a number%s%s%s", range, sp, k->units);
        else if (k->units[0])
            snprintf(buf, n, "a number, in %s", k->units);
        else
            snprintf(buf, n, "a number");
        break;
    case PT_STRING:
        snprintf(buf, n, "a non-empty string");
        break;
    case PT_ENUM:
        choices_text(k->choices, list, sizeof list);
        snprintf(buf, n, "one of %s", list);
        break;
    case PT_INT_OR_AUTO:
        snprintf(buf, n, "auto or an integer%s", range);
        break;
    case PT_INT_LIST:
        snprintf(buf, n, "a list of at most %zu integers%s, e.g. [100, 200]", k->size, range);
        break;
    case PT_OP_LIST:
        choices_text(k->choices, list, sizeof list);
        snprintf(buf, n, "a list holding each of %s once", list);
        break;
    default:
        snprintf(buf, n, "a value");
    }
}

/* ---- writing values ---- */

void plan_write_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Plain YAML when the text cannot be mistaken for anything but a string by any
 * YAML reader; double-quoted otherwise. */
static void yaml_write_string(FILE *f, const char *s)
{
    int plain = s[0] != '\0' && !is_yaml_float(s) && strcmp(s, "true") && strcmp(s, "false") &&
                strcmp(s, "null") && strcmp(s, "~") && strcmp(s, "auto");
    for (const char *c = s; plain && *c; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '_' || *c == '.' || *c == '/' ||
                 (c != s && (*c == '-' || *c == '+'));
        plain = ok;
    }
    if (plain) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", f);
        else if (c == '\t')
            fputs("\\t", f);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void write_name(FILE *f, const char *name, int json)
{
    if (json)
        plan_write_json_string(f, name);
    else
        fputs(name, f);
}

void plan_write_value(FILE *f, const plan *p, const plan_key *k, int json)
{
    const char *base = (const char *)p + k->offset;
    const int *ints = (const int *)(const void *)base;
    char num[40];
    switch (k->type) {
    case PT_BOOL:
        fputs(ints[0] ? "true" : "false", f);
        break;
    case PT_INT:
        fprintf(f, "%d", ints[0]);
        break;
    case PT_REAL:
        plan_format_real(*(const double *)(const void *)base, num, sizeof num);
        fputs(num, f);
        break;
    case PT_STRING:
        if (json)
            plan_write_json_string(f, base);
        else
            yaml_write_string(f, base);
        break;
    case PT_ENUM: {
        const char *name = plan_choice_name(k->path, ints[0]);
        write_name(f, name ? name : "?", json);
        break;
    }
    case PT_INT_OR_AUTO:
        if (ints[0] == 0)
            write_name(f, "auto", json);
        else
            fprintf(f, "%d", ints[0]);
        break;
    case PT_INT_LIST: {
        int count = ints[k->size];
        fputc('[', f);
        for (int i = 0; i < count; i++)
            fprintf(f, "%s%d", i ? ", " : "", ints[i]);
        fputc(']', f);
        break;
    }
    case PT_OP_LIST:
        fputc('[', f);
        for (size_t i = 0; i < k->size; i++) {
            const char *name = plan_choice_name(k->path, ints[i]);
            fputs(i ? ", " : "", f);
            write_name(f, name ? name : "?", json);
        }
        fputc(']', f);
        break;
    }
}

/* ---- choice names ----
 * Split once into NUL-terminated copies, so that callers get stable pointers. */

#define CHOICE_STORE 2048
#define CHOICES_MAX 16

static char choice_store[CHOICE_STORE];
static const char *choice_names[128][CHOICES_MAX];
static pthread_once_t choice_once = PTHREAD_ONCE_INIT;

static void split_choices(void)
{
    size_t used = 0;
    for (size_t i = 0; i < plan_key_count && i < 128; i++) {
        const char *s = plan_keys[i].choices;
        for (int j = 0; s && *s && j < CHOICES_MAX; j++) {
            size_t len = strcspn(s, "|");
            if (used + len + 1 > CHOICE_STORE)
                return;
            memcpy(choice_store + used, s, len);
            choice_store[used + len] = '\0';
            choice_names[i][j] = choice_store + used;
            used += len + 1;
            s += len;
            if (*s == '|')
                s++;
        }
    }
}

const char *plan_choice_name(const char *path, int index)
{
    int ki = plan_key_index(path);
    if (ki < 0 || ki >= 128 || index < 0 || index >= CHOICES_MAX)
        return NULL;
    pthread_once(&choice_once, split_choices);
    return choice_names[ki][index];
}

/* ---- the loader ---- */

typedef struct section_mark {
    char path[64];
    int line, col;
} section_mark;

typedef struct loader {
    plan *p;
    smx_error *err;
    const char *file;     /* plan path as given */
    const char *cli;      /* the --set argument being applied, else NULL */
    int defaults;         /* applying the table's own defaults */
    int *key_line, *key_col; /* where each key was written in the file */
    /* Sections seen, so that a missing required key can point at its section. */
    section_mark sec[MAX_SECTIONS];
    int nsec;
} loader;

static int fail(loader *L, const yt_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(loader *L, const yt_node *at, const char *fmt, ...)
{
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->cli)
        return smx_fail(L->err, SMX_EXIT_INPUT, "--set %s: %s", L->cli, msg);
    if (L->defaults)
        return smx_fail(L->err, SMX_EXIT_INPUT, "built-in default: %s", msg);
    if (at && at->line)
        return smx_fail(L->err, SMX_EXIT_INPUT, "%s:%d:%d: %s", L->file, at->line, at->col, msg);
    return smx_fail(L->err, SMX_EXIT_INPUT, "%s: %s", L->file, msg);
}

static int need_scalar(loader *L, const char *name, const yt_node *v, const char *expected)
{
    if (yt_is_null(v))
        return fail(L, v, "%s: no value; expected %s", name, expected);
    if (v->kind != YT_SCALAR)
        return fail(L, v, "%s: got %s; expected %s", name, yt_kind_name(v), expected);
    if (strlen(v->text) != v->len)
        return fail(L, v, "%s: value contains a NUL character; expected %s", name, expected);
    return 0;
}

static int parse_int(loader *L, const plan_key *k, const char *name, const yt_node *v,
                     int allow_auto, const char *expected, int *out)
{
    char shown[SHOW_MAX + 4];
    if (need_scalar(L, name, v, expected))
        return SMX_EXIT_INPUT;
    show_node(v, shown, sizeof shown);
    if (allow_auto && !strcmp(v->text, "auto")) {
        *out = 0;
        return 0;
    }
    if (v->quoted)
        return fail(L, v, "%s: '%s' is a quoted string; expected %s", name, shown, expected);
    if (!is_yaml_int(v->text)) {
        if (allow_auto)
            return fail(L, v, "%s: '%s' is neither an integer nor auto; expected %s", name,
                        shown, expected);
        return fail(L, v, "%s: '%s' is not an integer; expected %s", name, shown, expected);
    }
    long long x = strtoll(v->text, NULL, 10);
    /* strtoll saturates on overflow, which the range check then reports. */
    int side = x > INT_MAX ? 1 : x < INT_MIN ? -1 : range_side(k, (double)x);
    if (side)
        return fail(L, v, "%s: %s is too %s; expected %s", name, shown,
                    side < 0 ? "small" : "large", expected);
    *out = (int)x;
    return 0;
}

static int parse_real(loader *L, const plan_key *k, const char *name, const yt_node *v,
                      double *out)
{
    char expected[300], shown[SHOW_MAX + 4];
    plan_key_expected(k, expected, sizeof expected);
    if (need_scalar(L, name, v, expected))
        return SMX_EXIT_INPUT;
    show_node(v, shown, sizeof shown);
    if (v->quoted)
        return fail(L, v, "%s: '%s' is a quoted string; expected %s", name, shown, expected);
    if (!is_yaml_float(v->text))
        return fail(L, v, "%s: '%s' is not a number; expected %s", name, shown, expected);
    double x = strtod(v->text, NULL);
    int side = isfinite(x) ? range_side(k, x) : (x > 0 ? 1 : -1);
    if (side)
        return fail(L, v, "%s: %s is too %s; expected %s", name, shown,
                    side < 0 ? "small" : "large", expected);
    *out = x;
    return 0;
}

static int parse_choice(loader *L, const plan_key *k, const char *name, const yt_node *v,
                        const char *expected, int *out)
{
    char shown[SHOW_MAX + 4], near[64];
    if (need_scalar(L, name, v, expected))
        return SMX_EXIT_INPUT;
    int i = choice_index(k->choices, v->text);
    if (i >= 0) {
        *out = i;
        return 0;
    }
    show_node(v, shown, sizeof shown);
    if (suggest_choice(k->choices, v->text, near, sizeof near))
        return fail(L, v, "%s: '%s' is not allowed (did you mean '%s'?); expected %s", name,
                    shown, near, expected);
    return fail(L, v, "%s: '%s' is not allowed; expected %s", name, shown, expected);
}

/* Checks v against key ki and stores it in the plan. */
static int assign(loader *L, int ki, const yt_node *v)
{
    const plan_key *k = &plan_keys[ki];
    char *base = (char *)L->p + k->offset;
    int *ints = (int *)(void *)base;
    char expected[300], shown[SHOW_MAX + 4], name[128];
    plan_key_expected(k, expected, sizeof expected);

    switch (k->type) {
    case PT_BOOL:
        if (need_scalar(L, k->path, v, expected))
            return SMX_EXIT_INPUT;
        show_node(v, shown, sizeof shown);
        if (v->quoted)
            return fail(L, v, "%s: '%s' is a quoted string; expected %s", k->path, shown,
                        expected);
        if (!strcmp(v->text, "true") || !strcmp(v->text, "True") || !strcmp(v->text, "TRUE"))
            ints[0] = 1;
        else if (!strcmp(v->text, "false") || !strcmp(v->text, "False") ||
                 !strcmp(v->text, "FALSE"))
            ints[0] = 0;
        else
            return fail(L, v, "%s: '%s' is not a boolean; expected %s", k->path, shown,
                        expected);
        return 0;
    case PT_INT:
        return parse_int(L, k, k->path, v, 0, expected, ints);
    case PT_INT_OR_AUTO:
        return parse_int(L, k, k->path, v, 1, expected, ints);
    case PT_REAL:
        return parse_real(L, k, k->path, v, (double *)(void *)base);
    case PT_ENUM:
        return parse_choice(L, k, k->path, v, expected, ints);
    case PT_STRING:
        if (need_scalar(L, k->path, v, expected))
            return SMX_EXIT_INPUT;
        show_node(v, shown, sizeof shown);
        if (v->len == 0)
            return fail(L, v, "%s: the string is empty; expected %s", k->path, expected);
        if (v->len >= k->size)
            return fail(L, v, "%s: '%s' is %zu bytes long; expected at most %zu", k->path,
                        shown, v->len, k->size - 1);
        memcpy(base, v->text, v->len + 1);
        return 0;
    case PT_INT_LIST:
    case PT_OP_LIST: {
        if (yt_is_null(v))
            return fail(L, v, "%s: no value; expected %s", k->path, expected);
        if (v->kind == YT_SCALAR)
            return fail(L, v, "%s: got a scalar '%s'; expected %s", k->path,
                        show_node(v, shown, sizeof shown), expected);
        if (v->kind != YT_SEQUENCE)
            return fail(L, v, "%s: got %s; expected %s", k->path, yt_kind_name(v), expected);
        if (k->type == PT_INT_LIST ? v->n > k->size : v->n != k->size)
            return fail(L, v, "%s: the list has %zu entries; expected %s", k->path, v->n,
                        expected);
        int tmp[PLAN_MAX_SNAPSHOTS];
        if (v->n > PLAN_MAX_SNAPSHOTS)
            return fail(L, v, "%s: list longer than the reader's buffer", k->path);
        /* An entry is judged on its own: "-5 is too small; expected an integer >= 0". */
        char item_expected[300], range[100], list[200];
        if (k->type == PT_INT_LIST) {
            range_text(k, range, sizeof range);
            snprintf(item_expected, sizeof item_expected, "an integer%s", range);
        } else {
            choices_text(k->choices, list, sizeof list);
            snprintf(item_expected, sizeof item_expected, "one of %s", list);
        }
        for (size_t i = 0; i < v->n; i++) {
            const yt_node *item = v->items[i];
            snprintf(name, sizeof name, "%s[%zu]", k->path, i);
            int rc = k->type == PT_INT_LIST
                         ? parse_int(L, k, name, item, 0, item_expected, &tmp[i])
                         : parse_choice(L, k, name, item, item_expected, &tmp[i]);
            if (rc)
                return rc;
            if (k->type == PT_OP_LIST)
                for (size_t j = 0; j < i; j++)
                    if (tmp[j] == tmp[i])
                        return fail(L, item, "%s: '%s' appears twice; expected %s", name,
                                    show_node(item, shown, sizeof shown), expected);
        }
        memcpy(ints, tmp, v->n * sizeof *tmp);
        if (k->type == PT_INT_LIST)
            ints[k->size] = (int)v->n;
        return 0;
    }
    }
    return fail(L, v, "%s: key of unknown type %d in the schema table", k->path, k->type);
}

/* Parses a default or a --set value as YAML, so it follows the same rules as
 * the file (flow lists, quoting, null). */
static int assign_text(loader *L, int ki, const char *text)
{
    yt_node *v = NULL;
    yt_error ye;
    if (yt_parse(text, strlen(text), &v, &ye)) {
        /* libyaml's positions would count within the value, not the command line. */
        char expected[300], shown[SHOW_MAX + 4];
        plan_key_expected(&plan_keys[ki], expected, sizeof expected);
        return fail(L, NULL, "%s: '%s' is not valid YAML; expected %s", plan_keys[ki].path,
                    show(text, strlen(text), shown, sizeof shown), expected);
    }
    int rc = assign(L, ki, v);
    yt_free(v);
    return rc;
}

int plan_set_defaults(plan *p, smx_error *err)
{
    loader L = { .p = p, .err = err, .file = "", .defaults = 1 };
    for (size_t i = 0; i < plan_key_count; i++) {
        const char *d = plan_keys[i].default_value;
        if (!d || !d[0])
            continue;
        if (assign_text(&L, (int)i, d))
            return SMX_EXIT_INPUT;
        if (p->loc)
            p->loc[i] = (plan_loc){ 0, 0, 0 };
    }
    return 0;
}

static void record_section(loader *L, const char *path, const yt_node *at)
{
    for (int i = 0; i < L->nsec; i++)
        if (!strcmp(L->sec[i].path, path))
            return;
    size_t len = strlen(path);
    if (L->nsec == MAX_SECTIONS || len >= sizeof L->sec[0].path)
        return;
    section_mark *s = &L->sec[L->nsec++];
    memcpy(s->path, path, len + 1);
    s->line = at->line;
    s->col = at->col;
}

static int unknown_key(loader *L, const yt_node *at, const char *path, size_t plen,
                       const char *name, size_t nlen)
{
    names nm;
    char list[600], full[300];
    names_under(path, plen, &nm);
    snprintf(full, sizeof full, "%.*s%s%.*s", (int)plen, path, plen ? "." : "",
             nlen > 100 ? 100 : (int)nlen, name);
    int best = INT_MAX;
    size_t bi = 0;
    for (size_t i = 0; i < nm.n; i++) {
        int d = edit_distance(name, nlen, nm.name[i], nm.len[i]);
        if (d < best) {
            best = d;
            bi = i;
        }
    }
    if (best != INT_MAX && close_enough(best, nlen))
        return fail(L, at, "unknown key '%s'; did you mean '%.*s'?", full, (int)nm.len[bi],
                    nm.name[bi]);
    join_names(&nm, list, sizeof list);
    return fail(L, at, "unknown key '%s'; expected one of %s", full, list);
}

static int walk_mapping(loader *L, const yt_node *m, const char *prefix);

/* One "key: value" pair of the file; a key may be a dotted path. */
static int walk_pair(loader *L, const yt_node *key, const yt_node *val, const char *prefix)
{
    char path[256], shown[SHOW_MAX + 4];
    names nm;
    char list[600];
    if (key->kind != YT_SCALAR || strlen(key->text) != key->len) {
        names_under(prefix, strlen(prefix), &nm);
        join_names(&nm, list, sizeof list);
        return fail(L, key, "%s%sa key must be a name, not %s; expected one of %s", prefix,
                    prefix[0] ? ": " : "", key->kind == YT_SCALAR ? "text with NUL" :
                    yt_kind_name(key), list);
    }
    snprintf(path, sizeof path, "%s", prefix);
    const char *s = key->text;
    for (;;) {
        size_t plen = strlen(path);
        size_t len = strcspn(s, ".");
        if (plen + 1 + len >= sizeof path)
            return unknown_key(L, key, path, plen, s, len);
        snprintf(path + plen, sizeof path - plen, "%s%.*s", plen ? "." : "", (int)len, s);
        int ki = plan_key_index(path);
        if (ki >= 0) {
            if (s[len] == '.')
                return fail(L, key, "unknown key '%s%s%s'; %s is a key, not a section", prefix,
                            prefix[0] ? "." : "", show(key->text, key->len, shown, sizeof shown),
                            path);
            if (L->key_line[ki])
                return fail(L, key, "%s: duplicate key, first given at %d:%d; expected each "
                            "key once", path, L->key_line[ki], L->key_col[ki]);
            if (assign(L, ki, val))
                return SMX_EXIT_INPUT;
            L->key_line[ki] = key->line;
            L->key_col[ki] = key->col;
            L->p->loc[ki] = (plan_loc){ val->line, val->col, 0 };
            return 0;
        }
        if (!len || !is_section(path, strlen(path)))
            return unknown_key(L, key, path, plen, s, len);
        record_section(L, path, key);
        if (s[len] != '.')
            break;
        s += len + 1;
    }
    if (yt_is_null(val))
        return 0;   /* "backend:" with nothing under it: all defaults */
    if (val->kind != YT_MAPPING) {
        names_under(path, strlen(path), &nm);
        join_names(&nm, list, sizeof list);
        if (val->kind == YT_SCALAR)
            return fail(L, val, "%s: got a scalar '%s'; expected a mapping with keys %s", path,
                        show_node(val, shown, sizeof shown), list);
        return fail(L, val, "%s: got %s; expected a mapping with keys %s", path,
                    yt_kind_name(val), list);
    }
    return walk_mapping(L, val, path);
}

static int walk_mapping(loader *L, const yt_node *m, const char *prefix)
{
    for (size_t i = 0; i < m->n; i++) {
        const yt_node *key = m->items[2 * i];
        /* Sections repeated under one parent would otherwise merge silently. */
        for (size_t j = 0; key->kind == YT_SCALAR && j < i; j++) {
            const yt_node *other = m->items[2 * j];
            if (other->kind == YT_SCALAR && other->len == key->len &&
                !memcmp(other->text, key->text, key->len)) {
                char shown[SHOW_MAX + 4];
                return fail(L, key, "%s%s%s: duplicate key, first given at %d:%d; expected each "
                            "key once", prefix, prefix[0] ? "." : "",
                            show_node(key, shown, sizeof shown), other->line, other->col);
            }
        }
        if (walk_pair(L, key, m->items[2 * i + 1], prefix))
            return SMX_EXIT_INPUT;
    }
    return 0;
}

static int apply_override(loader *L, const char *arg)
{
    const char *eq = strchr(arg, '=');
    char key[256], shown[SHOW_MAX + 4];
    L->cli = arg;
    if (!eq) {
        L->cli = NULL;
        return smx_fail(L->err, SMX_EXIT_INPUT,
                        "--set %s: missing '='; expected --set key.path=value, e.g. "
                        "--set beam.energy_MeV=150", show(arg, strlen(arg), shown, sizeof shown));
    }
    size_t klen = (size_t)(eq - arg);
    if (klen == 0)
        return fail(L, NULL, "no key before '='; expected --set key.path=value");
    snprintf(key, sizeof key, "%.*s", klen < sizeof key ? (int)klen : (int)sizeof key - 1, arg);
    int ki = plan_key_index(key);
    if (ki < 0) {
        if (is_section(key, strlen(key))) {
            names nm;
            char list[600];
            names_under(key, strlen(key), &nm);
            join_names(&nm, list, sizeof list);
            return fail(L, NULL, "'%s' is a section; expected a full key path, %s.NAME with "
                        "NAME one of %s", key, key, list);
        }
        /* A key given without its section (E_max_MeV) counts as a near miss too. */
        int best = INT_MAX, bi = -1;
        int bare = strchr(key, '.') == NULL;
        for (size_t i = 0; i < plan_key_count; i++) {
            const char *path = plan_keys[i].path;
            int d = edit_distance(key, strlen(key), path, strlen(path));
            if (bare) {
                const char *leaf = strrchr(path, '.') + 1;
                int dl = edit_distance(key, strlen(key), leaf, strlen(leaf));
                if (dl < d)
                    d = dl;
            }
            if (d < best) {
                best = d;
                bi = (int)i;
            }
        }
        if (bi >= 0 && close_enough(best, strlen(key)))
            return fail(L, NULL, "unknown key '%s'; did you mean '%s'?", key, plan_keys[bi].path);
        return fail(L, NULL, "unknown key '%s'; expected a key path such as beam.energy_MeV "
                    "(smx2d-sim --print-reference-plan lists them all)", key);
    }
    if (assign_text(L, ki, eq + 1))
        return SMX_EXIT_INPUT;
    L->p->loc[ki] = (plan_loc){ 0, 0, 1 };
    L->cli = NULL;
    return 0;
}

static int given(const plan *p, int ki)
{
    return p->loc[ki].line > 0 || p->loc[ki].from_cli;
}

static int check_required(loader *L)
{
    for (size_t i = 0; i < plan_key_count; i++) {
        const plan_key *k = &plan_keys[i];
        if (k->default_value || given(L->p, (int)i))
            continue;
        char what[600];
        if (k->units[0])
            snprintf(what, sizeof what, "%s, %s", k->doc, k->units);
        else
            snprintf(what, sizeof what, "%s", k->doc);
        /* Point at the nearest enclosing section the file does have. */
        const section_mark *best = NULL;
        size_t best_len = 0;
        for (int s = 0; s < L->nsec; s++) {
            size_t len = strlen(L->sec[s].path);
            if (!strncmp(k->path, L->sec[s].path, len) && k->path[len] == '.' && len > best_len) {
                best = &L->sec[s];
                best_len = len;
            }
        }
        if (best)
            return smx_fail(L->err, SMX_EXIT_INPUT, "%s:%d:%d: missing required key '%s' (%s)",
                            L->file, best->line, best->col, k->path, what);
        return smx_fail(L->err, SMX_EXIT_INPUT, "%s: missing required key '%s' (%s)", L->file,
                        k->path, what);
    }
    return 0;
}

static const char *num(double v, char *buf)
{
    plan_format_real(v, buf, 40);
    return buf;
}

static int check_consistency(const plan *p, smx_error *err)
{
    char a[40], b[40], c[40], d[40], e[40];
    int bins = plan_key_index("grid.energy.n_bins");

    if (p->energy_kind == EGRID_UNIFORM && !given(p, bins))
        return plan_fail_at(p, err, "grid.energy.kind",
                            "uniform grids need grid.energy.n_bins; expected n_bins (an integer "
                            "in [1, 100000]) next to kind: uniform");
    if (p->energy_kind == EGRID_RANGE && given(p, bins))
        return plan_fail_at(p, err, "grid.energy.n_bins",
                            "range grids derive the bin count from transport.step_mm; expected "
                            "no n_bins, or kind: uniform");
    if (!(p->E_max_MeV > p->E_min_MeV))
        return plan_fail_at(p, err, "grid.energy.E_max_MeV",
                            "%s is not above grid.energy.E_min_MeV = %s; expected E_max > E_min",
                            num(p->E_max_MeV, a), num(p->E_min_MeV, b));
    if (p->E_cutoff_MeV < p->E_min_MeV)
        return plan_fail_at(p, err, "grid.energy.E_cutoff_MeV",
                            "%s is below grid.energy.E_min_MeV = %s; expected a cutoff >= E_min",
                            num(p->E_cutoff_MeV, a), num(p->E_min_MeV, b));
    if (!(p->E_cutoff_MeV < p->E_max_MeV))
        return plan_fail_at(p, err, "grid.energy.E_cutoff_MeV",
                            "%s is not below grid.energy.E_max_MeV = %s; expected a cutoff < E_max",
                            num(p->E_cutoff_MeV, a), num(p->E_max_MeV, b));
    if (p->beam_energy_MeV > p->E_max_MeV || p->beam_energy_MeV < p->E_cutoff_MeV) {
        int above = p->beam_energy_MeV > p->E_max_MeV;
        return plan_fail_at(p, err, "beam.energy_MeV",
                            "%s is %s grid.energy.%s = %s; expected a beam energy in "
                            "[E_cutoff, E_max] = [%s, %s] MeV",
                            num(p->beam_energy_MeV, a), above ? "above" : "below",
                            above ? "E_max_MeV" : "E_cutoff_MeV",
                            num(above ? p->E_max_MeV : p->E_cutoff_MeV, b),
                            num(p->E_cutoff_MeV, c), num(p->E_max_MeV, d));
    }
    double half = 0.5 * p->nx * p->dx_mm;
    if (fabs(p->beam_x_mm) > half)
        return plan_fail_at(p, err, "beam.x_mm",
                            "%s is outside the domain, x = -%s to %s mm (grid.space.nx %d x "
                            "dx_mm %s); expected |x_mm| <= %s",
                            num(p->beam_x_mm, a), num(half, b), num(half, c), p->nx,
                            num(p->dx_mm, d), num(half, b));
    if (p->angle_mode == ANGLE_WINDOW) {
        /* Compare on the circle: a window centred at 350 deg contains 5 deg. */
        double off = fmod(p->beam_direction_deg - p->angle_centre_deg, 360.0);
        if (off > 180.0)
            off -= 360.0;
        if (off < -180.0)
            off += 360.0;
        if (fabs(off) > p->angle_half_width_deg)
            return plan_fail_at(p, err, "beam.direction_deg",
                                "%s is outside the angular window %s to %s deg "
                                "(grid.angle.centre_deg %s +- half_width_deg %s); expected a "
                                "direction inside the window, or grid.angle.mode: full",
                                num(p->beam_direction_deg, a),
                                num(p->angle_centre_deg - p->angle_half_width_deg, b),
                                num(p->angle_centre_deg + p->angle_half_width_deg, c),
                                num(p->angle_centre_deg, d),
                                num(p->angle_half_width_deg, e));
    }
    return 0;
}

static int readable_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && !S_ISDIR(st.st_mode) && access(path, R_OK) == 0;
}

/* Appends "dir/name" to the tried list; returns 1 (and sets table_path) if it is there. */
static int try_table(plan *p, const char *dir, const char *name, char *tried, size_t tried_size)
{
    char cand[PLAN_PATH_MAX];
    int n = snprintf(cand, sizeof cand, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= sizeof cand)
        return 0;
    size_t used = strlen(tried);
    snprintf(tried + used, tried_size - used, "%s%s", used ? ", " : "", cand);
    if (!readable_file(cand))
        return 0;
    memcpy(p->table_path, cand, (size_t)n + 1);
    return 1;
}

static int resolve_table(plan *p, smx_error *err)
{
    const char *name = p->table_file;
    char tried[4 * PLAN_PATH_MAX + 16] = "";
    char shown[SHOW_MAX + 4];

    if (name[0] == '/') {
        if (readable_file(name)) {
            snprintf(p->table_path, sizeof p->table_path, "%s", name);
            return 0;
        }
        return plan_fail_at(p, err, "material.table_file",
                            "'%s' was not found or is not readable; expected an existing file",
                            show(name, strlen(name), shown, sizeof shown));
    }
    if (try_table(p, p->dir, name, tried, sizeof tried))
        return 0;
    const char *env = getenv("SMX2D_DATA_DIR");
    if (env && env[0]) {
        if (try_table(p, env, name, tried, sizeof tried))
            return 0;
    } else {
        /* Say so: an unset variable is the usual reason for this error. */
        size_t used = strlen(tried);
        snprintf(tried + used, sizeof tried - used, ", $SMX2D_DATA_DIR (not set)");
    }
    char exe[PLAN_PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            char dir[PLAN_PATH_MAX];
            *slash = '\0';
            int w = snprintf(dir, sizeof dir, "%s/../share/smx2d-sim/data", exe);
            if (w > 0 && (size_t)w < sizeof dir && try_table(p, dir, name, tried, sizeof tried))
                return 0;
        }
    }
#ifdef SMX_SOURCE_DATA_DIR
    if (try_table(p, SMX_SOURCE_DATA_DIR, name, tried, sizeof tried))
        return 0;
#endif
    return plan_fail_at(p, err, "material.table_file",
                        "'%s' was not found; tried %s; expected a readable file, relative to "
                        "the plan's directory or in $SMX2D_DATA_DIR",
                        show(name, strlen(name), shown, sizeof shown), tried);
}

static int read_file(plan *p, const char *path, smx_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot open the plan: %s", path,
                        strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : -1;
    while (!rc) {
        if (len + 1 == cap) {
            char *grown = cap < PLAN_MAX_BYTES ? realloc(buf, cap * 2) : NULL;
            if (cap >= PLAN_MAX_BYTES)
                rc = smx_fail(err, SMX_EXIT_INPUT, "%s: the file is larger than %u MiB; "
                              "expected a plan of a few kilobytes", path, PLAN_MAX_BYTES >> 20);
            else if (!grown)
                rc = -1;
            if (rc)
                break;
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                rc = smx_fail(err, SMX_EXIT_INPUT, "%s: cannot read the plan: %s", path,
                              strerror(errno));
            break;
        }
    }
    fclose(f);
    if (rc) {
        free(buf);
        return rc < 0 ? smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory reading the plan",
                                 path)
                      : rc;
    }
    buf[len] = '\0';
    p->yaml_text = buf;
    p->yaml_len = len;
    return 0;
}

static void set_dir(plan *p)
{
    const char *slash = strrchr(p->path, '/');
    if (!slash)
        snprintf(p->dir, sizeof p->dir, ".");
    else if (slash == p->path)
        snprintf(p->dir, sizeof p->dir, "/");
    else
        snprintf(p->dir, sizeof p->dir, "%.*s", (int)(slash - p->path), p->path);
}

static int load(plan *p, const char *path, const char *const *overrides, int n_overrides,
                smx_error *err, loader *L)
{
    if (strlen(path) >= sizeof p->path)
        return smx_fail(err, SMX_EXIT_INPUT, "%.200s...: the plan's path is longer than %d "
                        "bytes", path, PLAN_PATH_MAX - 1);
    snprintf(p->path, sizeof p->path, "%s", path);
    set_dir(p);
    p->loc = calloc(plan_key_count, sizeof *p->loc);
    L->key_line = calloc(plan_key_count, sizeof *L->key_line);
    L->key_col = calloc(plan_key_count, sizeof *L->key_col);
    if (!p->loc || !L->key_line || !L->key_col)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", path);
    if (plan_set_defaults(p, err))
        return SMX_EXIT_INPUT;
    if (read_file(p, path, err))
        return err->code ? err->code : SMX_EXIT_INPUT;

    yt_node *root = NULL;
    yt_error ye;
    if (yt_parse(p->yaml_text, p->yaml_len, &root, &ye)) {
        if (ye.line)
            return smx_fail(err, SMX_EXIT_INPUT, "%s:%d:%d: %s", path, ye.line, ye.col, ye.msg);
        return smx_fail(err, SMX_EXIT_INPUT, "%s: %s", path, ye.msg);
    }
    names top;
    char list[600];
    names_under("", 0, &top);
    join_names(&top, list, sizeof list);
    int rc;
    if (!root)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s: the plan is empty; expected a mapping with "
                      "sections %s", path, list);
    else if (root->kind != YT_MAPPING)
        rc = smx_fail(err, SMX_EXIT_INPUT, "%s:%d:%d: the top level is %s; expected a mapping "
                      "with sections %s", path, root->line, root->col, yt_kind_name(root), list);
    else
        rc = walk_mapping(L, root, "");
    yt_free(root);
    if (rc)
        return rc;

    for (int i = 0; i < n_overrides; i++)
        if (apply_override(L, overrides[i]))
            return SMX_EXIT_INPUT;
    if (check_required(L) || check_consistency(p, err) || resolve_table(p, err))
        return SMX_EXIT_INPUT;
    return 0;
}

int plan_load(plan *p, const char *path, const char *const *overrides, int n_overrides,
              smx_error *err)
{
    memset(p, 0, sizeof *p);
    loader L = { .p = p, .err = err, .file = path };
    int rc = load(p, path, overrides, n_overrides, err, &L);
    free(L.key_line);
    free(L.key_col);
    if (rc) {
        plan_free(p);
        /* A caller that passed an error struct already holding a message still
         * gets a non-zero code back. */
        return rc;
    }
    return 0;
}

void plan_free(plan *p)
{
    if (!p)
        return;
    free(p->yaml_text);
    free(p->loc);
    p->yaml_text = NULL;
    p->yaml_len = 0;
    p->loc = NULL;
}

int plan_fail_at(const plan *p, smx_error *err, const char *path, const char *fmt, ...)
{
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    int ki = plan_key_index(path);
    const plan_loc *loc = ki >= 0 && p->loc ? &p->loc[ki] : NULL;
    if (loc && loc->from_cli) {
        char *val = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&val, &len);
        if (f) {
            plan_write_value(f, p, &plan_keys[ki], 0);
            if (fclose(f) != 0) {
                free(val);
                val = NULL;
            }
        }
        smx_fail(err, SMX_EXIT_INPUT, "--set %s=%.200s: %s: %s", path, val ? val : "?", path,
                 msg);
        free(val);
        return SMX_EXIT_INPUT;
    }
    if (loc && loc->line > 0)
        return smx_fail(err, SMX_EXIT_INPUT, "%s:%d:%d: %s: %s", p->path, loc->line, loc->col,
                        path, msg);
    if (path)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: %s: %s", p->path, path, msg);
    return smx_fail(err, SMX_EXIT_INPUT, "%s: %s", p->path, msg);
}

void plan_write_resolved(FILE *f, const plan *p)
{
    for (size_t i = 0; i < plan_key_count; i++) {
        const plan_key *k = &plan_keys[i];
        int set = p->loc && (p->loc[i].line > 0 || p->loc[i].from_cli);
        int optional = k->default_value && !k->default_value[0];
        /* Without locations, an optional int left at 0 is taken as not given. */
        if (optional && (p->loc ? !set : !*(const int *)(const void *)((const char *)p + k->offset))) {
            /* An optional key without a default that the plan left out. */
            fprintf(f, "# %s: not set\n", k->path);
            continue;
        }
        fprintf(f, "%s: ", k->path);
        plan_write_value(f, p, k, 0);
        if (p->loc && p->loc[i].from_cli)
            fputs("  # --set", f);
        else if (p->loc && !set)
            fputs("  # default", f);
        fputc('\n', f);
    }
}

char *plan_resolved_text(const plan *p)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    plan_write_resolved(f, p);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}
