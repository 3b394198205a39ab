/* The tests' switches of the backends (tests/backend_runner.h, test_gpu): a
 * setup like backend_ops.setup that also takes them. Each sends a small grid
 * down a path that only larger grids or other devices would take, so that the
 * path is compared with the CPU. A run never sees them: backend_ops.setup
 * takes backend_test_options_default(). Only the tests and the backends'
 * setups include this header. */
#ifndef SMX_BACKEND_TEST_H
#define SMX_BACKEND_TEST_H

#include <string.h>

#include "base/error.h"
#include "physics/sim_tables.h"
#include "transport/backend.h"

/* Switches of the CUDA backend; other backends ignore them. */
typedef struct cuda_test_options {
    int force_fft_from; /* the hybrid angular method with bins >= this on the FFT; 0 = off */
    int fused_kp_cap; /* widest kernel the fused step convolves from its padded stage
                                  (wider ones take the bounds-checked path); 0 = default */
    int fused_split_off; /* 1 = the fused step never splits a tile's energy range */
    int media_whole_grid; /* 1 = a run with media steps with one kernel per operator
                                  over the whole grid (the baseline), not in one pass */
    int fused_one_tile; /* 1 = the fused step's unsplit blocks walk one tile each, as on
                                  grids whose bins leave no room for two stage rings */
    int fused_boundary_global; /* 1 = the fused step reads the window's boundary fractions of
                                  wide kernels from global memory, not shared */
    int cuda_pad_rows; /* 1 = every grid's rows padded to whole 128-byte lines
                                  (row_pitch_for), not only the fused kernels' */
    int slot_boxes_off; /* 1 = spots side by side step on the union of their boxes, not
                                  each slot's own (cuda/common.cuh, slot_boxes) */
} cuda_test_options;

typedef struct backend_test_options {
    int only_op; /* apply only this enum op_id per step; -1 = every operator */
    cuda_test_options cuda; /* the CUDA backend's */
} backend_test_options;

/* A run's options: every operator, every CUDA switch off. */
static inline backend_test_options backend_test_options_default(void)
{
    backend_test_options o;
    memset(&o, 0, sizeof o);
    o.only_op = -1;
    return o;
}

/* backend_ops.setup with the switches o (NULL: the defaults). */
int backend_cpu_setup_test(void **ctx, const sim_tables *s, const backend_test_options *o,
                           smx_error *err);
#ifdef SMX_HAVE_CUDA
int backend_cuda_setup_test(void **ctx, const sim_tables *s, const backend_test_options *o,
                            smx_error *err);
#endif

/* That setup of backend be (one of the tables of transport/backend.h). */
static inline int backend_setup_test(const backend_ops *be, void **ctx, const sim_tables *s,
                                     const backend_test_options *o, smx_error *err)
{
#ifdef SMX_HAVE_CUDA
    if (be == &backend_cuda)
        return backend_cuda_setup_test(ctx, s, o, err);
#endif
    (void)be;
    return backend_cpu_setup_test(ctx, s, o, err);
}

#endif
