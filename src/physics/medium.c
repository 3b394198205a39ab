#include "physics/medium.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_name(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

int medium_map_add_material(medium_map *m, const char *name, const char *table_path, smx_error *err)
{
    for (int i = 0; i < m->n_materials; i++)
        if (strcmp(m->materials[i].name, name) == 0 &&
            strcmp(m->materials[i].table_path, table_path) == 0)
            return i;
    if (m->n_materials >= MEDIUM_MAX)
        return smx_fail(err, SMX_EXIT_INPUT, "more than %d materials in one plan", MEDIUM_MAX), -1;
    medium_material *nm = realloc(m->materials, (size_t)(m->n_materials + 1) * sizeof *nm);
    if (!nm)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material list)"), -1;
    m->materials = nm;
    copy_name(nm[m->n_materials].name, sizeof nm->name, name);
    copy_name(nm[m->n_materials].table_path, sizeof nm->table_path, table_path);
    return m->n_materials++;
}

int medium_map_add_medium(medium_map *m, int material, double density_g_cm3, smx_error *err)
{
    for (int i = 0; i < m->n_media; i++)
        if (m->media[i].material == material && m->media[i].density_g_cm3 == density_g_cm3)
            return i;
    if (m->n_media >= MEDIUM_MAX)
        return smx_fail(err, SMX_EXIT_INPUT,
                        "more than %d distinct (material, density) media in one plan; "
                        "quantise the densities more coarsely",
                        MEDIUM_MAX),
               -1;
    medium *nm = realloc(m->media, (size_t)(m->n_media + 1) * sizeof *nm);
    if (!nm)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (media list)"), -1;
    m->media = nm;
    nm[m->n_media] = (medium){ material, density_g_cm3 };
    return m->n_media++;
}

int medium_map_uniform(medium_map *m, int nz, int nx, const uniform_medium *u, smx_error *err)
{
    *m = (medium_map){ .nz = nz, .nx = nx };
    int mat = medium_map_add_material(m, u->name, u->table_path, err);
    if (mat < 0 || medium_map_add_medium(m, mat, u->density_g_cm3, err) < 0) {
        medium_map_free(m);
        return err->code ? err->code : SMX_EXIT_RUNTIME;
    }
    snprintf(m->rule, sizeof m->rule, "uniform");
    return 0;
}

int medium_map_cells(medium_map *m, smx_error *err)
{
    if (m->cell)
        return 0;
    m->cell = calloc((size_t)m->nz * (size_t)m->nx, 1);
    if (!m->cell)
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material map of %d x %d cells)",
                        m->nz, m->nx);
    return 0;
}

int medium_map_scaled(medium_map *dst, const medium_map *src, double divisor, smx_error *err)
{
    *dst = *src;
    dst->materials = NULL;
    dst->media = NULL;
    dst->cell = NULL;
    const size_t cells = src->cell ? (size_t)src->nz * (size_t)src->nx : 0;
    dst->materials = malloc((size_t)src->n_materials * sizeof *dst->materials);
    dst->media = malloc((size_t)src->n_media * sizeof *dst->media);
    dst->cell = cells ? malloc(cells) : NULL;
    if (!dst->materials || !dst->media || (cells && !dst->cell)) {
        medium_map_free(dst);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material map of %d x %d cells)",
                        src->nz, src->nx);
    }
    memcpy(dst->materials, src->materials, (size_t)src->n_materials * sizeof *dst->materials);
    memcpy(dst->media, src->media, (size_t)src->n_media * sizeof *dst->media);
    if (cells)
        memcpy(dst->cell, src->cell, cells);
    /* 1 leaves every density the same bits (a shift-only scenario). */
    if (divisor != 1.0)
        for (int i = 0; i < dst->n_media; i++)
            dst->media[i].density_g_cm3 = src->media[i].density_g_cm3 / divisor;
    return 0;
}

void medium_map_free(medium_map *m)
{
    free(m->materials);
    free(m->media);
    free(m->cell);
    *m = (medium_map){ 0 };
}

