/* One value checked against its schema row (type, range, choices) and stored
 * in the plan; the built-in defaults go through the same path. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input/plan_internal.h"

int loader_fail(loader *L, const yt_node *at, const char *fmt, ...)
{
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->cli)
        return smx_fail(L->err, SMX_EXIT_INPUT, "%s: %s", L->cli, msg);
    if (L->defaults)
        return smx_fail(L->err, SMX_EXIT_INPUT, "built-in default: %s", msg);
    if (at && at->line)
        return smx_fail(L->err, SMX_EXIT_INPUT, "%s:%d:%d: %s", L->file, at->line, at->col, msg);
    return smx_fail(L->err, SMX_EXIT_INPUT, "%s: %s", L->file, msg);
}

static int need_scalar(loader *L, const char *name, const yt_node *v, const char *expected)
{
    if (yt_is_null(v))
        return loader_fail(L, v, "%s: no value; expected %s", name, expected);
    if (v->kind != YT_SCALAR)
        return loader_fail(L, v, "%s: got %s; expected %s", name, yt_kind_name(v), expected);
    if (strlen(v->text) != v->len)
        return loader_fail(L, v, "%s: value contains a NUL character; expected %s", name, expected);
    return 0;
}

/* An integer, or "auto" (0) for a key of type PT_INT_OR_AUTO. */
static int parse_int(loader *L, const plan_key *k, const char *name, const yt_node *v,
                     const char *expected, int *out)
{
    const int allow_auto = k->type == PT_INT_OR_AUTO;
    char shown[SHOW_MAX + 4];
    if (need_scalar(L, name, v, expected))
        return SMX_EXIT_INPUT;
    plan_show_node(v, shown, sizeof shown);
    if (allow_auto && !strcmp(v->text, "auto")) {
        *out = 0;
        return 0;
    }
    if (v->quoted)
        return loader_fail(L, v, "%s: '%s' is a quoted string; expected %s", name, shown, expected);
    if (!plan_is_yaml_int(v->text)) {
        if (allow_auto)
            return loader_fail(L, v, "%s: '%s' is neither an integer nor auto; expected %s", name,
                               shown, expected);
        return loader_fail(L, v, "%s: '%s' is not an integer; expected %s", name, shown, expected);
    }
    long long x = strtoll(v->text, NULL, 10);
    /* strtoll saturates on overflow, which the range check then reports. */
    int side = x > INT_MAX ? 1 : x < INT_MIN ? -1 : plan_range_side(k, (double)x);
    if (side)
        return loader_fail(L, v, "%s: %s is too %s; expected %s", name, shown,
                           side < 0 ? "small" : "large", expected);
    *out = (int)x;
    return 0;
}

/* A plain (unquoted) YAML number, possibly infinite; shown: the value as
 * the messages quote it. */
static int scalar_number(loader *L, const char *name, const yt_node *v, const char *expected,
                         double *out, char *shown)
{
    if (need_scalar(L, name, v, expected))
        return SMX_EXIT_INPUT;
    plan_show_node(v, shown, SHOW_MAX + 4);
    if (v->quoted)
        return loader_fail(L, v, "%s: '%s' is a quoted string; expected %s", name, shown, expected);
    if (!plan_is_yaml_float(v->text))
        return loader_fail(L, v, "%s: '%s' is not a number; expected %s", name, shown, expected);
    *out = strtod(v->text, NULL);
    return 0;
}

/* A number within k's range; the errors say `expected`. */
static int parse_real_as(loader *L, const plan_key *k, const char *name, const yt_node *v,
                         const char *expected, double *out)
{
    char shown[SHOW_MAX + 4];
    double x;
    if (scalar_number(L, name, v, expected, &x, shown))
        return SMX_EXIT_INPUT;
    int side = isfinite(x) ? plan_range_side(k, x) : (x > 0 ? 1 : -1);
    if (side)
        return loader_fail(L, v, "%s: %s is too %s; expected %s", name, shown,
                           side < 0 ? "small" : "large", expected);
    *out = x;
    return 0;
}

