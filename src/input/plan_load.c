/* Plan reader: YAML text -> node tree -> struct plan, every step checked
 * against the schema table in plan_schema.c.
 *
 * Order of work: built-in defaults, then the file, then --set overrides, then
 * required keys, then the rules that tie keys together, then the table file.
 * The first problem found is the one reported: later ones are usually its
 * consequences, and a message that names one place is one the user can act on. */
#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "input/plan_access.h"
#include "input/plan_internal.h"

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
    plan_names_under(path, plen, &nm);
    snprintf(full, sizeof full, "%.*s%s%.*s", (int)plen, path, plen ? "." : "",
             nlen > 100 ? 100 : (int)nlen, name);
    int best = INT_MAX;
    size_t bi = 0;
    for (size_t i = 0; i < nm.n; i++) {
        int d = smx_edit_distance(name, nlen, nm.name[i], nm.len[i]);
        if (d < best) {
            best = d;
            bi = i;
        }
    }
    if (best != INT_MAX && smx_close_enough(best, nlen))
        return loader_fail(L, at, "unknown key '%s'; did you mean '%.*s'?", full, (int)nm.len[bi],
                           nm.name[bi]);
    plan_join_names(&nm, list, sizeof list);
    return loader_fail(L, at, "unknown key '%s'; expected one of %s", full, list);
}

static int walk_mapping(loader *L, const yt_node *m, const char *prefix);

/* One "key: value" pair of the file; a key may be a dotted path. */
static int walk_pair(loader *L, const yt_node *key, const yt_node *val, const char *prefix)
{
    char path[256], shown[SHOW_MAX + 4];
    names nm;
    char list[600];
    if (key->kind != YT_SCALAR || strlen(key->text) != key->len) {
        plan_names_under(prefix, strlen(prefix), &nm);
        plan_join_names(&nm, list, sizeof list);
        return loader_fail(L, key, "%s%sa key must be a name, not %s; expected one of %s", prefix,
                           prefix[0] ? ": " : "",
                           key->kind == YT_SCALAR ? "text with NUL" : yt_kind_name(key), list);
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
                return loader_fail(L, key, "unknown key '%s%s%s'; %s is a key, not a section",
                                   prefix, prefix[0] ? "." : "",
                                   smx_show(key->text, key->len, shown, sizeof shown), path);
            if (L->key_line[ki])
                return loader_fail(L, key,
                                   "%s: duplicate key, first given at %d:%d; expected each "
                                   "key once",
                                   path, L->key_line[ki], L->key_col[ki]);
            if (plan_assign(L, ki, val))
                return SMX_EXIT_INPUT;
            L->key_line[ki] = key->line;
            L->key_col[ki] = key->col;
            L->p->loc[ki] = (plan_loc){ val->line, val->col, 0, 0, NULL };
            return 0;
        }
        if (!len || !plan_is_section(path, strlen(path)))
            return unknown_key(L, key, path, plen, s, len);
        record_section(L, path, key);
        if (s[len] != '.')
            break;
        s += len + 1;
    }
    if (yt_is_null(val))
        return 0; /* "backend:" with nothing under it: all defaults */
    if (val->kind != YT_MAPPING) {
        plan_names_under(path, strlen(path), &nm);
        plan_join_names(&nm, list, sizeof list);
        if (val->kind == YT_SCALAR)
            return loader_fail(L, val, "%s: got a scalar '%s'; expected a mapping with keys %s",
                               path, plan_show_node(val, shown, sizeof shown), list);
        return loader_fail(L, val, "%s: got %s; expected a mapping with keys %s", path,
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
                return loader_fail(L, key,
                                   "%s%s%s: duplicate key, first given at %d:%d; expected each "
                                   "key once",
                                   prefix, prefix[0] ? "." : "",
                                   plan_show_node(key, shown, sizeof shown), other->line,
                                   other->col);
            }
        }
        if (walk_pair(L, key, m->items[2 * i + 1], prefix))
            return SMX_EXIT_INPUT;
    }
    return 0;
}

