/* An error a lower layer put at a plan key (smx_error.key: smx_fail_key,
 * smx_blame_key) worded by the layer that owns the plan, as the reader words
 * its own (plan.h, plan_word_error). A unit of its own: it reads the keys,
 * the shapes and the spots, and none of them reads it. */
#include <stdio.h>
#include <string.h>

#include "input/plan_access.h"
#include "input/plan_internal.h"

int plan_word_error(const plan *p, smx_error *err)
{
    if (!err->key[0])
        return err->code;
    char key[sizeof err->key];
    memcpy(key, err->key, sizeof key);
    err->key[0] = '\0';
    const int code = err->code; /* a device error at a key stays a device error */
    smx_error at_key = { 0 }; /* smx_fail keeps the first error set: start afresh */
    int i = -1, n = 0;
    if (sscanf(key, "geometry.shapes[%d]%n", &i, &n) == 1 && n > 0 && i >= 0 && i < p->n_shapes &&
        (key[n] == '\0' || key[n] == '.'))
        plan_fail_at_shape(p, &at_key, i, key[n] ? key + n + 1 : NULL, "%s", err->msg);
    else if (sscanf(key, "beam.spots[%d]%n", &i, &n) == 1 && n > 0 && i >= 0 &&
             i < plan_spot_count(p) && key[n] == '.') {
        const plan_spot s = plan_spot_at(p, i);
        plan_spot_fail(p, &s, key + n + 1, &at_key, "%s", err->msg);
    } else
        plan_fail_at(p, &at_key, key, "%s", err->msg);
    *err = at_key;
    err->code = code;
    return err->code;
}
