// The CUDA backend's end-of-step bookkeeping: the measure of the new state
// (weight, energy, front) for the paths that do not measure inside their last
// kernel, and the one-block finish that sums the partials in a fixed order,
// writes the step's record, updates the occupied boxes and decides the auto stop.
#ifndef SMX_CUDA_BOOKKEEPING_CUH
#define SMX_CUDA_BOOKKEEPING_CUH

#include "common.cuh"
#include "energy.cuh"

#define RING 64 // steps between collects; the record ring holds one interval

struct step_rec_dev {
    double f[TF_COUNT];
    double w_in, e_in;
    int front;
    int back; // shallowest row holding weight (0 without regions: a lower bound)
    int stopped;
};

struct run_state_dev {
    double w_prev, e_prev;
    double stop_below; // auto: weight threshold; < 0 = fixed step count
    int64_t step; // steps completed
    int n_since; // records written since the last collect
};

cudaError_t measure_launch(const float *psi, dev_dims d, const double *E, const int *stop,
                           double *partials, int *front_part, int blocks, cudaStream_t s);
cudaError_t finish_launch(const double *partials, int slots, const int *front_part, int blocks,
                          step_rec_dev *ring, run_state_dev *st, int *stop, int ne, box4 *box_a,
                          box4 *box_next, active_regions *reg, energy_tables_dev et,
                          int single_pass, cudaStream_t s, box4 *slot_boxes = nullptr,
                          int *slot_pref = nullptr, int nslots = 0);
// Zeroes rows z0..z1 (whole pitch) of every direction of bins lo..hi: where a
// finished run left values, so that a field's next spot starts from zeros
// without clearing the whole state.
cudaError_t clear_rows_launch(float *psi, dev_dims d, int z0, int z1, int lo, int hi,
                              cudaStream_t s);
// Source bins that hold weight and the target bins they move to (host side).
void active_bin_ranges(const box4 *box, int ne, const int2 *trange, active_regions *reg);

#endif