/* The options that stand for a plan key (cli.c passes them as "--output=FILE"):
 * a value they fix (--overwrite), or NULL for the value given. */
static const struct {
    const char *option, *key, *value;
} option_keys[] = {
    { "--device", "backend.device", NULL },
    { "--output", "output.file", NULL },
    { "--threads", "backend.threads", NULL },
    { "--overwrite", "output.overwrite", "true" },
};

static int apply_override(loader *L, const char *arg)
{
    char key[256], shown[SHOW_MAX + 4], aliased[4200], typed[sizeof aliased + 16];
    L->option = NULL;
    /* "--output=FILE" is output.file=FILE, and its messages say --output FILE. */
    for (size_t i = 0; !strncmp(arg, "--", 2) && i < sizeof option_keys / sizeof *option_keys;
         i++) {
        size_t n = strlen(option_keys[i].option);
        if (strncmp(arg, option_keys[i].option, n) || (arg[n] != '=' && arg[n] != '\0'))
            continue;
        const char *value = option_keys[i].value ? option_keys[i].value : arg[n] ? arg + n + 1 : "";
        if (option_keys[i].value)
            snprintf(typed, sizeof typed, "%s", option_keys[i].option);
        else
            snprintf(typed, sizeof typed, "%s %s", option_keys[i].option, value);
        snprintf(aliased, sizeof aliased, "%s=%s", option_keys[i].key, value);
        L->option = option_keys[i].option;
        arg = aliased;
        break;
    }
    if (!L->option)
        snprintf(typed, sizeof typed, "--set %s", arg);
    const char *eq = strchr(arg, '=');
    L->cli = typed;
    if (!eq) {
        L->cli = NULL;
        return smx_fail(L->err, SMX_EXIT_INPUT,
                        "--set %s: missing '='; expected --set key.path=value, e.g. "
                        "--set beam.energy_MeV=150",
                        smx_show(arg, strlen(arg), shown, sizeof shown));
    }
    size_t klen = (size_t)(eq - arg);
    if (klen == 0)
        return loader_fail(L, NULL, "no key before '='; expected --set key.path=value");
    snprintf(key, sizeof key, "%.*s", klen < sizeof key ? (int)klen : (int)sizeof key - 1, arg);
    int ki = plan_key_index(key);
    if (ki < 0) {
        if (plan_is_section(key, strlen(key))) {
            names nm;
            char list[600];
            plan_names_under(key, strlen(key), &nm);
            plan_join_names(&nm, list, sizeof list);
            return loader_fail(L, NULL,
                               "'%s' is a section; expected a full key path, %s.NAME with "
                               "NAME one of %s",
                               key, key, list);
        }
        /* A key given without its section (E_max_MeV) counts as a near miss too. */
        int best = INT_MAX, bi = -1;
        int bare = strchr(key, '.') == NULL;
        for (size_t i = 0; i < plan_key_count; i++) {
            const char *path = plan_keys[i].path;
            int d = smx_edit_distance(key, strlen(key), path, strlen(path));
            if (bare) {
                const char *leaf = strrchr(path, '.') + 1;
                int dl = smx_edit_distance(key, strlen(key), leaf, strlen(leaf));
                if (dl < d)
                    d = dl;
            }
            if (d < best) {
                best = d;
                bi = (int)i;
            }
        }
        if (bi >= 0 && smx_close_enough(best, strlen(key)))
            return loader_fail(L, NULL, "unknown key '%s'; did you mean '%s'?", key,
                               plan_keys[bi].path);
        return loader_fail(L, NULL,
                           "unknown key '%s'; expected a key path such as beam.energy_MeV "
                           "(smx2d-sim --print-reference-plan lists them all)",
                           key);
    }
    if (plan_assign_text(L, ki, eq + 1))
        return SMX_EXIT_INPUT;
    L->p->loc[ki] = (plan_loc){ 0, 0, 1, 0, L->option };
    L->cli = NULL;
    L->option = NULL;
    return 0;
}