static int parse_real(loader *L, const plan_key *k, const char *name, const yt_node *v, double *out)
{
    char expected[300];
    plan_key_expected(k, expected, sizeof expected);
    return parse_real_as(L, k, name, v, expected, out);
}

static int parse_choice(loader *L, const plan_key *k, const char *name, const yt_node *v,
                        const char *expected, int *out)
{
    char shown[SHOW_MAX + 4], near[64];
    if (need_scalar(L, name, v, expected))
        return SMX_EXIT_INPUT;
    int i = plan_choice_index(k->choices, v->text);
    if (i < 0 && k->aliases)
        i = plan_alias_index(k->choices, k->aliases, v->text);
    if (i >= 0) {
        *out = i;
        return 0;
    }
    plan_show_node(v, shown, sizeof shown);
    if (plan_suggest_choice(k->choices, v->text, near, sizeof near))
        return loader_fail(L, v, "%s: '%s' is not allowed (did you mean '%s'?); expected %s", name,
                           shown, near, expected);
    return loader_fail(L, v, "%s: '%s' is not allowed; expected %s", name, shown, expected);
}

/* One number of a shape field; reports at the number. */
static int shape_number(loader *L, const char *name, const yt_node *v, const char *expected,
                        double *out)
{
    char shown[SHOW_MAX + 4];
    if (scalar_number(L, name, v, expected, out, shown))
        return SMX_EXIT_INPUT;
    if (!isfinite(*out))
        return loader_fail(L, v, "%s: %s is not finite; expected %s", name, shown, expected);
    return 0;
}

static void field_expected(const plan_field *f, char *buf, size_t n)
{
    switch (f->type) {
    case PF_STRING:
        snprintf(buf, n, "%s", f->doc);
        break;
    case PF_REAL:
        snprintf(buf, n, "a number in (%g, %g] %s", f->min, f->max, f->units);
        break;
    default:
        snprintf(buf, n, "a range [from, to] in %s with from < to, e.g. [20, 40]", f->units);
    }
}

static plan_loc loc_of(const loader *L, const yt_node *v)
{
    return L->cli ? (plan_loc){ 0, 0, 1, 0, L->option } : (plan_loc){ v->line, v->col, 0, 0, NULL };
}

/* One field of a shape. */
static int shape_field(loader *L, const plan_field *f, const char *name, const yt_node *v,
                       plan_shape *s)
{
    char expected[400], shown[SHOW_MAX + 4];
    char *base = (char *)s + f->offset;
    field_expected(f, expected, sizeof expected);
    *(plan_loc *)(void *)((char *)s + f->loc_offset) = loc_of(L, v);
    switch (f->type) {
    case PF_STRING:
        if (need_scalar(L, name, v, "a material name"))
            return SMX_EXIT_INPUT;
        plan_show_node(v, shown, sizeof shown);
        if (v->len == 0)
            return loader_fail(L, v, "%s: the string is empty; expected a material name", name);
        if (v->len >= f->size)
            return loader_fail(L, v, "%s: '%s' is %zu bytes long; expected at most %zu", name,
                               shown, v->len, f->size - 1);
        memcpy(base, v->text, v->len + 1);
        return 0;
    case PF_REAL: {
        double x;
        if (shape_number(L, name, v, expected, &x))
            return SMX_EXIT_INPUT;
        if (!(x > f->min && x <= f->max))
            return loader_fail(L, v, "%s: %s is too %s; expected %s", name,
                               plan_show_node(v, shown, sizeof shown),
                               x > f->max ? "large" : "small", expected);
        *(double *)(void *)base = x;
        return 0;
    }
    default: {
        if (yt_is_null(v))
            return loader_fail(L, v, "%s: no value; expected %s", name, expected);
        if (v->kind != YT_SEQUENCE)
            return loader_fail(L, v, "%s: got %s%s%s%s; expected %s", name, yt_kind_name(v),
                               v->kind == YT_SCALAR ? " '" : "",
                               v->kind == YT_SCALAR ? plan_show_node(v, shown, sizeof shown) : "",
                               v->kind == YT_SCALAR ? "'" : "", expected);
        if (v->n != 2)
            return loader_fail(L, v, "%s: the list has %zu entries; expected %s", name, v->n,
                               expected);
        double r[2];
        char item[200];
        for (int i = 0; i < 2; i++) {
            snprintf(item, sizeof item, "%.160s[%d]", name, i);
            if (shape_number(L, item, v->items[i], "a number", &r[i]))
                return SMX_EXIT_INPUT;
        }
        if (!(r[0] < r[1]))
            return loader_fail(L, v, "%s: [%g, %g] is %s; expected %s", name, r[0], r[1],
                               r[0] == r[1] ? "empty" : "inverted", expected);
        memcpy(base, r, sizeof r);
        return 0;
    }
    }
}

