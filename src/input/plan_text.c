/* A plan's values as text: YAML number forms, ranges in messages, values
 * written as YAML or JSON, the resolved plan, and errors that point at the
 * place (file:line:col or --set) a key was given. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input/plan_internal.h"

/* The YAML 1.2 core forms, and nothing strtod would accept beyond them
 * ("inf", "0x10", "1e", leading spaces). */
int plan_is_yaml_int(const char *s)
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

int plan_is_yaml_float(const char *s)
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
int plan_range_side(const plan_key *k, double v)
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

void plan_range_text(const plan_key *k, char *buf, size_t n)
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
    plan_range_text(k, range, sizeof range);
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
        plan_choices_text(k->choices, list, sizeof list);
        snprintf(buf, n, "one of %s", list);
        break;
    case PT_INT_OR_AUTO:
        snprintf(buf, n, "auto or an integer%s", range);
        break;
    case PT_INT_LIST:
        snprintf(buf, n, "a list of at most %zu integers%s, e.g. [100, 200]", k->size, range);
        break;
    case PT_OP_LIST:
        plan_choices_text(k->choices, list, sizeof list);
        snprintf(buf, n, "a list holding each of %s once", list);
        break;
    case PT_REAL_LIST:
        snprintf(buf, n, "a list of at most %zu numbers%s%s%s, e.g. [-3.5, 3.5]", k->size, range,
                 range[0] ? sp : (k->units[0] ? ", in " : ""), k->units);
        break;
    case PT_SHAPE_LIST:
        snprintf(buf, n,
                 "a list of at most %zu shapes, each a mapping such as {material: bone_compact, "
                 "z_mm: [20, 40], x_mm: [-50, 50], density_g_cm3: 1.85}",
                 k->size);
        break;
    default:
        snprintf(buf, n, "a value");
    }
}

/* A double-quoted string in JSON (json = 1) or YAML (json = 0): the two share
 * \" \\ \n \t and differ in how other control characters are written. */
static void write_quoted(FILE *f, const char *s, int json)
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
        else if (json && c < 0x20)
            fprintf(f, "\\u%04x", c);
        else if (!json && (c < 0x20 || c == 0x7f))
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

void plan_write_json_string(FILE *f, const char *s)
{
    write_quoted(f, s, 1);
}

/* Plain YAML when the text cannot be mistaken for anything but a string by any
 * YAML reader; double-quoted otherwise. */
static void yaml_write_string(FILE *f, const char *s)
{
    int plain = s[0] != '\0' && !plan_is_yaml_float(s) && strcmp(s, "true") && strcmp(s, "false") &&
                strcmp(s, "null") && strcmp(s, "~") && strcmp(s, "auto");
    for (const char *c = s; plain && *c; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '_' || *c == '.' || *c == '/' || (c != s && (*c == '-' || *c == '+'));
        plain = ok;
    }
    if (plain)
        fputs(s, f);
    else
        write_quoted(f, s, 0);
}

static void write_name(FILE *f, const char *name, int json)
{
    if (json)
        plan_write_json_string(f, name);
    else
        fputs(name, f);
}

