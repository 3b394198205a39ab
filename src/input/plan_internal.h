/* Shared by the plan reader's files only (plan_*.c); the public API is plan.h.
 *
 * The reader's jobs: plan_names.c (key and choice names, "did you mean"),
 * plan_text.c (numbers and ranges as text, writing values and the resolved
 * plan, errors that point at a key), plan_assign.c (one value checked against
 * its schema row and stored), plan_check.c (required keys, rules between keys),
 * plan_load.c (the file, the YAML walk, --set overrides, the table file),
 * plan_data_file.c (where a data file named in the plan is found),
 * plan_spots.c (the spot file of a treatment field); plan_schema.c holds the
 * schema table and plan_schema_write.c writes it out (both through plan.h). */
#ifndef SMX_PLAN_INTERNAL_H
#define SMX_PLAN_INTERNAL_H

#include <stddef.h>

#include "base/text.h"
#include "input/plan.h"
#include "input/yaml_tree.h"

/* A plan is a few kilobytes; anything this large is the wrong file. */
#define PLAN_MAX_BYTES (16u << 20)
#define SHOW_MAX SMX_SHOW_MAX
#define MAX_SECTIONS 32

typedef struct names {
    const char *name[64];
    size_t len[64];
    size_t n;
} names;

typedef struct section_mark {
    char path[64];
    int line, col;
} section_mark;

/* The state of one plan_load(): where values come from, for the messages. */
typedef struct loader {
    plan *p;
    smx_error *err;
    const char *file; /* plan path as given */
    const char *cli; /* the override being applied as the user typed it ("--set k=v",
                             "--output X"), else NULL */
    const char *option; /* the option of that override when not --set ("--output"), else NULL */
    int defaults; /* applying the table's own defaults */
    int *key_line, *key_col; /* where each key was written in the file */
    /* Sections seen, so that a missing required key can point at its section. */
    section_mark sec[MAX_SECTIONS];
    int nsec;
} loader;

/* plan_names.c */
const char *plan_show_node(const yt_node *v, char *buf, size_t n);
int plan_is_section(const char *path, size_t len);
void plan_names_under(const char *prefix, size_t plen, names *out);
void plan_join_names(const names *nm, char *buf, size_t n);
int plan_choice_index(const char *choices, const char *text);
/* The index in choices of the choice an alias ("old=new|...") names for text; -1 if none. */
int plan_alias_index(const char *choices, const char *aliases, const char *text);
void plan_choices_text(const char *choices, char *buf, size_t n);
int plan_suggest_choice(const char *choices, const char *text, char *buf, size_t n);

/* plan_text.c */
int plan_is_yaml_int(const char *s);
int plan_is_yaml_float(const char *s);
int plan_range_side(const plan_key *k, double v);
void plan_range_text(const plan_key *k, char *buf, size_t n);

/* plan_assign.c */
int loader_fail(loader *L, const yt_node *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int plan_assign(loader *L, int ki, const yt_node *v);
int plan_assign_text(loader *L, int ki, const char *text);

/* plan_check.c */
int plan_check_required(loader *L);
int plan_check_consistency(const plan *p, smx_error *err);
/* Warns (smx_warn) about grids the reader accepts that cost accuracy: a step
 * other than the row, a pencil direction off a bin centre (plan_warn.c). */
void plan_warn_accuracy(const plan *p);
/* beam.spots_file: found like the table, read, every spot checked (plan_spots.c). */
int plan_spots_load(plan *p, smx_error *err);

#endif
