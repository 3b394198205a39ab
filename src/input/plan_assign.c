/* One value checked against its schema row (type, range, choices) and stored
 * in the plan; the built-in defaults go through the same path. */
#include <limits.h>
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
        return loader_fail(L, v, "%s: no value; expected %s", name, expected);
    if (v->kind != YT_SCALAR)
        return loader_fail(L, v, "%s: got %s; expected %s", name, yt_kind_name(v), expected);
    if (strlen(v->text) != v->len)
        return loader_fail(L, v, "%s: value contains a NUL character; expected %s", name, expected);
    return 0;
}

static int parse_int(loader *L, const plan_key *k, const char *name, const yt_node *v,
                     int allow_auto, const char *expected, int *out)
{
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

static int parse_real(loader *L, const plan_key *k, const char *name, const yt_node *v,
                      double *out)
{
    char expected[300], shown[SHOW_MAX + 4];
    plan_key_expected(k, expected, sizeof expected);
    if (need_scalar(L, name, v, expected))
        return SMX_EXIT_INPUT;
    plan_show_node(v, shown, sizeof shown);
    if (v->quoted)
        return loader_fail(L, v, "%s: '%s' is a quoted string; expected %s", name, shown, expected);
    if (!plan_is_yaml_float(v->text))
        return loader_fail(L, v, "%s: '%s' is not a number; expected %s", name, shown, expected);
    double x = strtod(v->text, NULL);
    int side = isfinite(x) ? plan_range_side(k, x) : (x > 0 ? 1 : -1);
    if (side)
        return loader_fail(L, v, "%s: %s is too %s; expected %s", name, shown,
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
    int i = plan_choice_index(k->choices, v->text);
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
        plan_show_node(v, shown, sizeof shown);
        if (v->len == 0)
            return loader_fail(L, v, "%s: the string is empty; expected %s", k->path, expected);
        if (v->len >= k->size)
            return loader_fail(L, v, "%s: '%s' is %zu bytes long; expected at most %zu", k->path,
                        shown, v->len, k->size - 1);
        memcpy(base, v->text, v->len + 1);
        return 0;
    case PT_INT_LIST:
    case PT_OP_LIST: {
        if (yt_is_null(v))
            return loader_fail(L, v, "%s: no value; expected %s", k->path, expected);
        if (v->kind == YT_SCALAR)
            return loader_fail(L, v, "%s: got a scalar '%s'; expected %s", k->path,
                        plan_show_node(v, shown, sizeof shown), expected);
        if (v->kind != YT_SEQUENCE)
            return loader_fail(L, v, "%s: got %s; expected %s", k->path, yt_kind_name(v), expected);
        if (k->type == PT_INT_LIST ? v->n > k->size : v->n != k->size)
            return loader_fail(L, v, "%s: the list has %zu entries; expected %s", k->path, v->n,
                        expected);
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
                         ? parse_int(L, k, name, item, 0, item_expected, &tmp[i])
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
                    plan_show(text, strlen(text), shown, sizeof shown), expected);
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
            p->loc[i] = (plan_loc){ 0, 0, 0, 0 };
    }
    return 0;
}
