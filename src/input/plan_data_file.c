/* A data file named by a plan key, found as base/data_file.h says, and an
 * error at the key when it is not (plan.h, plan_resolve_data_file). */
#include "base/data_file.h"
#include "input/plan_internal.h"

int plan_resolve_data_file(const plan *p, const char *key, const char *name, char *out,
                           smx_error *err)
{
    smx_error e = { 0 };
    int rc = data_file_find(p->dir, name, out, PLAN_PATH_MAX, &e);
    return rc ? plan_fail_at(p, err, key, "%s", e.msg) : 0;
}