/* A list key's value must be a sequence of at most k->size entries (exactly
 * that many when exact): the error names what it got instead. */
static int list_node_ok(loader *L, const plan_key *k, const yt_node *v, const char *expected,
                        int exact)
{
    char shown[SHOW_MAX + 4];
    if (yt_is_null(v))
        return loader_fail(L, v, "%s: no value; expected %s", k->path, expected);
    if (v->kind == YT_SCALAR)
        return loader_fail(L, v, "%s: got a scalar '%s'; expected %s", k->path,
                           plan_show_node(v, shown, sizeof shown), expected);
    if (v->kind != YT_SEQUENCE)
        return loader_fail(L, v, "%s: got %s; expected %s", k->path, yt_kind_name(v), expected);
    if (exact ? v->n != k->size : v->n > k->size)
        return loader_fail(L, v, "%s: the list has %zu entries; expected %s", k->path, v->n,
                           expected);
    return 0;
}

/* A list of numbers (scenarios.*), each judged on its own against the row's
 * range: "scenarios.shift_mm[1]: 'x' is not a number; expected a number, in mm".
 * Parsed into a scratch list first: a bad entry leaves the plan as it was. */
static int assign_real_list(loader *L, const plan_key *k, const yt_node *v, double *out,
                            const char *expected)
{
    char name[128], range[100], item_expected[300];
    if (list_node_ok(L, k, v, expected, 0))
        return SMX_EXIT_INPUT;
    double tmp[PLAN_MAX_SCENARIO_VALUES];
    if (v->n > PLAN_MAX_SCENARIO_VALUES)
        return loader_fail(L, v, "%s: list longer than the reader's buffer", k->path);
    plan_range_text(k, range, sizeof range);
    snprintf(item_expected, sizeof item_expected, "a number%s%s%s", range,
             range[0] ? (k->units[0] ? " " : "") : (k->units[0] ? ", in " : ""), k->units);
    for (size_t i = 0; i < v->n; i++) {
        const yt_node *item = v->items[i];
        snprintf(name, sizeof name, "%s[%zu]", k->path, i);
        if (parse_real_as(L, k, name, item, item_expected, &tmp[i]))
            return SMX_EXIT_INPUT;
    }
    memcpy(out, tmp, v->n * sizeof *tmp);
    *(int *)(void *)(out + k->size) = (int)v->n;
    return 0;
}

