/* The schema table written out: the JSON Schema (--print-plan-schema,
 * schemas/plan.schema.json) and the reference plan (--print-reference-plan,
 * config/plan-reference.yaml), both from plan_schema.c's rows, with the
 * sections' descriptions and the required keys' example values kept here. */
#include "input/plan.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Descriptions of the mappings that group the keys (schema and reference only). */
static const struct {
    const char *path, *doc;
} sections[] = {
    { "grid", "phase-space grid: energy, direction and space axes" },
    { "grid.energy", "energy axis" },
    { "grid.angle", "direction axis (theta from the +x axis, 90 deg = +z, into depth)" },
    { "grid.space", "spatial grid: nz x nx cells, z = depth" },
    { "material", "the background medium (every cell no shape, map or CT claims) and its "
                  "physics table; also the energy grid's reference medium" },
    { "geometry", "what each cell is made of: a map or a CT image, then shapes on top "
                  "(docs/geometry.md); left out, every cell is the material: above" },
    { "geometry.ct", "a CT image and its calibration (HU -> density and material)" },
    { "beam", "the incident proton beam" },
    { "transport", "stepping and the operators" },
    { "backend", "where and how the steps run; the results do not depend on these" },
    { "output", "result file, snapshots and step log" },
};

/* Example values for required keys: together they make a small valid run, a
 * 100 MeV pencil beam in water, so the reference plan runs as written. */
static const struct {
    const char *path, *value;
} examples[] = {
    { "grid.energy.n_bins", "200" },
    { "grid.energy.E_max_MeV", "100" },
    { "grid.space.nx", "81" },
    { "grid.space.nz", "170" },
    { "grid.space.dx_mm", "0.5" },
    { "grid.space.dz_mm", "0.5" },
    { "beam.energy_MeV", "100" },
    { "transport.step_mm", "0.5" },
    { "output.file", "plan-reference.h5" },
    { "geometry.map_file", "phantom_map.h5" },
    { "geometry.ct.file", "ct_phantom.h5" },
    { "geometry.ct.calibration", "ct_schneider2000.csv" },
};

static const char *section_doc(const char *path, size_t len)
{
    for (size_t i = 0; i < sizeof sections / sizeof sections[0]; i++)
        if (strlen(sections[i].path) == len && !strncmp(sections[i].path, path, len))
            return sections[i].doc;
    return "";
}

static const char *example_of(const plan_key *k)
{
    for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++)
        if (!strcmp(examples[i].path, k->path))
            return examples[i].value;
    return NULL;
}

/* ---- walking the key paths as a tree ----
 * The writers emit nested mappings, while the table is flat; a child of a section
 * is the next dotted component of some key under it, in table order. */

typedef struct child {
    const char *name; /* points into a key path */
    size_t len;
    int key; /* index of the leaf key, or -1 for a sub-section */
} child;

static size_t children_of(const char *prefix, size_t plen, child *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < plan_key_count; i++) {
        const char *path = plan_keys[i].path;
        if (plen && (strncmp(path, prefix, plen) || path[plen] != '.'))
            continue;
        const char *name = path + (plen ? plen + 1 : 0);
        const char *dot = strchr(name, '.');
        size_t len = dot ? (size_t)(dot - name) : strlen(name);
        size_t j;
        for (j = 0; j < n; j++)
            if (out[j].len == len && !strncmp(out[j].name, name, len))
                break;
        if (j < n || n == max)
            continue;
        out[n++] = (child){ name, len, dot ? -1 : (int)i };
    }
    return n;
}

/* A section must appear when anything under it is required. */
static int section_required(const char *prefix, size_t plen)
{
    for (size_t i = 0; i < plan_key_count; i++)
        if (!plan_keys[i].default_value && !strncmp(plan_keys[i].path, prefix, plen) &&
            plan_keys[i].path[plen] == '.')
            return 1;
    return 0;
}

static void indent(FILE *f, int level)
{
    for (int i = 0; i < level; i++)
        fputs("  ", f);
}

/* ---- JSON Schema ---- */

static void json_number(FILE *f, double v)
{
    char buf[40];
    plan_format_real(v, buf, sizeof buf);
    fputs(buf, f);
}

static void json_bounds(FILE *f, const plan_key *k, int level)
{
    if (isfinite(k->min)) {
        indent(f, level);
        fputs(k->min_exclusive ? "\"exclusiveMinimum\": " : "\"minimum\": ", f);
        json_number(f, k->min);
        fputs(",\n", f);
    }
    if (isfinite(k->max)) {
        indent(f, level);
        fputs(k->max_exclusive ? "\"exclusiveMaximum\": " : "\"maximum\": ", f);
        json_number(f, k->max);
        fputs(",\n", f);
    }
}

