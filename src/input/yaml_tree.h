/* A small in-memory tree of one YAML document, built from libyaml's events.
 *
 * The plan reader validates keys against its schema table in its own order
 * (file keys, then --set, then cross-field rules), which an event stream cannot
 * revisit; the tree keeps every node with the 1-based line:col that an error
 * message must name. Anchors and aliases are refused rather than expanded: a
 * plan has no use for them, and expanding them would make one value sit at two
 * places in the file. */
#ifndef SMX_YAML_TREE_H
#define SMX_YAML_TREE_H

#include <stddef.h>

enum yt_kind { YT_SCALAR, YT_SEQUENCE, YT_MAPPING };

typedef struct yt_node {
    int kind; /* enum yt_kind */
    int line, col; /* 1-based start of the node */
    /* scalar */
    char *text; /* NUL-terminated; may hold NULs (len tells) */
    size_t len;
    int quoted; /* 1 unless written plain: a quoted "100" is a string */
    /* sequence: items[0..n); mapping: items[2i] = key, items[2i+1] = value */
    struct yt_node **items;
    size_t n; /* items of a sequence, pairs of a mapping */
} yt_node;

typedef struct yt_error {
    int line, col; /* 1-based; 0 = no position known */
    char msg[512];
} yt_error;

/* Parses text[0..len) as at most one YAML document. On success returns 0 and
 * *root (NULL for a stream without a document, e.g. only comments). On error
 * returns -1, *root = NULL and a message in e. */
int yt_parse(const char *text, size_t len, yt_node **root, yt_error *e);
void yt_free(yt_node *n);

/* Plain null: empty, ~, null, Null, NULL (the YAML core schema). */
int yt_is_null(const yt_node *n);

/* "a scalar", "a list" or "a mapping", for "got X; expected Y" messages. */
const char *yt_kind_name(const yt_node *n);

#endif