static void write_shapes(FILE *f, const plan_shape *s, int n, int json)
{
    char a[40], b[40];
    fputc('[', f);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", {" : "{", f);
        fputs(json ? "\"material\": " : "material: ", f);
        if (json)
            plan_write_json_string(f, s[i].material);
        else
            yaml_write_string(f, s[i].material);
        plan_format_real(s[i].z_mm[0], a, sizeof a);
        plan_format_real(s[i].z_mm[1], b, sizeof b);
        fprintf(f, json ? ", \"z_mm\": [%s, %s]" : ", z_mm: [%s, %s]", a, b);
        if (s[i].has_x) {
            plan_format_real(s[i].x_mm[0], a, sizeof a);
            plan_format_real(s[i].x_mm[1], b, sizeof b);
            fprintf(f, json ? ", \"x_mm\": [%s, %s]" : ", x_mm: [%s, %s]", a, b);
        }
        if (s[i].density_g_cm3 > 0) {
            plan_format_real(s[i].density_g_cm3, a, sizeof a);
            fprintf(f, json ? ", \"density_g_cm3\": %s" : ", density_g_cm3: %s", a);
        }
        fputc('}', f);
    }
    fputc(']', f);
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
    case PT_REAL_LIST: {
        const double *v = (const double *)(const void *)base;
        int count = *(const int *)(const void *)(v + k->size);
        fputc('[', f);
        for (int i = 0; i < count; i++) {
            plan_format_real(v[i], num, sizeof num);
            fprintf(f, "%s%s", i ? ", " : "", num);
        }
        fputc(']', f);
        break;
    }
    case PT_SHAPE_LIST:
        write_shapes(f, (const plan_shape *)(const void *)base,
                     *(const int *)(const void *)(base + k->size * sizeof(plan_shape)), json);
        break;
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
        if (loc->option && !strcmp(loc->option, "--overwrite"))
            smx_fail(err, SMX_EXIT_INPUT, "--overwrite: %s: %s", path, msg);
        else if (loc->option)
            smx_fail(err, SMX_EXIT_INPUT, "%s %.200s: %s: %s", loc->option, val ? val : "?", path,
                     msg);
        else
            smx_fail(err, SMX_EXIT_INPUT, "--set %s=%.200s: %s: %s", path, val ? val : "?", path,
                     msg);
        free(val);
        return SMX_EXIT_INPUT;
    }
    if (loc && loc->line > 0)
        return smx_fail(err, SMX_EXIT_INPUT, "%s:%d:%d: %s: %s", p->path, loc->line, loc->col, path,
                        msg);
    if (path)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: %s: %s", p->path, path, msg);
    return smx_fail(err, SMX_EXIT_INPUT, "%s: %s", p->path, msg);
}

int plan_blame_key(const plan *p, const char *path, int rc, smx_error *err)
{
    if (rc != SMX_EXIT_INPUT)
        return rc;
    smx_error at_key = { 0 }; /* smx_fail keeps the first error set: start afresh */
    plan_fail_at(p, &at_key, path, "%s", err->msg);
    *err = at_key;
    return rc;
}

int plan_fail_at_shape(const plan *p, smx_error *err, int i, const char *field, const char *fmt,
                       ...)
{
    char msg[1800], name[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(name, sizeof name, "geometry.shapes[%d]%s%s", i, field ? "." : "", field ? field : "");
    const plan_shape *s = &p->shapes[i];
    plan_loc loc = s->at;
    for (size_t f = 0; field && f < plan_shape_field_count; f++)
        if (!strcmp(plan_shape_fields[f].name, field)) {
            plan_loc fl = *(const plan_loc *)(const void *)((const char *)s +
                                                            plan_shape_fields[f].loc_offset);
            if (fl.line > 0 || fl.from_cli)
                loc = fl;
        }
    if (loc.from_cli)
        return smx_fail(err, SMX_EXIT_INPUT, "--set geometry.shapes: %s: %s", name, msg);
    if (loc.line > 0)
        return smx_fail(err, SMX_EXIT_INPUT, "%s:%d:%d: %s: %s", p->path, loc.line, loc.col, name,
                        msg);
    return smx_fail(err, SMX_EXIT_INPUT, "%s: %s: %s", p->path, name, msg);
}

void plan_write_resolved(FILE *f, const plan *p)
{
    for (size_t i = 0; i < plan_key_count; i++) {
        const plan_key *k = &plan_keys[i];
        int set = p->loc && (p->loc[i].line > 0 || p->loc[i].from_cli || p->loc[i].derived);
        int optional = k->default_value && !k->default_value[0];
        /* Without locations, an optional int left at 0 is taken as not given. */
        /* A required key the plan may leave out (beam.energy_MeV beside a spot
         * file) has no value to write: 0 would not load back. */
        int required_unset = !k->default_value && p->loc && !set;
        if (required_unset ||
            (optional &&
             (p->loc ? !set : !*(const int *)(const void *)((const char *)p + k->offset)))) {
            /* An optional key without a default that the plan left out. */
            fprintf(f, "# %s: not set\n", k->path);
            continue;
        }
        fprintf(f, "%s: ", k->path);
        plan_write_value(f, p, k, 0);
        if (p->loc && p->loc[i].from_cli)
            fprintf(f, "  # %s", p->loc[i].option ? p->loc[i].option : "--set");
        else if (p->loc && p->loc[i].derived)
            fputs("  # from the beam", f);
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
