#include "input/yaml_tree.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

/* Deep enough for any plan (three levels of sections plus a flow list), shallow
 * enough that a hostile file cannot exhaust the stack through recursion. */
#define YT_MAX_DEPTH 64

typedef struct builder {
    yaml_parser_t parser;
    const char *text;
    size_t len;
    yt_error *err;
} builder;

static void set_error(builder *b, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void set_error(builder *b, int line, int col, const char *fmt, ...)
{
    va_list ap;
    b->err->line = line;
    b->err->col = col;
    va_start(ap, fmt);
    vsnprintf(b->err->msg, sizeof b->err->msg, fmt, ap);
    va_end(ap);
}

/* libyaml reports reader errors (bad encoding) by byte offset only; turning the
 * offset into line:col keeps every syntax error pointing somewhere. */
static void offset_to_mark(const builder *b, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    for (size_t i = 0; i < off && i < b->len; i++) {
        if (b->text[i] == '\n') {
            l++;
            c = 1;
        } else {
            c++;
        }
    }
    *line = l;
    *col = c;
}

static void parser_error(builder *b)
{
    const yaml_parser_t *ps = &b->parser;
    const char *problem = ps->problem ? ps->problem : "unknown error";
    if (ps->error == YAML_READER_ERROR) {
        int line, col;
        offset_to_mark(b, ps->problem_offset, &line, &col);
        if (ps->problem_value != -1)
            set_error(b, line, col, "YAML syntax error: %s (byte #%02X)", problem,
                      (unsigned)ps->problem_value & 0xffu);
        else
            set_error(b, line, col, "YAML syntax error: %s", problem);
        return;
    }
    if (ps->error == YAML_MEMORY_ERROR) {
        set_error(b, 0, 0, "YAML parser: out of memory");
        return;
    }
    int line = (int)ps->problem_mark.line + 1, col = (int)ps->problem_mark.column + 1;
    if (ps->context)
        set_error(b, line, col, "YAML syntax error: %s (%s at %d:%d)", problem, ps->context,
                  (int)ps->context_mark.line + 1, (int)ps->context_mark.column + 1);
    else
        set_error(b, line, col, "YAML syntax error: %s", problem);
}

static int next_event(builder *b, yaml_event_t *ev)
{
    if (!yaml_parser_parse(&b->parser, ev)) {
        parser_error(b);
        return -1;
    }
    return 0;
}

static yt_node *new_node(builder *b, int kind, const yaml_event_t *ev)
{
    yt_node *n = calloc(1, sizeof *n);
    if (!n) {
        set_error(b, 0, 0, "YAML parser: out of memory");
        return NULL;
    }
    n->kind = kind;
    n->line = (int)ev->start_mark.line + 1;
    n->col = (int)ev->start_mark.column + 1;
    return n;
}

/* Appends child at slot `at` of parent->items, growing the array geometrically. */
static int append(builder *b, yt_node *parent, size_t at, size_t *cap, yt_node *child)
{
    if (at >= *cap) {
        size_t ncap = *cap ? 2 * *cap : 8;
        yt_node **grown = realloc(parent->items, ncap * sizeof *grown);
        if (!grown) {
            set_error(b, 0, 0, "YAML parser: out of memory");
            return -1;
        }
        parent->items = grown;
        *cap = ncap;
    }
    parent->items[at] = child;
    return 0;
}

static int build(builder *b, yaml_event_t *ev, int depth, yt_node **out);

/* Reads events up to the end of a collection that `n` has just opened. */
static int build_children(builder *b, yt_node *n, yaml_event_type_t end, int depth)
{
    size_t cap = 0, used = 0;
    for (;;) {
        yaml_event_t ev;
        if (next_event(b, &ev))
            goto fail;
        if (ev.type == end) {
            yaml_event_delete(&ev);
            break;
        }
        yt_node *child = NULL;
        int rc = build(b, &ev, depth + 1, &child);
        yaml_event_delete(&ev);
        if (rc)
            goto fail;
        if (append(b, n, used, &cap, child)) {
            yt_free(child);
            goto fail;
        }
        used++;
    }
    /* libyaml guarantees a value event after every key, so used is even here. */
    n->n = n->kind == YT_MAPPING ? used / 2 : used;
    return 0;

fail:
    /* A mapping may stop between a key and its value, so free by slot count
     * here rather than through n->n. */
    for (size_t i = 0; i < used; i++)
        yt_free(n->items[i]);
    free(n->items);
    n->items = NULL;
    n->n = 0;
    return -1;
}

static int build(builder *b, yaml_event_t *ev, int depth, yt_node **out)
{
    *out = NULL;
    if (depth > YT_MAX_DEPTH) {
        set_error(b, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                  "YAML nesting is deeper than %d levels; expected a plan a few levels deep",
                  YT_MAX_DEPTH);
        return -1;
    }
    yt_node *n = NULL;
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        n = new_node(b, YT_SCALAR, ev);
        if (!n)
            return -1;
        n->len = ev->data.scalar.length;
        n->text = malloc(n->len + 1);
        if (!n->text) {
            free(n);
            set_error(b, 0, 0, "YAML parser: out of memory");
            return -1;
        }
        memcpy(n->text, ev->data.scalar.value, n->len);
        n->text[n->len] = '\0';
        n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
        *out = n;
        return 0;
    }
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT: {
        int seq = ev->type == YAML_SEQUENCE_START_EVENT;
        n = new_node(b, seq ? YT_SEQUENCE : YT_MAPPING, ev);
        if (!n)
            return -1;
        if (build_children(b, n, seq ? YAML_SEQUENCE_END_EVENT : YAML_MAPPING_END_EVENT, depth)) {
            yt_free(n);
            return -1;
        }
        *out = n;
        return 0;
    }
    case YAML_ALIAS_EVENT:
        set_error(b, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                  "YAML alias *%s is not supported in a plan; expected the value written out",
                  (const char *)ev->data.alias.anchor);
        return -1;
    default:
        set_error(b, (int)ev->start_mark.line + 1, (int)ev->start_mark.column + 1,
                  "YAML parser: unexpected event");
        return -1;
    }
}