/* geometry.shapes: a list of mappings, each checked against plan_shape_fields[]. */
static int assign_shapes(loader *L, const plan_key *k, const yt_node *v, plan_shape *out,
                         int *count)
{
    char shown[SHOW_MAX + 4], name[160];
    const char *expected =
        "a list of shapes, each a mapping such as {material: bone_compact, z_mm: [20, 40]}";
    if (yt_is_null(v))
        return loader_fail(L, v, "%s: no value; expected %s", k->path, expected);
    if (v->kind != YT_SEQUENCE)
        return loader_fail(L, v, "%s: got %s; expected %s", k->path, yt_kind_name(v), expected);
    if (v->n > k->size)
        return loader_fail(L, v, "%s: the list has %zu shapes; expected at most %zu", k->path, v->n,
                           k->size);
    char fields[300] = "";
    for (size_t f = 0; f < plan_shape_field_count; f++)
        snprintf(fields + strlen(fields), sizeof fields - strlen(fields), "%s%s", f ? ", " : "",
                 plan_shape_fields[f].name);
    /* Parsed into a scratch list first: a bad entry leaves the plan as it was. */
    plan_shape *tmp = calloc(v->n ? v->n : 1, sizeof *tmp);
    if (!tmp)
        return smx_fail(L->err, SMX_EXIT_RUNTIME, "out of memory reading %s", k->path);
    int rc = 0;
    for (size_t i = 0; i < v->n && !rc; i++) {
        const yt_node *item = v->items[i];
        plan_shape *s = &tmp[i];
        s->at = loc_of(L, item);
        if (item->kind != YT_MAPPING) {
            rc = loader_fail(L, item, "%s[%zu]: got %s%s%s%s; expected a mapping with keys %s",
                             k->path, i, yt_kind_name(item), item->kind == YT_SCALAR ? " '" : "",
                             item->kind == YT_SCALAR ? plan_show_node(item, shown, sizeof shown)
                                                     : "",
                             item->kind == YT_SCALAR ? "'" : "", fields);
            break;
        }
        int seen[16] = { 0 };
        for (size_t j = 0; j < item->n && !rc; j++) {
            const yt_node *key = item->items[2 * j], *val = item->items[2 * j + 1];
            if (key->kind != YT_SCALAR || strlen(key->text) != key->len) {
                rc =
                    loader_fail(L, key, "%s[%zu]: a key must be a name, not %s; expected one of %s",
                                k->path, i, yt_kind_name(key), fields);
                break;
            }
            int fi = -1;
            for (size_t f = 0; f < plan_shape_field_count; f++)
                if (!strcmp(key->text, plan_shape_fields[f].name))
                    fi = (int)f;
            if (fi < 0) {
                const char *names[16];
                for (size_t f = 0; f < plan_shape_field_count; f++)
                    names[f] = plan_shape_fields[f].name;
                const char *near = smx_closest_name(key->text, names, (int)plan_shape_field_count);
                plan_show_node(key, shown, sizeof shown);
                if (near)
                    rc = loader_fail(L, key, "%s[%zu]: unknown key '%s'; did you mean '%s'?",
                                     k->path, i, shown, near);
                else
                    rc = loader_fail(L, key, "%s[%zu]: unknown key '%s'; expected one of %s",
                                     k->path, i, shown, fields);
                break;
            }
            if (seen[fi]) {
                rc = loader_fail(L, key, "%s[%zu].%s: duplicate key; expected each key once",
                                 k->path, i, plan_shape_fields[fi].name);
                break;
            }
            seen[fi] = 1;
            snprintf(name, sizeof name, "%s[%zu].%s", k->path, i, plan_shape_fields[fi].name);
            rc = shape_field(L, &plan_shape_fields[fi], name, val, s);
        }
        for (size_t f = 0; f < plan_shape_field_count && !rc; f++)
            if (plan_shape_fields[f].required && !seen[f])
                rc = loader_fail(L, item, "%s[%zu]: missing key '%s' (%s)", k->path, i,
                                 plan_shape_fields[f].name, plan_shape_fields[f].doc);
        s->has_x = s->x_at.line > 0 || s->x_at.from_cli; /* x_mm was given */
    }
    if (!rc) {
        memcpy(out, tmp, v->n * sizeof *tmp);
        *count = (int)v->n;
    }
    free(tmp);
    return rc;
}