static void json_enum(FILE *f, const char *choices)
{
    fputs("[", f);
    for (const char *s = choices; *s;) {
        size_t len = strcspn(s, "|");
        fprintf(f, "%s\"%.*s\"", s == choices ? "" : ", ", (int)len, s);
        s += len;
        if (*s == '|')
            s++;
    }
    fputs("]", f);
}

/* geometry.shapes: an array of objects whose properties are plan_shape_fields[]. */
static void json_shape_items(FILE *f, const plan_key *k, int level)
{
    indent(f, level);
    fputs("\"type\": \"array\",\n", f);
    indent(f, level);
    fprintf(f, "\"maxItems\": %zu,\n", k->size);
    indent(f, level);
    fputs("\"items\": {\n", f);
    indent(f, level + 1);
    fputs("\"type\": \"object\",\n", f);
    indent(f, level + 1);
    fputs("\"additionalProperties\": false,\n", f);
    indent(f, level + 1);
    fputs("\"required\": [", f);
    int first = 1;
    for (size_t i = 0; i < plan_shape_field_count; i++)
        if (plan_shape_fields[i].required) {
            fprintf(f, "%s\"%s\"", first ? "" : ", ", plan_shape_fields[i].name);
            first = 0;
        }
    fputs("],\n", f);
    indent(f, level + 1);
    fputs("\"properties\": {\n", f);
    for (size_t i = 0; i < plan_shape_field_count; i++) {
        const plan_field *fd = &plan_shape_fields[i];
        char desc[1024];
        if (fd->units[0])
            snprintf(desc, sizeof desc, "%s; in %s", fd->doc, fd->units);
        else
            snprintf(desc, sizeof desc, "%s", fd->doc);
        indent(f, level + 2);
        fprintf(f, "\"%s\": {\n", fd->name);
        indent(f, level + 3);
        fputs("\"description\": ", f);
        plan_write_json_string(f, desc);
        fputs(",\n", f);
        indent(f, level + 3);
        if (fd->type == PF_STRING) {
            fputs("\"type\": \"string\",\n", f);
            indent(f, level + 3);
            fprintf(f, "\"minLength\": 1,\n");
            indent(f, level + 3);
            fprintf(f, "\"maxLength\": %zu\n", fd->size - 1);
        } else if (fd->type == PF_REAL) {
            fputs("\"type\": \"number\",\n", f);
            indent(f, level + 3);
            fputs("\"exclusiveMinimum\": ", f);
            json_number(f, fd->min);
            fputs(",\n", f);
            indent(f, level + 3);
            fputs("\"maximum\": ", f);
            json_number(f, fd->max);
            fputc('\n', f);
        } else {
            fputs("\"type\": \"array\",\n", f);
            indent(f, level + 3);
            fputs("\"items\": { \"type\": \"number\" },\n", f);
            indent(f, level + 3);
            fputs("\"minItems\": 2,\n", f);
            indent(f, level + 3);
            fputs("\"maxItems\": 2\n", f);
        }
        indent(f, level + 2);
        fputs(i + 1 < plan_shape_field_count ? "},\n" : "}\n", f);
    }
    indent(f, level + 1);
    fputs("}\n", f);
    indent(f, level);
    fputs("},\n", f);
}

