#include "fused.cuh"

#include <climits>

#include "conv_rows.cuh"
#include "deposit_order.h"

// A block is 32 columns (consecutive x: coalesced loads and stores) times G = 4
// threads per column. Thread g of a column owns the M = NMAX / 4 consecutive
// directions j0 = g * M .. j0 + M - 1, so it convolves them from a register
// window (conv_rows: one shared load per kernel tap for M outputs) and sums
// their deposit itself: the four partial deposits of a column meet once per
// step, in the order of src/deposit_order.h (chunk = M). The bin being
// processed is staged in shared memory, double-buffered, so each bin costs one
// barrier, which is also the block's vote on whether the bin holds weight.
#define FUSED_COLS 32
// Threads per column: four. (Two, with 16 directions each, shares the per-bin
// work among more cells but needs ~210 registers: measured slower on the H100,
// 1.62 ms against 1.32 ms for the dense Production step.) Must match
// SMX_DEPOSIT_CHUNK (static_assert below).
#define FUSED_G 4
#define FUSED_THREADS (FUSED_COLS * FUSED_G)
#define FUSED_WARPS (FUSED_THREADS / 32)
// Blocks per SM the register budget must allow (latency hiding: each block
// keeps one bin of loads in flight per thread): 4 fit without spilling up to
// 32 directions; wider tiles need the registers.
#define FUSED_MIN_BLOCKS(nmax) ((nmax) <= 32 ? 4 : 2)