/* Checks v against key ki and stores it in the plan. */
int plan_assign(loader *L, int ki, const yt_node *v)
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
        plan_show_node(v, shown, sizeof shown);
        if (v->quoted)
            return loader_fail(L, v, "%s: '%s' is a quoted string; expected %s", k->path, shown,
                               expected);
        if (!strcmp(v->text, "true") || !strcmp(v->text, "True") || !strcmp(v->text, "TRUE"))
            ints[0] = 1;
        else if (!strcmp(v->text, "false") || !strcmp(v->text, "False") ||
                 !strcmp(v->text, "FALSE"))
            ints[0] = 0;
        else
            return loader_fail(L, v, "%s: '%s' is not a boolean; expected %s", k->path, shown,
                               expected);
        return 0;
    case PT_INT:
    case PT_INT_OR_AUTO:
        return parse_int(L, k, k->path, v, expected, ints);
    case PT_REAL:
        return parse_real(L, k, k->path, v, (double *)(void *)base);
    case PT_ENUM:
        return parse_choice(L, k, k->path, v, expected, ints);
    case PT_STRING:
        if (need_scalar(L, k->path, v, expected))
            return SMX_EXIT_INPUT;
        plan_show_node(v, shown, sizeof shown);
        if (v->len == 0)
            return loader_fail(L, v, "%s: the string is empty; expected %s", k->path, expected);
        if (v->len >= k->size)
            return loader_fail(L, v, "%s: '%s' is %zu bytes long; expected at most %zu", k->path,
                               shown, v->len, k->size - 1);
        memcpy(base, v->text, v->len + 1);
        return 0;
    case PT_REAL_LIST:
        return assign_real_list(L, k, v, (double *)(void *)base, expected);
    case PT_SHAPE_LIST:
        return assign_shapes(L, k, v, (plan_shape *)(void *)base,
                             (int *)(void *)(base + k->size * sizeof(plan_shape)));
    case PT_INT_LIST:
    case PT_OP_LIST: {
        if (list_node_ok(L, k, v, expected, k->type != PT_INT_LIST))
            return SMX_EXIT_INPUT;
        int tmp[PLAN_MAX_SNAPSHOTS];
        if (v->n > PLAN_MAX_SNAPSHOTS)
            return loader_fail(L, v, "%s: list longer than the reader's buffer", k->path);
        /* An entry is judged on its own: "-5 is too small; expected an integer >= 0". */
        char item_expected[300], range[100], list[200];
        if (k->type == PT_INT_LIST) {
            plan_range_text(k, range, sizeof range);
            snprintf(item_expected, sizeof item_expected, "an integer%s", range);
        } else {
            plan_choices_text(k->choices, list, sizeof list);
            snprintf(item_expected, sizeof item_expected, "one of %s", list);
        }
        for (size_t i = 0; i < v->n; i++) {
            const yt_node *item = v->items[i];
            snprintf(name, sizeof name, "%s[%zu]", k->path, i);
            int rc = k->type == PT_INT_LIST
                         ? parse_int(L, k, name, item, item_expected, &tmp[i])
                         : parse_choice(L, k, name, item, item_expected, &tmp[i]);
            if (rc)
                return rc;
            if (k->type == PT_OP_LIST)
                for (size_t j = 0; j < i; j++)
                    if (tmp[j] == tmp[i])
                        return loader_fail(L, item, "%s: '%s' appears twice; expected %s", name,
                                           plan_show_node(item, shown, sizeof shown), expected);
        }
        memcpy(ints, tmp, v->n * sizeof *tmp);
        if (k->type == PT_INT_LIST)
            ints[k->size] = (int)v->n;
        return 0;
    }
    }
    return loader_fail(L, v, "%s: key of unknown type %d in the schema table", k->path, k->type);
}

/* Parses a default or a --set value as YAML, so it follows the same rules as
 * the file (flow lists, quoting, null). */
int plan_assign_text(loader *L, int ki, const char *text)
{
    yt_node *v = NULL;
    yt_error ye;
    if (yt_parse(text, strlen(text), &v, &ye)) {
        /* libyaml's positions would count within the value, not the command line. */
        char expected[300], shown[SHOW_MAX + 4];
        plan_key_expected(&plan_keys[ki], expected, sizeof expected);
        return loader_fail(L, NULL, "%s: '%s' is not valid YAML; expected %s", plan_keys[ki].path,
                           smx_show(text, strlen(text), shown, sizeof shown), expected);
    }
    int rc = plan_assign(L, ki, v);
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
        if (plan_assign_text(&L, (int)i, d))
            return SMX_EXIT_INPUT;
        if (p->loc)
            p->loc[i] = (plan_loc){ 0, 0, 0, 0, NULL };
    }
    return 0;
}
