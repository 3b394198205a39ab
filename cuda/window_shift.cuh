// The moving window's shift on the device (window_shift.cu).
#ifndef SMX_CUDA_WINDOW_SHIFT_CUH
#define SMX_CUDA_WINDOW_SHIFT_CUH

#include "bookkeeping.cuh"
#include "common.cuh"

// What a shift of the window moves: the state's buffer (cur, ncomp
// components of d.cells each, moments.cuh) and the other one (other); the
// dose's planes (the dose, then the released energy's); the boxes and regions
// on the device (box_a, reg) and the regions as the host read them after the
// last step (rg); with nslots > 1 the slots' boxes and tiles.
struct window_shift_args {
    float *cur, *other;
    int ncomp;
    double *dose;
    int planes;
    box4 *box_a;
    active_regions *reg;
    active_regions rg;
    dev_dims d;
    box4 *slot_boxes;
    int *slot_pref;
    int nslots;
    group_bins_dev gbins; // nslots > 1: the column groups' bins, at step st->step
    bool groups_kept; // the steps keep gbins (slot_boxes_visited): the psi move may skip by them
    const run_state_dev *st;
};

// Moves the state `rows` rows towards z = 0: cur's occupied rows over its
// source bins, the dose, and the boxes and regions in box_a and reg; zeroes
// the other buffer's written rows. The dose rows that leave must have been
// copied out before (they are overwritten). nslots > 1: the slots' boxes move
// too. Each component is moved and cleared alike; each plane of the dose moved.
cudaError_t window_shift_launch(const window_shift_args &a, int rows, cudaStream_t s);

#endif