namespace {

constexpr unsigned FULL = 0xffffffffu;

struct fused_args {
    float *psi0, *psi1; // single pass: in = psi[n & 1], out = the other; else in psi0, out psi1
    const int64_t *step;
    double *dose;
    dev_dims d;
    angular_tables_dev at;
    energy_tables_dev et;
    stream_tables_dev st;
    float threshold;
    const box4 *box_a;
    box4 *box_next;
    const active_regions *reg;
    const int *stop;
    double *partials;
    int blocks;
};

// Per column of a tile, the facts about this thread's directions that do not
// change from bin to bin: which targets lie in the domain, which own cells no
// visited column reaches, and the extent of the in-domain targets.
struct column_moves {
    unsigned in_domain, own_zero;
    int zlo, zhi, xlo, xhi;
};

// EXACT: nth == NMAX, so every thread's M directions exist (no guards).
template <int NMAX, bool STREAM, bool EXACT>
__global__ void __launch_bounds__(FUSED_THREADS, FUSED_MIN_BLOCKS(NMAX)) fused_kernel(fused_args A)
{
    constexpr int M = NMAX / FUSED_G; // directions per thread = SMX_DEPOSIT_CHUNK(nth)
    __shared__ float s_in[2][NMAX][FUSED_COLS];
    __shared__ int s_move[2][NMAX]; // this step's whole-cell move (z, x) of each direction
    __shared__ int s_toff[NMAX];    // j * slice + move offset: target of direction j from a cell
    __shared__ double s_part[FUSED_G][FUSED_COLS];
    extern __shared__ int sbox[]; // single pass: [ne][4] this block's non-zero output extent
    if (*A.stop)
        return;
    const dev_dims d = A.d;
    const energy_tables_dev &et = A.et;
    const angular_tables_dev &at = A.at;
    const int nth = EXACT ? NMAX : (int)d.nth, ne = (int)d.ne, nx = (int)d.nx, nz = (int)d.nz;
    const int slice = (int)d.slice; // nth * slice < 2^31: fused_step_supported
    const int64_t n = STREAM ? *A.step : 0;
    const float *in = (STREAM && (n & 1)) ? A.psi1 : A.psi0;
    float *out = (STREAM && (n & 1)) ? A.psi0 : A.psi1;
    for (int j = threadIdx.x; j < nth; j += blockDim.x) {
        const int mz = STREAM ? (int)stream_shift_of(A.st.sz[j], n) : 0;
        const int mx = STREAM ? (int)stream_shift_of(A.st.sx[j], n) : 0;
        s_move[0][j] = mz;
        s_move[1][j] = mx;
        s_toff[j] = j * slice + mz * nx + mx;
    }
    if (STREAM)
        for (int k = threadIdx.x; k < ne; k += blockDim.x) {
            sbox[4 * k + 0] = INT_MAX;
            sbox[4 * k + 1] = -1;
            sbox[4 * k + 2] = INT_MAX;
            sbox[4 * k + 3] = -1;
        }
    __syncthreads();

    const int col = threadIdx.x % FUSED_COLS, g = threadIdx.x / FUSED_COLS;
    const int j0 = g * M; // this thread's directions j0 .. j0 + M - 1 (those < nth)
    const bool any_dir = EXACT || j0 < nth;
    auto dir_ok = [&](int m) { return EXACT || j0 + m < nth; };
    const int64_t estride = (int64_t)nth * slice;
    double tb = 0.0, tc = 0.0, eb = 0.0, ec = 0.0, dep_sum = 0.0, w_stop = 0.0, e_stop = 0.0;
    double lw = 0.0, le = 0.0, wout = 0.0, eout = 0.0;

    // Columns to visit: where the input has weight, plus where the output
    // buffer still holds values (they must become zeros).
    const active_regions *reg = A.reg;
    const box4 F = box_join(reg->occupied, reg->written);
    const int64_t fw = box_is_empty(F) ? 0 : F.x1 - F.x0 + 1;
    const int64_t ncols = box_is_empty(F) ? 0 : (int64_t)(F.z1 - F.z0 + 1) * fw;
    const int src_lo = reg->src_lo, src_hi = reg->src_hi;
    // Target bins to write: those receiving weight now and those the output
    // buffer still holds; every other bin of it is zero.
    const int wlo = min(reg->tgt_lo, reg->wtgt_lo), whi = max(reg->tgt_hi, reg->wtgt_hi);
    // Directions whose theta boundary tally can be non-zero (window mode: the
    // kernel reaches past an edge only within half_width of it).
    const int edge_k = at.circular ? -1 : at.max_half_width;
    const bool edge_thread = edge_k >= 0 && (j0 < edge_k || j0 + M > nth - edge_k);

    for (int64_t base = (int64_t)blockIdx.x * FUSED_COLS; base < ncols;
         base += (int64_t)gridDim.x * FUSED_COLS) {
        const int64_t k = base + col;
        const bool live = k < ncols;
        const int cz = live ? F.z0 + (int)(k / fw) : 0, cx = live ? F.x0 + (int)(k % fw) : 0;
        const int64_t c = (int64_t)cz * nx + cx;
        const float *pin = in + c + (int64_t)j0 * slice;

        // Single pass: direction j of this column lands on (cz, cx) + move[j].
        // Cells of `out` whose source (cell - move) lies outside F (or the
        // domain) receive from no visited column: their own column clears them.
        column_moves cm{0u, 0u, INT_MAX, -1, INT_MAX, -1};
        if (live)
#pragma unroll
            for (int m = 0; m < M; m++) {
                if (!dir_ok(m))
                    continue;
                const int tz = cz + s_move[0][j0 + m], tx = cx + s_move[1][j0 + m];
                if (tz >= 0 && tz < nz && tx >= 0 && tx < nx) {
                    cm.in_domain |= 1u << m;
                    cm.zlo = min(cm.zlo, tz), cm.zhi = max(cm.zhi, tz);
                    cm.xlo = min(cm.xlo, tx), cm.xhi = max(cm.xhi, tx);
                }
                const int sz = cz - s_move[0][j0 + m], sx = cx - s_move[1][j0 + m];
                if (sz < F.z0 || sz > F.z1 || sx < F.x0 || sx > F.x1)
                    cm.own_zero |= 1u << m;
            }
        if (!STREAM)
            cm.own_zero = 0u; // moves are zero: every cell is its own target

        // Writes target bin T of this column: v (or zeros), moved when
        // streaming, with the leak, the output sums and the extent measured.
        // Called by every thread of the block for the same T.
        auto emit = [&](int64_t T, const float(&v)[M], bool zero) {
            float *pt = out + T * estride + c;
            unsigned nzm = 0u;
            if (live) {
                double kept = 0.0;
#pragma unroll
                for (int m = 0; m < M; m++) {
                    if (!dir_ok(m) || !(cm.in_domain & (1u << m)))
                        continue;
                    const float val = zero ? 0.0f : v[m];
                    pt[s_toff[j0 + m]] = val;
                    if (STREAM && val != 0.0f) {
                        nzm |= 1u << m;
                        kept += val;
                    }
                }
                if (STREAM && cm.own_zero)
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (cm.own_zero & (1u << m))
                            pt[(int64_t)(j0 + m) * slice] = 0.0f;
                if (STREAM && !zero) {
                    double leaked = 0.0;
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (dir_ok(m) && !(cm.in_domain & (1u << m)))
                            leaked += v[m];
                    if (kept != 0.0 || leaked != 0.0) {
                        const double E = et.E[T];
                        wout += kept;
                        eout += kept * E;
                        lw += leaked;
                        le += leaked * E;
                    }
                }
            }
            if (STREAM && __any_sync(FULL, nzm != 0u)) {
                int zlo = cm.zlo, zhi = cm.zhi, xlo = cm.xlo, xhi = cm.xhi;
                if (nzm != cm.in_domain) { // some directions hold zero: the exact extent
                    zlo = xlo = INT_MAX, zhi = xhi = -1;
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (nzm & (1u << m)) {
                            const int tz = cz + s_move[0][j0 + m], tx = cx + s_move[1][j0 + m];
                            zlo = min(zlo, tz), zhi = max(zhi, tz);
                            xlo = min(xlo, tx), xhi = max(xhi, tx);
                        }
                }
                zlo = __reduce_min_sync(FULL, zlo), zhi = __reduce_max_sync(FULL, zhi);
                xlo = __reduce_min_sync(FULL, xlo), xhi = __reduce_max_sync(FULL, xhi);
                if ((threadIdx.x & 31) == 0) {
                    atomicMin(&sbox[4 * T + 0], zlo);
                    atomicMax(&sbox[4 * T + 1], zhi);
                    atomicMin(&sbox[4 * T + 2], xlo);
                    atomicMax(&sbox[4 * T + 3], xhi);
                }
            }
        };

        float acc0[M], acc1[M];
#pragma unroll
        for (int m = 0; m < M; m++)
            acc0[m] = acc1[m] = 0.0f;
        int64_t T0 = -1;         // target held in acc0 (acc1 holds T0 + 1); block-uniform
        int64_t next_out = wlo; // every target below this is written or known zero
        double dpart = 0.0;      // this thread's deposit partial (deposit_order.h)

        // Software pipelining: bin s + 1 is loaded into registers while bin s is
        // convolved, so its memory latency is hidden.
        float cur[M];
        bool cur_has = false; // this column holds weight in the fetched bin
        auto fetch = [&](int64_t sb) {
            const box4 b = A.box_a[sb];
            cur_has = live && cz >= b.z0 && cz <= b.z1 && cx >= b.x0 && cx <= b.x1;
            const float *p = pin + sb * estride;
#pragma unroll
            for (int m = 0; m < M; m++)
                cur[m] = (cur_has && dir_ok(m)) ? __ldg(p + m * slice) : 0.0f;
        };
        if (src_lo <= src_hi)
            fetch(src_lo);
        int buf = 0;
        for (int64_t s = src_lo; s <= src_hi; s++) {
            const int tg = et.target[s];
            // Target bookkeeping depends on the bin only, so it is uniform.
            if (tg >= 0) {
                if (T0 < 0)
                    T0 = tg;
                while (T0 < tg) { // acc0's target is complete: write it
                    for (int64_t zt = next_out; zt < T0; zt++)
                        emit(zt, acc0, true);
                    emit(T0, acc0, false);
                    next_out = T0 + 1;
#pragma unroll
                    for (int m = 0; m < M; m++) {
                        acc0[m] = acc1[m];
                        acc1[m] = 0.0f;
                    }
                    T0++;
                }
            }
            const bool has = cur_has;
            const int kid = at.kernel_of_energy[s];
            if (has) {
                // Theta tallies: the total in float (it only scales the
                // kernel's truncation, 1 - weight_sum, a ~1e-7 channel).
                float total = 0.0f;
                double dropped = 0.0, bnd = 0.0;
#pragma unroll
                for (int m = 0; m < M; m++) {
                    if (!dir_ok(m))
                        continue;
                    float v = cur[m];
                    if (v < A.threshold) {
                        dropped += v;
                        v = 0.0f;
                    }
                    cur[m] = v;
                    total += v;
                }
                if (edge_thread) {
                    const double *bf = at.boundary_frac + (int64_t)kid * nth + j0;
#pragma unroll
                    for (int m = 0; m < M; m++)
                        if (dir_ok(m))
                            bnd += (double)cur[m] * bf[m];
                }
                const double E = et.E[s];
                const double cut = (double)total * (1.0 - at.weight_sum[kid]) + dropped;
                tb += bnd;
                eb += bnd * E;
                tc += cut;
                ec += cut * E;
            }
            float *row = &s_in[buf][j0][col];
#pragma unroll
            for (int m = 0; m < M; m++)
                if (dir_ok(m))
                    row[m * FUSED_COLS] = cur[m];
            if (s < src_hi)
                fetch(s + 1); // in flight during the convolution below
            // s_in[buf] complete; no column of the tile holding weight in bin s
            // means everything below adds +0.
            if (!__syncthreads_or(has)) {
                buf ^= 1;
                continue;
            }
            float conv[M];
            if (any_dir) {
                const int K = at.half_width[kid];
                const float *w = at.weights + at.offset[kid] + K;
                const float(*sb)[FUSED_COLS] = s_in[buf];
                conv_rows(j0, nth, K, w, at.circular != 0, [&](int src) { return sb[src][col]; }, conv);
            } else {
#pragma unroll
                for (int m = 0; m < M; m++)
                    conv[m] = 0.0f;
            }
            double ws = 0.0;
#pragma unroll
            for (int m = 0; m < M; m++)
                if (dir_ok(m))
                    ws = __dadd_rn(ws, (double)conv[m]);
            dpart = __dadd_rn(dpart, __dmul_rn(et.deposit[s], ws));
            if (tg < 0) {
                w_stop += ws;
                e_stop += ws * et.E[s];
            } else {
                const float clo = et.c_lo[s], chi = et.c_hi[s];
#pragma unroll
                for (int m = 0; m < M; m++)
                    acc0[m] = __fadd_rn(acc0[m], __fmul_rn(clo, conv[m]));
                if (chi != 0.0f)
#pragma unroll
                    for (int m = 0; m < M; m++)
                        acc1[m] = __fadd_rn(acc1[m], __fmul_rn(chi, conv[m]));
            }
            buf ^= 1;
        }
        // Flush the open targets and zero every other target bin in range.
        for (int64_t zt = next_out; zt <= whi; zt++) {
            if (zt == T0)
                emit(zt, acc0, false);
            else if (zt == T0 + 1)
                emit(zt, acc1, false);
            else
                emit(zt, acc0, true);
        }
        // The column's dose: its four partials in chunk order. The DEPOSITED
        // tally is the same sum (per thread, then per block).
        dep_sum += dpart;
        s_part[g][col] = dpart;
        __syncthreads();
        if (g == 0 && live) {
            double dacc = A.dose[c];
            for (int q = 0; q * M < nth; q++)
                dacc = __dadd_rn(dacc, s_part[q][col]);
            A.dose[c] = dacc;
        }
        __syncthreads(); // s_part and s_in are reused by the next tile
    }
    if (STREAM) {
        const double v[11] = {tb, eb, tc, ec, dep_sum, w_stop, e_stop, lw, le, wout, eout};
        const int f[11] = {TF_W_THETA_BOUNDARY, TF_E_THETA_BOUNDARY, TF_W_THETA_CUTOFF, TF_E_THETA_CUTOFF,
                           TF_DEPOSITED, TF_W_ENERGY_STOPPED, TF_E_ENERGY_STOPPED, TF_W_SPATIAL_LEAK,
                           TF_E_SPATIAL_LEAK, TF_W_OUT, TF_E_OUT};
        block_partials_at<sizeof v / sizeof v[0], FUSED_WARPS>(v, f, A.partials, A.blocks);
        __syncthreads(); // every warp's extents are in sbox
        for (int q = threadIdx.x; q < ne; q += blockDim.x) {
            if (sbox[4 * q + 1] < 0)
                continue;
            atomicMin(&A.box_next[q].z0, sbox[4 * q + 0]);
            atomicMax(&A.box_next[q].z1, sbox[4 * q + 1]);
            atomicMin(&A.box_next[q].x0, sbox[4 * q + 2]);
            atomicMax(&A.box_next[q].x1, sbox[4 * q + 3]);
        }
    } else {
        const double v[7] = {tb, eb, tc, ec, dep_sum, w_stop, e_stop};
        const int f[7] = {TF_W_THETA_BOUNDARY, TF_E_THETA_BOUNDARY, TF_W_THETA_CUTOFF, TF_E_THETA_CUTOFF,
                          TF_DEPOSITED, TF_W_ENERGY_STOPPED, TF_E_ENERGY_STOPPED};
        block_partials_at<sizeof v / sizeof v[0], FUSED_WARPS>(v, f, A.partials, A.blocks);
    }
}

template <int NMAX, bool STREAM>
void launch_n(const fused_args &A, size_t smem, cudaStream_t s)
{
    if (A.d.nth == NMAX)
        fused_kernel<NMAX, STREAM, true><<<A.blocks, FUSED_THREADS, smem, s>>>(A);
    else
        fused_kernel<NMAX, STREAM, false><<<A.blocks, FUSED_THREADS, smem, s>>>(A);
}

template <bool STREAM>
cudaError_t launch(const fused_args &A, size_t smem, cudaStream_t s)
{
    if (A.d.nth <= 16)
        launch_n<16, STREAM>(A, smem, s);
    else if (A.d.nth <= 32)
        launch_n<32, STREAM>(A, smem, s);
    else if (A.d.nth <= 48)
        launch_n<48, STREAM>(A, smem, s);
    else if (A.d.nth <= 64)
        launch_n<64, STREAM>(A, smem, s);
    else
        return cudaErrorInvalidValue;
    return cudaGetLastError();
}

} // namespace

