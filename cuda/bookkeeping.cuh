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

// The measure of a state: psi on grid d (E: the bins' centres), tallied into
// the per-block partials (TF_W_OUT, TF_E_OUT) and each block's deepest row
// holding weight (front_part), unless the stop flag is set.
struct measure_args {
    const float *psi;
    dev_dims d;
    const double *E;
    const int *stop;
    double *partials;
    int *front_part;
    int blocks;
};
cudaError_t measure_launch(const measure_args &a, cudaStream_t s);

// What the end-of-step bookkeeping reads and updates: the partials (`slots`
// slots of TF_COUNT fields of `blocks` values each) and the blocks' fronts;
// the record ring and the run's state; the stop flag; the ne bins' boxes
// (box_a the state's, box_next this step's measure: the fused paths, NULL
// otherwise) and the active regions; the energy tables (each bin's target
// range); single_pass: the state alternates between the buffers; with
// nslots > 1 (at most FUSED_SLOTS) each slot's boxes and tiles (slot_boxes,
// slot_pref), NULL and 0 otherwise.
struct finish_args {
    const double *partials;
    int slots;
    const int *front_part;
    int blocks;
    step_rec_dev *ring;
    run_state_dev *st;
    int *stop;
    int ne;
    box4 *box_a, *box_next;
    active_regions *reg;
    energy_tables_dev et;
    int single_pass;
    box4 *slot_boxes;
    int *slot_pref;
    int nslots;
    // nslots > 1: the column groups' bins (common.cuh) of nz rows; this
    // step's GB_OUTPUT ranges, next step's GB_NEXT, are cleared.
    group_bins_dev gbins;
    int nz;
};
cudaError_t finish_launch(const finish_args &a, cudaStream_t s);

// Rows z0..z1 (whole pitch) of every direction of bins lo..hi.
struct bin_rows {
    int z0, z1, lo, hi;
};
// Zeroes rows r of psi on grid d: where a finished run left values, so that
// a field's next spot starts from zeros without clearing the whole state.
cudaError_t clear_rows_launch(float *psi, dev_dims d, bin_rows r, cudaStream_t s);
// Source bins that hold weight and the target bins they move to (host side).
void active_bin_ranges(const box4 *box, int ne, const int2 *trange, active_regions *reg);

#endif