static void json_key(FILE *f, const plan_key *k, const plan *defaults, int level)
{
    char desc[1024];
    if (k->units[0])
        snprintf(desc, sizeof desc, "%s; in %s", k->doc, k->units);
    else
        snprintf(desc, sizeof desc, "%s", k->doc);
    indent(f, level);
    fputs("\"description\": ", f);
    plan_write_json_string(f, desc);
    fputs(",\n", f);

    switch (k->type) {
    case PT_BOOL:
        indent(f, level);
        fputs("\"type\": \"boolean\",\n", f);
        break;
    case PT_INT:
    case PT_REAL:
        indent(f, level);
        fprintf(f, "\"type\": \"%s\",\n", k->type == PT_INT ? "integer" : "number");
        json_bounds(f, k, level);
        break;
    case PT_STRING:
        indent(f, level);
        fprintf(f, "\"type\": \"string\",\n");
        indent(f, level);
        fprintf(f, "\"minLength\": 1,\n");
        indent(f, level);
        fprintf(f, "\"maxLength\": %zu,\n", k->size - 1);
        break;
    case PT_ENUM:
        indent(f, level);
        fputs("\"enum\": ", f);
        json_enum(f, k->choices);
        fputs(",\n", f);
        break;
    case PT_INT_OR_AUTO:
        indent(f, level);
        fputs("\"anyOf\": [\n", f);
        indent(f, level + 1);
        fputs("{\n", f);
        indent(f, level + 2);
        fputs("\"type\": \"integer\",\n", f);
        json_bounds(f, k, level + 2);
        indent(f, level + 2);
        fputs("\"description\": \"an explicit value instead of auto\"\n", f);
        indent(f, level + 1);
        fputs("},\n", f);
        indent(f, level + 1);
        fputs("{ \"const\": \"auto\" }\n", f);
        indent(f, level);
        fputs("],\n", f);
        break;
    case PT_INT_LIST:
        indent(f, level);
        fputs("\"type\": \"array\",\n", f);
        indent(f, level);
        fputs("\"items\": {\n", f);
        indent(f, level + 1);
        fputs("\"type\": \"integer\",\n", f);
        json_bounds(f, k, level + 1);
        indent(f, level + 1);
        fputs("\"description\": \"a step number\"\n", f);
        indent(f, level);
        fputs("},\n", f);
        indent(f, level);
        fprintf(f, "\"maxItems\": %zu,\n", k->size);
        break;
    case PT_REAL_LIST:
        indent(f, level);
        fputs("\"type\": \"array\",\n", f);
        indent(f, level);
        fputs("\"items\": {\n", f);
        indent(f, level + 1);
        fputs("\"type\": \"number\",\n", f);
        json_bounds(f, k, level + 1);
        indent(f, level + 1);
        fprintf(f, "\"description\": \"a value in %s\"\n", k->units);
        indent(f, level);
        fputs("},\n", f);
        indent(f, level);
        fprintf(f, "\"maxItems\": %zu,\n", k->size);
        break;
    case PT_SHAPE_LIST:
        json_shape_items(f, k, level);
        break;
    case PT_OP_LIST:
        indent(f, level);
        fputs("\"type\": \"array\",\n", f);
        indent(f, level);
        fputs("\"items\": { \"enum\": ", f);
        json_enum(f, k->choices);
        fputs(" },\n", f);
        indent(f, level);
        fprintf(f, "\"minItems\": %zu,\n", k->size);
        indent(f, level);
        fprintf(f, "\"maxItems\": %zu,\n", k->size);
        indent(f, level);
        fputs("\"uniqueItems\": true,\n", f);
        break;
    }

    indent(f, level);
    if (k->default_value && k->default_value[0]) {
        fputs("\"default\": ", f);
        plan_write_value(f, defaults, k, 1);
    } else {
        /* Required and conditional keys: the reference plan's value as an example. */
        const char *ex = example_of(k);
        fputs("\"examples\": [", f);
        if (ex && (k->type == PT_STRING || k->type == PT_ENUM))
            plan_write_json_string(f, ex);
        else if (ex)
            fputs(ex, f);
        fputs("]", f);
    }
    fputc('\n', f);
}

static void json_section(FILE *f, const char *prefix, size_t plen, const plan *defaults, int level)
{
    child kids[64];
    size_t n = children_of(prefix, plen, kids, 64);

    indent(f, level);
    fputs("\"type\": \"object\",\n", f);
    indent(f, level);
    fputs("\"additionalProperties\": false,\n", f);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const char *path = kids[i].name - (plen ? plen + 1 : 0);
        size_t clen = (size_t)(kids[i].name + kids[i].len - path);
        int req = kids[i].key >= 0 ? plan_keys[kids[i].key].default_value == NULL
                                   : section_required(path, clen);
        if (req) {
            if (first) {
                indent(f, level);
                fputs("\"required\": [", f);
            }
            fprintf(f, "%s\"%.*s\"", first ? "" : ", ", (int)kids[i].len, kids[i].name);
            first = 0;
        }
    }
    if (!first)
        fputs("],\n", f);
    if (plen == strlen("grid.energy") && !strncmp(prefix, "grid.energy", plen)) {
        /* The one rule that ties two keys together and that JSON Schema can say:
         * n_bins goes with a uniform grid and only with it (kind defaults to range). */
        indent(f, level);
        fputs("\"if\": { \"properties\": { \"kind\": { \"const\": \"uniform\" } }, "
              "\"required\": [\"kind\"] },\n",
              f);
        indent(f, level);
        fputs("\"then\": { \"required\": [\"n_bins\"] },\n", f);
        indent(f, level);
        fputs("\"else\": { \"not\": { \"required\": [\"n_bins\"] } },\n", f);
    }
    indent(f, level);
    fputs("\"properties\": {\n", f);
    for (size_t i = 0; i < n; i++) {
        indent(f, level + 1);
        fprintf(f, "\"%.*s\": {\n", (int)kids[i].len, kids[i].name);
        if (kids[i].key >= 0) {
            json_key(f, &plan_keys[kids[i].key], defaults, level + 2);
        } else {
            const char *path = kids[i].name - (plen ? plen + 1 : 0);
            size_t clen = (size_t)(kids[i].name + kids[i].len - path);
            indent(f, level + 2);
            fputs("\"description\": ", f);
            plan_write_json_string(f, section_doc(path, clen));
            fputs(",\n", f);
            json_section(f, path, clen, defaults, level + 2);
        }
        indent(f, level + 1);
        fputs(i + 1 < n ? "},\n" : "}\n", f);
    }
    indent(f, level);
    fputs("}\n", f);
}

