// The moving window's shift on the device (window_shift.cu).
#ifndef SMX_CUDA_WINDOW_SHIFT_CUH
#define SMX_CUDA_WINDOW_SHIFT_CUH

#include "bookkeeping.cuh"
#include "common.cuh"

// Moves the state `rows` rows towards z = 0: cur's occupied rows over its
// source bins (rg: the regions as the host read them after the last step),
// the dose, and the boxes and regions in box_a and reg; zeroes the other
// buffer's written rows. The dose rows that leave must have been copied out
// before (they are overwritten). nslots > 1: the slots' boxes move too.
// ncomp: the state's components (moments.cuh), each moved and cleared alike;
// planes: the dose's (the dose, then the released energy's), each moved.
cudaError_t window_shift_launch(float *cur, float *other, double *dose, int planes, box4 *box_a,
                                active_regions *reg, const active_regions &rg, dev_dims d, int rows,
                                box4 *slot_boxes, int *slot_pref, int nslots, int ncomp,
                                cudaStream_t s);

#endif