static int read_file(plan *p, const char *path, smx_error *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: cannot open the plan: %s", path, strerror(errno));
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int rc = buf ? 0 : -1;
    while (!rc) {
        if (len + 1 == cap) {
            char *grown = cap < PLAN_MAX_BYTES ? realloc(buf, cap * 2) : NULL;
            if (cap >= PLAN_MAX_BYTES)
                rc = smx_fail(err, SMX_EXIT_INPUT,
                              "%s: the file is larger than %u MiB; "
                              "expected a plan of a few kilobytes",
                              path, PLAN_MAX_BYTES >> 20);
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
        return rc < 0 ? smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory reading the plan", path)
                      : rc;
    }
    buf[len] = '\0';
    p->yaml_text = buf;
    p->yaml_len = len;
    return 0;
}

static int copy_text(plan *p, const char *name, const char *text, smx_error *err)
{
    const size_t len = strlen(text);
    if (len >= PLAN_MAX_BYTES)
        return smx_fail(err, SMX_EXIT_INPUT, "%s: the plan is larger than %u MiB", name,
                        PLAN_MAX_BYTES >> 20);
    if (!(p->yaml_text = malloc(len + 1)))
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory reading the plan", name);
    memcpy(p->yaml_text, text, len + 1);
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

/* grid.angle's keys the plan left out: marked for the set-up to work out
 * from the beam (physics/angle_grid.h) and given meanwhile values that pass
 * the plan's checks: the bins of a 41-bin window over +-20 deg, a window wide
 * enough for every spot's direction. */
static void provisional_angles(plan *p)
{
    const int nb = plan_key_index("grid.angle.n_bins"),
              hw = plan_key_index("grid.angle.half_width_deg");
    p->angle_auto = 0;
    if (!(p->loc[nb].line > 0 || p->loc[nb].from_cli)) {
        p->angle_auto |= PLAN_ANGLE_BINS;
        p->angle_bins = 41;
        p->loc[nb].derived = 1;
    }
    if (!(p->loc[hw].line > 0 || p->loc[hw].from_cli)) {
        /* One direction for every spot and no centre given: the window
         * centred on it, so that the beam starts on a bin centre. */
        const int ce = plan_key_index("grid.angle.centre_deg");
        int one = plan_spot_count(p) > 0;
        for (int i = 1; one && i < plan_spot_count(p); i++)
            one = plan_spot_at(p, i).direction_deg == plan_spot_at(p, 0).direction_deg;
        if (one && p->angle_mode == ANGLE_WINDOW && !(p->loc[ce].line > 0 || p->loc[ce].from_cli)) {
            p->angle_centre_deg = plan_spot_at(p, 0).direction_deg;
            p->loc[ce].derived = p->angle_centre_deg != 90.0;
        }
        double off = 0.0;
        for (int i = 0; i < plan_spot_count(p); i++) {
            double d = fmod(plan_spot_at(p, i).direction_deg - p->angle_centre_deg, 360.0);
            d = d > 180.0 ? d - 360.0 : d < -180.0 ? d + 360.0 : d;
            off = fmax(off, fabs(d));
        }
        p->angle_half_width_deg = fmin(180.0, 20.0 + off);
        p->loc[hw].derived = 1;
        if (p->angle_mode == ANGLE_WINDOW)
            p->angle_auto |= PLAN_ANGLE_WIDTH;
    }
}

/* Into L's plan: text NULL: the plan is read from L's file; otherwise it is
 * text itself and the file only names it in messages (it has no directory). */
static int load(loader *L, const char *text, const char *const *overrides, int n_overrides)
{
    plan *p = L->p;
    const char *path = L->file;
    smx_error *err = L->err;
    if (strlen(path) >= sizeof p->path)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "%.200s...: the plan's path is longer than %d "
                        "bytes",
                        path, PLAN_PATH_MAX - 1);
    snprintf(p->path, sizeof p->path, "%s", path);
    if (!text)
        set_dir(p);
    p->loc = calloc(plan_key_count, sizeof *p->loc);
    L->key_line = calloc(plan_key_count, sizeof *L->key_line);
    L->key_col = calloc(plan_key_count, sizeof *L->key_col);
    if (!p->loc || !L->key_line || !L->key_col)
        return smx_fail(err, SMX_EXIT_RUNTIME, "%s: out of memory", path);
    if (plan_set_defaults(p, err))
        return SMX_EXIT_INPUT;
    if (text ? copy_text(p, path, text, err) : read_file(p, path, err))
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
    plan_names_under("", 0, &top);
    plan_join_names(&top, list, sizeof list);
    int rc;
    if (!root)
        rc = smx_fail(err, SMX_EXIT_INPUT,
                      "%s: the plan is empty; expected a mapping with "
                      "sections %s",
                      path, list);
    else if (root->kind != YT_MAPPING)
        rc = smx_fail(err, SMX_EXIT_INPUT,
                      "%s:%d:%d: the top level is %s; expected a mapping "
                      "with sections %s",
                      path, root->line, root->col, yt_kind_name(root), list);
    else
        rc = walk_mapping(L, root, "");
    yt_free(root);
    if (rc)
        return rc;

    for (int i = 0; i < n_overrides; i++)
        if (apply_override(L, overrides[i]))
            return SMX_EXIT_INPUT;
    if (plan_check_required(L) || (p->spots_file[0] && plan_spots_load(p, err)))
        return SMX_EXIT_INPUT;
    /* The energy grid from the beam when the plan leaves its top out: the
     * highest top of a spot's spectrum, whole MeV above. */
    int emax = plan_key_index("grid.energy.E_max_MeV");
    if (!(p->loc[emax].line > 0 || p->loc[emax].from_cli)) {
        double top = 0.0;
        for (int i = 0; i < plan_spot_count(p); i++) {
            plan_spot s = plan_spot_at(p, i);
            top = fmax(top, plan_spectrum_top_MeV(&s));
        }
        p->E_max_MeV = ceil(top);
        p->loc[emax].derived = 1;
    }
    provisional_angles(p);
    if (plan_check_consistency(p, err) ||
        plan_resolve_data_file(p, "material.table_file", p->table_file, p->table_path, err))
        return SMX_EXIT_INPUT;
    /* The geometry's files are found like the table; they are read when the
     * medium map is built (physics/medium_plan.c). */
    if ((p->map_file[0] &&
         plan_resolve_data_file(p, "geometry.map_file", p->map_file, p->map_path, err)) ||
        (p->ct_file[0] &&
         plan_resolve_data_file(p, "geometry.ct.file", p->ct_file, p->ct_path, err)) ||
        (p->ct_calibration[0] &&
         plan_resolve_data_file(p, "geometry.ct.calibration", p->ct_calibration,
                                p->ct_calibration_path, err)))
        return SMX_EXIT_INPUT;
    plan_warn_accuracy(p);
    return 0;
}

static int load_from(plan *p, const char *path, const char *text, const char *const *overrides,
                     int n_overrides, smx_error *err)
{
    memset(p, 0, sizeof *p);
    loader L = { .p = p, .err = err, .file = path };
    int rc = load(&L, text, overrides, n_overrides);
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

int plan_load(plan *p, const char *path, const char *const *overrides, int n_overrides,
              smx_error *err)
{
    return load_from(p, path, NULL, overrides, n_overrides, err);
}

int plan_load_text(plan *p, const char *name, const char *text, const char *const *overrides,
                   int n_overrides, smx_error *err)
{
    return load_from(p, name, text ? text : "", overrides, n_overrides, err);
}

void plan_free(plan *p)
{
    if (!p)
        return;
    free(p->yaml_text);
    free(p->loc);
    free(p->spots);
    free(p->spots_text);
    p->spots = NULL;
    p->spots_text = NULL;
    p->spots_len = 0;
    p->n_spots = 0;
    p->yaml_text = NULL;
    p->yaml_len = 0;
    p->loc = NULL;
}