static_assert(SMX_DEPOSIT_CHUNK(13) == 16 / FUSED_G && SMX_DEPOSIT_CHUNK(32) == 32 / FUSED_G &&
                  SMX_DEPOSIT_CHUNK(41) == 48 / FUSED_G && SMX_DEPOSIT_CHUNK(64) == 64 / FUSED_G,
              "the dose order of deposit_order.h is one chunk per thread of a column");

int fused_theta_energy_supported(int64_t nth, int64_t slice)
{
    return nth >= 1 && nth <= 64 && nth * slice <= INT_MAX; // offsets within a bin are int
}

int fused_step_supported(int64_t nth, int64_t slice, int64_t ne)
{
    return fused_theta_energy_supported(nth, slice) && ne * 4 * sizeof(int) <= FUSED_STEP_MAX_BOX_SMEM;
}

cudaError_t fused_theta_energy(const float *in, float *out, double *dose, dev_dims d,
                               angular_tables_dev at, energy_tables_dev et, float threshold,
                               const box4 *box_a, const active_regions *reg, const int *stop,
                               double *partials, int blocks, cudaStream_t s)
{
    if (!fused_theta_energy_supported(d.nth, d.slice))
        return cudaErrorInvalidValue;
    fused_args A{const_cast<float *>(in), out, nullptr, dose, d, at, et, stream_tables_dev{},
                 threshold, box_a, nullptr, reg, stop, partials, blocks};
    return launch<false>(A, 0, s);
}

cudaError_t fused_step(float *psi0, float *psi1, const int64_t *step, double *dose, dev_dims d,
                       angular_tables_dev at, energy_tables_dev et, stream_tables_dev st,
                       float threshold, const box4 *box_a, box4 *box_next,
                       const active_regions *reg, const int *stop, double *partials, int blocks,
                       cudaStream_t s)
{
    if (st.scheme != 1 || !fused_step_supported(d.nth, d.slice, d.ne))
        return cudaErrorInvalidValue;
    fused_args A{psi0, psi1, step, dose, d, at, et, st, threshold, box_a, box_next, reg, stop, partials,
                 blocks};
    return launch<true>(A, (size_t)d.ne * 4 * sizeof(int), s);
}
