/* Where a data file named in a plan is found: as written when absolute, else
 * next to the plan (dir), in $SMX2D_DATA_DIR, in the installed data directory
 * or the source tree's data/. Used by the plan reader for the keys that name
 * files (input/plan.h, plan_resolve_data_file) and by the medium map for the
 * tables of library materials, which no key names. */
#ifndef SMX_DATA_FILE_H
#define SMX_DATA_FILE_H

#include <stddef.h>

#include "base/error.h"

/* The path found goes to out (cap bytes). On failure an input error whose
 * message says what was tried ("'NAME' was not found; tried ..."), without
 * the key or the plan: the caller puts it at its key. */
int data_file_find(const char *dir, const char *name, char *out, size_t cap, smx_error *err);

#endif
