/* Key and choice names of the schema table, and the "did you mean" among
 * them (the typo distance itself: base/text.h). */
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "input/plan_internal.h"

const char *plan_show_node(const yt_node *v, char *buf, size_t n)
{
    return smx_show(v->text, v->len, buf, n);
}

int plan_is_section(const char *path, size_t len)
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
void plan_names_under(const char *prefix, size_t plen, names *out)
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

void plan_join_names(const names *nm, char *buf, size_t n)
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
int plan_choice_index(const char *choices, const char *text)
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

int plan_alias_index(const char *choices, const char *aliases, const char *text)
{
    size_t tlen = strlen(text);
    for (const char *s = aliases; *s;) {
        size_t len = strcspn(s, "|"), eq = strcspn(s, "=");
        if (eq < len && eq == tlen && !strncmp(s, text, eq)) {
            char target[64];
            snprintf(target, sizeof target, "%.*s", (int)(len - eq - 1), s + eq + 1);
            return plan_choice_index(choices, target);
        }
        s += len;
        if (*s == '|')
            s++;
    }
    return -1;
}

void plan_choices_text(const char *choices, char *buf, size_t n)
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
int plan_suggest_choice(const char *choices, const char *text, char *buf, size_t n)
{
    size_t tlen = strlen(text);
    int best = INT_MAX;
    for (const char *s = choices; *s;) {
        size_t len = strcspn(s, "|");
        int d = smx_edit_distance(text, tlen, s, len);
        if (d < best) {
            best = d;
            snprintf(buf, n, "%.*s", (int)len, s);
        }
        s += len;
        if (*s == '|')
            s++;
    }
    return best != INT_MAX && smx_close_enough(best, tlen);
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
