// A_theta in the CUDA backend: the angular method (direct convolution or
// cuFFT) chosen once at start-up by timing both on the initial state, per
// sigma bucket, and locked for the run; and A_theta launched with it.
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

#include "backend_cuda_internal.cuh"

// A_theta on energy bins lo..hi only, with one method: the kernels see the
// range as a grid of its own (pointers and per-bin tables offset to lo).
// io: the whole grid's psi in and out, and where the range's tallies go.
static cudaError_t theta_on_range(cuda_ctx *c, const angular_io &io, int lo, int hi, int fft)
{
    if (fft)
        return angular_fft_apply_range(c->fft, io, lo, hi, c->stream);
    const int64_t bin = c->d.nth * c->d.slice;
    dev_dims dr = c->d;
    dr.ne = hi - lo + 1;
    dr.cells = dr.ne * bin;
    angular_tables_dev tr = c->at;
    tr.kernel_of_energy += lo;
    tr.E += lo;
    angular_io r = io;
    r.in += lo * bin;
    r.out += lo * bin;
    return angular_direct(r, dr, tr, c->threshold, c->stream);
}

// A_theta from `in` to `out` with the chosen method(s).
cudaError_t launch_theta(cuda_ctx *c, const float *in, float *out)
{
    const angular_io io = { in, out, c->stop, c->partials, c->blocks };
    if (c->angular == 2)
        return angular_fft_apply(c->fft, io, c->stream);
    if (c->angular == 1)
        return angular_direct_global(io, c->d, c->at, c->threshold, c->stream);
    if (c->angular == 0)
        return angular_direct(io, c->d, c->at, c->threshold, c->stream);
    for (int r = 0; r < c->n_runs; r++) {
        angular_io run = io;
        run.partials = c->partials + (int64_t)(r + 1) * TF_COUNT * c->blocks;
        cudaError_t e = theta_on_range(c, run, c->run_lo[r], c->run_hi[r], c->run_fft[r]);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

// Times theta with one method on energy bins lo..hi of the current data (into
// psi_b, partials into the scratch slot at the end of the buffer).
static float time_angular(cuda_ctx *c, int fft, int lo, int hi, smx_error *err)
{
    cudaEvent_t t0, t1;
    if (cudaEventCreate(&t0) != cudaSuccess || cudaEventCreate(&t1) != cudaSuccess)
        return -1.0f;
    double *part = c->partials + (int64_t)MAX_RUNS * TF_COUNT * c->blocks;
    float best = 1e30f;
    for (int rep = 0; rep < 4; rep++) {
        cudaEventRecord(t0, c->stream);
        const angular_io io = { c->psi_a, c->psi_b, c->stop, part, c->blocks };
        cudaError_t e = theta_on_range(c, io, lo, hi, fft);
        cudaEventRecord(t1, c->stream);
        if (e != cudaSuccess || cudaEventSynchronize(t1) != cudaSuccess) {
            smx_fail(err, SMX_EXIT_RUNTIME, "angular microbenchmark failed: %s",
                     cudaGetErrorString(e));
            best = -1.0f;
            break;
        }
        float ms = 0.0f;
        cudaEventElapsedTime(&ms, t0, t1);
        if (rep > 0 && ms < best) // the first run is warm-up
            best = ms;
    }
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return best;
}

// Energy bins are grouped into sigma buckets (sigma/dtheta within a factor 2:
// floor(log2)), each run of one bucket is timed with both methods on the
// initial state and its choice locked.
// A kernel is fixed per energy bin for the whole run, so sigma never changes
// under a bin and no re-check is needed later.
static int choose_angular_per_bucket(cuda_ctx *c, smx_error *err)
{
    const angle_kernels *ak = &c->s->ak;
    const int ne = (int)c->d.ne;
    int lo[MAX_RUNS], hi[MAX_RUNS], bucket[MAX_RUNS], n = 0;
    for (int ie = 0; ie < ne; ie++) {
        double sg = ak->sigma_bins[ak->kernel_of_energy[ie]];
        int b = sg > 0.0 ? (int)floor(log2(sg)) : -1000; // -1000: no scattering
        if (c->opt.cuda.force_fft_from > 0) // test hook: two runs, split where the test says
            b = ie >= c->opt.cuda.force_fft_from ? 1 : 0;
        if (n > 0 && bucket[n - 1] == b) {
            hi[n - 1] = ie;
            continue;
        }
        if (n == MAX_RUNS)
            return 1; // too fragmented: the caller keeps one method for all
        lo[n] = hi[n] = ie;
        bucket[n++] = b;
    }
    char *w = c->angular_why;
    size_t room = sizeof c->angular_why;
    int used = snprintf(w, room, "per-bucket");
    int any_fft = 0, any_direct = 0;
    c->n_runs = 0;
    for (int r = 0; r < n; r++) {
        float td = time_angular(c, 0, lo[r], hi[r], err),
              tf = time_angular(c, 1, lo[r], hi[r], err);
        if (td < 0 || tf < 0)
            return -1;
        int fft = c->opt.cuda.force_fft_from > 0 ? bucket[r] == 1 : tf < td;
        any_fft |= fft;
        any_direct |= !fft;
        // Neighbouring runs with the same choice share one launch.
        if (c->n_runs > 0 && c->run_fft[c->n_runs - 1] == fft) {
            c->run_hi[c->n_runs - 1] = hi[r];
        } else {
            c->run_lo[c->n_runs] = lo[r];
            c->run_hi[c->n_runs] = hi[r];
            c->run_fft[c->n_runs++] = fft;
        }
        if (used < (int)room)
            used += snprintf(w + used, room - used, " [bins %d-%d: %s, %.3f/%.3f ms]", lo[r], hi[r],
                             fft ? "fft" : "direct", td, tf);
    }
    if (!any_fft)
        c->angular = 0;
    else if (!any_direct)
        c->angular = 2;
    else {
        c->angular = 3;
        c->slots = 1 + c->n_runs;
    }
    return 0;
}

// Angular method: a start-up microbenchmark on the initial state when both
// are possible and the plan leaves it open, per sigma bucket where the bins
// form at most MAX_RUNS runs, else one method for all bins.
int cuda_choose_angular(cuda_ctx *c, smx_error *err)
{
    const size_t bytes = (size_t)c->d.cells * sizeof(float);
    if (c->fft && (c->set.variant_angular == VAR_A_AUTO || c->opt.cuda.force_fft_from > 0)) {
        int rc = choose_angular_per_bucket(c, err);
        if (rc < 0)
            return err->code ? err->code : SMX_EXIT_RUNTIME;
        if (rc > 0) { // too many buckets: one method for all bins
            float td = time_angular(c, 0, 0, (int)c->d.ne - 1, err);
            float tf = time_angular(c, 1, 0, (int)c->d.ne - 1, err);
            if (td < 0 || tf < 0)
                return err->code ? err->code : SMX_EXIT_RUNTIME;
            c->angular = tf < td ? 2 : 0;
            snprintf(c->angular_why, sizeof c->angular_why,
                     "%s (benchmark: direct %.3f ms, fft %.3f ms)",
                     c->angular == 2 ? "fft" : "direct", td, tf);
        }
        CUDA_CHECK_ERR(err, cudaMemsetAsync(c->psi_b, 0, bytes, c->stream));
    } else if (c->fft) {
        c->angular = 2;
        snprintf(c->angular_why, sizeof c->angular_why, "fft (plan)");
    }
    return 0;
}