int yt_parse(const char *text, size_t len, yt_node **root, yt_error *e)
{
    builder b = { .text = text, .len = len, .err = e };
    yaml_event_t ev;
    yt_node *doc = NULL;
    int rc = -1;

    *root = NULL;
    memset(e, 0, sizeof *e);
    if (!yaml_parser_initialize(&b.parser)) {
        snprintf(e->msg, sizeof e->msg, "YAML parser: out of memory");
        return -1;
    }
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);

    if (next_event(&b, &ev)) /* stream start */
        goto done;
    yaml_event_delete(&ev);
    if (next_event(&b, &ev))
        goto done;
    if (ev.type == YAML_STREAM_END_EVENT) {
        yaml_event_delete(&ev);
        rc = 0;
        goto done;
    }
    yaml_event_delete(&ev); /* document start */
    if (next_event(&b, &ev))
        goto done;
    int brc = build(&b, &ev, 0, &doc);
    yaml_event_delete(&ev);
    if (brc)
        goto done;
    if (next_event(&b, &ev)) /* document end */
        goto done;
    yaml_event_delete(&ev);
    if (next_event(&b, &ev))
        goto done;
    if (ev.type == YAML_DOCUMENT_START_EVENT) {
        /* One file is one plan; a second document would be silently ignored. */
        set_error(&b, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
                  "a second YAML document starts here; expected one plan per file");
        yaml_event_delete(&ev);
        goto done;
    }
    yaml_event_delete(&ev);
    rc = 0;

done:
    yaml_parser_delete(&b.parser);
    if (rc) {
        yt_free(doc);
        return -1;
    }
    *root = doc;
    return 0;
}

void yt_free(yt_node *n)
{
    if (!n)
        return;
    size_t count = n->kind == YT_MAPPING ? 2 * n->n : n->n;
    for (size_t i = 0; i < count; i++)
        yt_free(n->items[i]);
    free(n->items);
    free(n->text);
    free(n);
}

int yt_is_null(const yt_node *n)
{
    if (!n)
        return 1;
    if (n->kind != YT_SCALAR || n->quoted)
        return 0;
    return n->len == 0 || !strcmp(n->text, "~") || !strcmp(n->text, "null") ||
           !strcmp(n->text, "Null") || !strcmp(n->text, "NULL");
}

const char *yt_kind_name(const yt_node *n)
{
    if (!n)
        return "nothing";
    switch (n->kind) {
    case YT_SCALAR:
        return "a scalar";
    case YT_SEQUENCE:
        return "a list";
    default:
        return "a mapping";
    }
}
