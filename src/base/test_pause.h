/* The CUDA backend's test switches (read from the environment). The seams
 * that pause a run, fail a process or shrink the per-spot band are in
 * base/test_hooks.h, which a test program installs. */
#ifndef SMX_TEST_PAUSE_H
#define SMX_TEST_PAUSE_H

#include "base/test_hooks.h"

/* A hook for tests of the CUDA backend's two paths for runs with media: with
 * SMX2D_TEST_MEDIA_ONE_PASS=1 in the environment every such run steps in one
 * pass where it can, with -1 never; otherwise (0) the backend chooses per
 * source (backend_options, transport/backend.h). */
int smx_test_media_one_pass(void);

/* A hook for tests of the CUDA one-pass step's per-slot boxes: with
 * SMX2D_TEST_SLOT_BOXES=0 in the environment spots side by side step on the
 * union of their boxes (0 returned); otherwise each on its slot's (1). */
int smx_test_slot_boxes(void);

#endif
