/* The scenarios of a robust plan (scenarios.*; docs/planning.md): which
 * (range error, shift) pairs the keys make, in which order, and what a
 * scenario changes in a plan. Scenario 0 is always the nominal plan. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "input/plan_internal.h"

/* The lists' lengths, and 1 + each: the "all" grid includes 0 on both axes. */
static int n_range(const plan *p)
{
    return p->n_scenario_range_percent;
}

static int n_shift(const plan *p)
{
    return p->n_scenario_shift_mm;
}

int plan_scenario_count(const plan *p)
{
    switch (p->scenario_combine) {
    case SCENARIO_ALL:
        return (1 + n_range(p)) * (1 + n_shift(p));
    case SCENARIO_PAIRS:
        /* Unequal lists are refused by the reader (plan_check_consistency);
         * the shorter one bounds the pairs so that no list is read past its end. */
        return 1 + (n_range(p) < n_shift(p) ? n_range(p) : n_shift(p));
    default:
        return 1 + n_range(p) + n_shift(p);
    }
}

plan_scenario plan_scenario_at(const plan *p, int i)
{
    plan_scenario s = { 0.0, 0.0 };
    if (i <= 0 || i >= plan_scenario_count(p))
        return s;
    switch (p->scenario_combine) {
    case SCENARIO_ALL: {
        /* Row-major over ({0} u ranges) x ({0} u shifts): (0, 0) first. */
        const int ir = i / (1 + n_shift(p)), is = i % (1 + n_shift(p));
        if (ir > 0)
            s.range_error_percent = p->scenario_range_percent[ir - 1];
        if (is > 0)
            s.shift_mm = p->scenario_shift_mm[is - 1];
        return s;
    }
    case SCENARIO_PAIRS:
        s.range_error_percent = p->scenario_range_percent[i - 1];
        s.shift_mm = p->scenario_shift_mm[i - 1];
        return s;
    default:
        if (i <= n_range(p))
            s.range_error_percent = p->scenario_range_percent[i - 1];
        else
            s.shift_mm = p->scenario_shift_mm[i - 1 - n_range(p)];
        return s;
    }
}

void plan_apply_scenario(plan *p, int i)
{
    const plan_scenario s = plan_scenario_at(p, i);
    p->scenario_index = i;
    /* Zero changes nothing, bit for bit: a (0, 0) scenario is the nominal. */
    if (s.range_error_percent != 0.0) {
        /* Mass stopping and scattering powers stay: dividing the densities
         * scales every water-equivalent depth by 1 / (1 + r/100), so the
         * range in mm grows by 1 + r/100 and the CSDA range in g/cm2 stays. */
        const double divisor = 1.0 + s.range_error_percent / 100.0;
        p->density_g_cm3 = p->density_g_cm3 / divisor;
        for (int k = 0; k < p->n_shapes; k++)
            if (p->shapes[k].density_g_cm3 > 0) /* 0: the library's, divided by the map */
                p->shapes[k].density_g_cm3 = p->shapes[k].density_g_cm3 / divisor;
    }
    if (s.shift_mm != 0.0) {
        p->beam_x_mm += s.shift_mm;
        for (int k = 0; k < p->n_spots; k++)
            p->spots[k].x_mm += s.shift_mm;
    }
}

/* A copy of src's owned buffer of n bytes into *dst (NULL stays NULL). */
static int dup_bytes(void *dst_ptr, const void *src, size_t n)
{
    void **dst = dst_ptr;
    *dst = NULL;
    if (!src)
        return 0;
    if (!(*dst = malloc(n ? n : 1)))
        return -1;
    memcpy(*dst, src, n);
    return 0;
}

int plan_scenario_copy(plan *dst, const plan *src, int i, smx_error *err)
{
    *dst = *src;
    dst->yaml_text = dst->spots_text = NULL;
    dst->loc = NULL;
    dst->spots = NULL;
    /* The copy owns its buffers, so plan_free frees either plan alone. */
    if (dup_bytes(&dst->yaml_text, src->yaml_text, src->yaml_len + 1) ||
        dup_bytes(&dst->loc, src->loc, plan_key_count * sizeof *src->loc) ||
        dup_bytes(&dst->spots, src->spots, (size_t)src->n_spots * sizeof *src->spots) ||
        dup_bytes(&dst->spots_text, src->spots_text, src->spots_len + 1)) {
        plan_free(dst);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory copying the plan for scenario %d", i);
    }
    if (i > 0)
        plan_apply_scenario(dst, i);
    return 0;
}