int medium_map_to_reference(const medium_map *m, double rho_ref, double **out)
{
    *out = NULL;
    if (!m || !m->cell)
        return 0;
    const int64_t n = (int64_t)m->nz * m->nx;
    double *r = malloc((size_t)n * sizeof *r);
    if (!r)
        return -1;
    for (int64_t c = 0; c < n; c++)
        r[c] = rho_ref / m->media[m->cell[c]].density_g_cm3;
    *out = r;
    return 0;
}

double medium_quantise_density(double rho, double step)
{
    if (step <= 0.0)
        return rho;
    double l = log1p(step);
    return exp(l * nearbyint(log(rho) / l));
}

typedef struct pair {
    int material;
    double density;
} pair;

static int pair_cmp(const void *a, const void *b)
{
    const pair *x = a, *y = b;
    if (x->material != y->material)
        return x->material < y->material ? -1 : 1;
    return x->density < y->density ? -1 : x->density > y->density;
}

/* The distinct pairs of cells[], sorted, in place; returns their count. */
static size_t unique_pairs(pair *p, size_t n)
{
    qsort(p, n, sizeof *p, pair_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || pair_cmp(&p[u - 1], &p[i]) != 0)
            p[u++] = p[i];
    return u;
}

static int existing_medium(const medium_map *m, const pair *q)
{
    for (int i = 0; i < m->n_media; i++)
        if (m->media[i].material == q->material && m->media[i].density_g_cm3 == q->density)
            return i;
    return -1;
}

int medium_map_fill_cells(medium_map *m, const int *material, const double *density, int reserve,
                          smx_error *err)
{
    const size_t n = (size_t)m->nz * (size_t)m->nx;
    /* The distinct exact pairs first (one sort of the cells); each trial step
     * then quantises only those. */
    pair *exact = malloc((n ? n : 1) * sizeof *exact), *q = NULL;
    size_t *to_q = NULL;
    int *index = NULL, rc = 0;
    if (!exact || medium_map_cells(m, err)) {
        rc =
            err->code ? err->code : smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material map)");
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        exact[i] = (pair){ material[i], density[i] };
    const size_t ne = unique_pairs(exact, n);
    q = malloc((ne ? ne : 1) * sizeof *q);
    to_q = malloc((ne ? ne : 1) * sizeof *to_q);
    if (!q || !to_q) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material map)");
        goto done;
    }
    const int room = MEDIUM_MAX - reserve;
    double step = 0.0;
    size_t nq = 0;
    for (;;) {
        /* Rounding is monotone in the density, so the quantised list stays
         * sorted and equal values are neighbours. */
        nq = 0;
        for (size_t k = 0; k < ne; k++) {
            pair v = { exact[k].material, medium_quantise_density(exact[k].density, step) };
            if (nq == 0 || pair_cmp(&q[nq - 1], &v) != 0)
                q[nq++] = v;
            to_q[k] = nq - 1;
        }
        int fresh = 0;
        for (size_t k = 0; k < nq; k++)
            fresh += existing_medium(m, &q[k]) < 0;
        if (m->n_media + fresh <= room)
            break;
        step = step == 0.0 ? 0.005 : 2.0 * step;
        if (step > 4.0) {
            rc = smx_fail(err, SMX_EXIT_INPUT,
                          "the map has more than %d materials x density levels even with "
                          "densities quantised in steps of a factor 5; expected at most %d media",
                          room, room);
            goto done;
        }
    }
    index = malloc((nq ? nq : 1) * sizeof *index);
    if (!index) {
        rc = smx_fail(err, SMX_EXIT_RUNTIME, "out of memory (material map)");
        goto done;
    }
    for (size_t k = 0; k < nq; k++)
        if ((index[k] = medium_map_add_medium(m, q[k].material, q[k].density, err)) < 0) {
            rc = err->code;
            goto done;
        }
    for (size_t i = 0; i < n; i++) {
        const pair key = { material[i], density[i] };
        const pair *hit = bsearch(&key, exact, ne, sizeof *exact, pair_cmp);
        m->cell[i] = (uint8_t)index[to_q[hit - exact]];
    }
    m->density_step = step;
done:
    free(exact);
    free(q);
    free(to_q);
    free(index);
    return rc;
}