void plan_write_json_schema(FILE *f)
{
    plan defaults = { 0 };
    smx_error err = { 0 };
    plan_set_defaults(&defaults, &err);

    fputs("{\n", f);
    fputs("  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n", f);
    fputs("  \"title\": \"smx2d-sim run plan\",\n", f);
    fputs("  \"description\": \"One YAML file describes one run. Generated from the schema "
          "table in src/input/plan_schema.c by `smx2d-sim --print-plan-schema` (make schema); "
          "do not edit by hand. Cross-field rules (E_cutoff >= E_min, the beam inside the "
          "grid, ...) are checked by smx2d-sim itself, which also accepts a key written as "
          "one dotted path (grid.space.nx: 81), the form of its resolved plan.\",\n",
          f);
    json_section(f, "", 0, &defaults, 1);
    fputs("}\n", f);
    plan_free(&defaults);
}

/* ---- reference plan ---- */

/* Comment lines stay within 88 columns so the reference reads well in an editor. */
static void comment(FILE *f, int level, const char *text)
{
    const int width = 88 - 2 * level - 2;
    while (*text) {
        int len = (int)strlen(text);
        if (len > width) {
            int cut = width;
            while (cut > 0 && text[cut] != ' ')
                cut--;
            len = cut > 0 ? cut : width;
        }
        indent(f, level);
        fprintf(f, "# %.*s\n", len, text);
        text += len;
        while (*text == ' ')
            text++;
    }
}

static void reference_key(FILE *f, const plan_key *k, size_t name_off, int level)
{
    char expected[512], line[700];
    plan_key_expected(k, expected, sizeof expected);
    comment(f, level, k->doc);
    if (!k->default_value)
        snprintf(line, sizeof line, "%s; required (example value)", expected);
    else if (!k->default_value[0])
        snprintf(line, sizeof line, "%s; no default", expected);
    else
        snprintf(line, sizeof line, "%s; default %s", expected, k->default_value);
    comment(f, level, line);
    indent(f, level);
    if (!k->default_value)
        fprintf(f, "%s: %s\n", k->path + name_off, example_of(k));
    else if (!k->default_value[0])
        fprintf(f, "# %s: %s\n", k->path + name_off, example_of(k));
    else
        fprintf(f, "%s: %s\n", k->path + name_off, k->default_value);
    if (k->type == PT_SHAPE_LIST) {
        comment(f, level, "each shape:");
        for (size_t i = 0; i < plan_shape_field_count; i++) {
            const plan_field *fd = &plan_shape_fields[i];
            char line2[700];
            snprintf(line2, sizeof line2, "- %s (%s%s%s): %s", fd->name,
                     fd->required ? "required" : "optional", fd->units[0] ? ", " : "", fd->units,
                     fd->doc);
            comment(f, level, line2);
        }
        comment(f, level, "for example:");
        comment(f, level, "shapes:");
        comment(f, level, "  - {material: bone_compact, z_mm: [20, 40]}");
        comment(f, level,
                "  - {material: lung, z_mm: [60, 80], x_mm: [-10, 10], density_g_cm3: 0.26}");
    }
}

static void reference_section(FILE *f, const char *prefix, size_t plen, int level)
{
    child kids[64];
    size_t n = children_of(prefix, plen, kids, 64);
    for (size_t i = 0; i < n; i++) {
        size_t off = plen ? plen + 1 : 0;
        if (i > 0)
            fputc('\n', f);
        if (kids[i].key >= 0) {
            reference_key(f, &plan_keys[kids[i].key], off, level);
            continue;
        }
        const char *path = kids[i].name - off;
        size_t clen = (size_t)(kids[i].name + kids[i].len - path);
        comment(f, level, section_doc(path, clen));
        indent(f, level);
        fprintf(f, "%.*s:\n", (int)kids[i].len, kids[i].name);
        reference_section(f, path, clen, level + 1);
    }
}

void plan_write_reference(FILE *f)
{
    fputs("# smx2d-sim reference plan: every key, with its default value.\n"
          "#\n"
          "# Keys marked \"required\" have no default; the values given for them make a\n"
          "# small valid run (a 100 MeV pencil beam in water). Any other key may be left\n"
          "# out. A key may also be written as one dotted path (grid.space.nx: 81), and\n"
          "# `smx2d-sim PLAN --set key.path=value` overrides a key on the command line.\n"
          "#\n"
          "# Generated from src/input/plan_schema.c by `smx2d-sim --print-reference-plan`\n"
          "# (make schema); do not edit by hand. JSON Schema: schemas/plan.schema.json.\n"
          "\n",
          f);
    reference_section(f, "", 0, 0);
}
