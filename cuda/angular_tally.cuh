// A_theta's tallies of one column: what it reads (kept, dropped below the
// early-exit threshold, scattered past a window's edge) and the running sums
// each thread adds them to. Every kernel that applies A_theta uses them: the
// direct kernels and the FFT path (angular_internal.cuh), so that their
// tallies are the same sums.
#ifndef SMX_CUDA_ANGULAR_TALLY_CUH
#define SMX_CUDA_ANGULAR_TALLY_CUH

#include "common.cuh"

static_assert(TF_W_THETA_CUTOFF == TF_W_THETA_BOUNDARY + 1, "partials fields must be adjacent");
static_assert(TF_E_THETA_CUTOFF == TF_E_THETA_BOUNDARY + 1, "partials fields must be adjacent");

namespace {

// One column's inputs as they are read: values below the early-exit threshold
// are dropped, the rest summed (and, in window mode, weighted by the share the
// kernel scatters past an edge).
// With kernels per source bin (cut: each source bin's cut-off per unit
// weight) the cut-off is summed per bin as well.
struct column_input {
    double kept = 0.0, bnd = 0.0, dropped = 0.0, cut = 0.0;

    // Returns the value to convolve.
    __device__ float take(float v, int th, bool use_thr, float threshold, const double *bf,
                          bool window, const double *cut_of = nullptr)
    {
        if (use_thr && v < threshold) {
            dropped += v;
            v = 0.0f;
        }
        kept += v;
        if (window)
            bnd += (double)v * bf[th];
        if (cut_of)
            cut += (double)v * cut_of[th];
        return v;
    }
};

// Column tallies of one thread added to its running sums.
struct theta_tally {
    double wb = 0.0, wc = 0.0, eb = 0.0, ec = 0.0;

    __device__ void add(const column_input &in, double wsum, double E)
    {
        // in.cut is +0 with one kernel per bin: the sum is unchanged.
        const double cut = in.kept * (1.0 - wsum) + in.cut + in.dropped, bnd = in.bnd;
        wb += bnd;
        wc += cut;
        eb += bnd * E;
        ec += cut * E;
    }

    // Every thread of the block must call this (barriers inside).
    __device__ void write(double *partials, int blocks) const
    {
        if (!partials)
            return;
        const double w[2] = { wb, wc }, e[2] = { eb, ec };
        block_partials<2>(w, partials, TF_W_THETA_BOUNDARY, blocks);
        block_partials<2>(e, partials, TF_E_THETA_BOUNDARY, blocks);
    }
};

} // namespace

#endif
