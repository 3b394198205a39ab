// The moving window's shift (src/transport/window.h): rows of psi and of the
// dose move `rows` rows towards z = 0, in place. One thread walks one column
// (a plane's x, or the dose's x) in z ascending: it reads row z before it
// writes row z - rows, so no other thread's data is in its way.
#include "window_shift.cuh"

#include "tiling.cuh"

// Blocks a group of columns' move spreads over (shift_psi_groups_kernel): a
// group holds a few tens of bins of 41 directions, 32 columns each.
constexpr int SHIFT_GROUP_BLOCKS = 16;

// One column of a plane (rows z0 .. z1 hold its values, pitch px): rows
// move `rows` towards z = 0, and what the move leaves behind at the far end
// (and rows that left) becomes zero.
__device__ __forceinline__ void move_column(float *col, int64_t px, int z0, int z1, int rows)
{
    const int first = z0 > rows ? z0 : rows; // the first row that stays
    for (int z = first; z <= z1; z++)
        col[(int64_t)(z - rows) * px] = col[(int64_t)z * px];
    const int a = z1 - rows + 1 > 0 ? z1 - rows + 1 : 0;
    for (int z = a; z <= z1; z++)
        col[(int64_t)z * px] = 0.0f;
}

__global__ void shift_psi_kernel(float *psi, dev_dims d, int z0, int z1, int lo, int rows,
                                 int64_t cols)
{
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < cols; c += stride) {
        const int64_t x = c % d.px, plane = c / d.px;
        const int64_t ie = lo + plane / d.nth, j = plane % d.nth;
        float *col = psi + dev_index(d, ie, j, 0, x);
        move_column(col, d.px, z0, z1, rows);
    }
}

// Spots side by side (slots): the same move, one group of columns at a time
// (group_bins.cuh, the input's record at step st->step). Blocks (k, y) take
// group k and only the bins its occupied rows hold: a batch's bin range spans
// every slot's bins, while a slot's columns hold a few tens of them. A bin
// that a group holds in none of those rows is zero there from row 0 to z1
// (rows below z0 lie outside the occupied box), so its move would write
// zeros over zeros.
__global__ void shift_psi_groups_kernel(float *psi, dev_dims d, int z0, int z1, int lo, int hi,
                                        int rows, group_bins_dev gb, const run_state_dev *st)
{
    __shared__ int s_lo, s_hi;
    const int k = blockIdx.x;
    const int2 *gi = group_bins_at(gb, d.nz, st->step, GB_INPUT);
    if (threadIdx.x == 0)
        s_lo = INT_MAX, s_hi = -1;
    __syncthreads();
    int blo = INT_MAX, bhi = -1;
    for (int z = z0 + threadIdx.x; z <= z1; z += blockDim.x) {
        const int2 b = gi[(int64_t)z * gb.ncg + k];
        blo = min(blo, b.x), bhi = max(bhi, b.y);
    }
    if (bhi >= 0)
        atomicMin(&s_lo, blo), atomicMax(&s_hi, bhi);
    __syncthreads();
    const int b0 = max(lo, s_lo), b1 = min(hi, s_hi);
    if (b0 > b1)
        return;
    const int64_t n = (int64_t)(b1 - b0 + 1) * d.nth * GROUP_BINS_COLS;
    const int64_t stride = (int64_t)gridDim.y * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.y * blockDim.x + threadIdx.x; i < n; i += stride) {
        const int64_t x = (int64_t)k * GROUP_BINS_COLS + i % GROUP_BINS_COLS;
        if (x >= d.px)
            continue;
        const int64_t plane = i / GROUP_BINS_COLS;
        const int64_t ie = b0 + plane / d.nth, j = plane % d.nth;
        float *col = psi + dev_index(d, ie, j, 0, x);
        move_column(col, d.px, z0, z1, rows);
    }
}

__global__ void shift_dose_kernel(double *dose, dev_dims d, int rows)
{
    for (int64_t x = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; x < d.px;
         x += (int64_t)gridDim.x * blockDim.x) {
        for (int64_t z = rows; z < d.nz; z++)
            dose[(z - rows) * d.px + x] = dose[z * d.px + x];
        for (int64_t z = d.nz - rows; z < d.nz; z++)
            dose[z * d.px + x] = 0.0;
    }
}

// The boxes follow the rows: per bin, the union of the regions, and each
// slot's (nslots > 1).
__global__ void shift_boxes_kernel(box4 *box_a, int ne, active_regions *reg, box4 *slot_boxes,
                                   int nslots, int rows)
{
    for (int ie = blockIdx.x * blockDim.x + threadIdx.x; ie <= ne + nslots;
         ie += gridDim.x * blockDim.x) {
        if (ie > ne) // what a slot's other buffer held was zeroed with the union's
            slot_boxes[SB_WRITTEN * FUSED_SLOTS + ie - ne - 1] = box_empty4();
        box4 *b = ie < ne ? &box_a[ie] : ie == ne ? &reg->occupied : &slot_boxes[ie - ne - 1];
        if (box_is_empty(*b))
            continue;
        b->z0 = b->z0 - rows < 0 ? 0 : b->z0 - rows;
        b->z1 -= rows;
        if (b->z1 < 0)
            *b = box_empty4();
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        // The other buffer's written rows were zeroed (window_shift_launch):
        // nothing is left there for the next step to clear.
        reg->written = box_empty4();
        reg->wtgt_lo = ne;
        reg->wtgt_hi = -1;
    }
}

// With slots: the slots' tiles after their boxes moved (fused_step's
// slot_pref; the first thread), and the column groups' bins following the
// rows (one thread a group walks its rows upwards, reading each before it is
// overwritten); the other buffer's were zeroed with it. One launch for both.
__global__ void shift_slots_kernel(const box4 *slot_boxes, int *slot_pref, int nslots,
                                   group_bins_dev gb, int nz, const run_state_dev *st, int rows)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        slot_prefix(slot_boxes, nslots, slot_pref);
    const int64_t n = st->step;
    int2 *in = group_bins_at(gb, nz, n, GB_INPUT), *out = group_bins_at(gb, nz, n, GB_OUTPUT);
    for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < gb.ncg; k += gridDim.x * blockDim.x)
        for (int z = 0; z < nz; z++) {
            const int64_t i = (int64_t)z * gb.ncg + k;
            in[i] = z + rows < nz ? in[i + (int64_t)rows * gb.ncg] : group_bins_none();
            out[i] = group_bins_none();
        }
}

cudaError_t window_shift_launch(const window_shift_args &a, int rows, cudaStream_t s)
{
    float *cur = a.cur, *other = a.other;
    double *dose = a.dose;
    const active_regions &rg = a.rg;
    const dev_dims d = a.d;
    const int planes = a.planes, ncomp = a.ncomp;
    int nslots = a.nslots;
    cudaError_t e = cudaSuccess;
    for (int k = 0; k < ncomp; k++) {
        // The other buffer holds only stale values (the step overwrites or
        // clears them, by its written region): cleared here instead.
        const bin_rows written = { rg.written.z0, rg.written.z1, rg.wtgt_lo > 0 ? rg.wtgt_lo : 0,
                                   rg.wtgt_hi < d.ne - 1 ? rg.wtgt_hi : (int)d.ne - 1 };
        e = clear_rows_launch(other + k * d.cells, d, written, s);
        if (e != cudaSuccess)
            return e;
        if (!box_is_empty(rg.occupied) && rg.src_hi >= rg.src_lo) {
            const int64_t cols = (int64_t)(rg.src_hi - rg.src_lo + 1) * d.nth * d.px;
            const int blocks = (int)((cols + SMX_THREADS - 1) / SMX_THREADS < 65536
                                         ? (cols + SMX_THREADS - 1) / SMX_THREADS
                                         : 65536);
            if (a.groups_kept) // implies slots and their group bins
                shift_psi_groups_kernel<<<dim3(a.gbins.ncg, SHIFT_GROUP_BLOCKS), SMX_THREADS, 0,
                                          s>>>(cur + k * d.cells, d, rg.occupied.z0, rg.occupied.z1,
                                               rg.src_lo, rg.src_hi, rows, a.gbins, a.st);
            else
                shift_psi_kernel<<<blocks, SMX_THREADS, 0, s>>>(
                    cur + k * d.cells, d, rg.occupied.z0, rg.occupied.z1, rg.src_lo, rows, cols);
            if ((e = cudaGetLastError()) != cudaSuccess)
                return e;
        }
    }
    for (int q = 0; q < planes; q++) { // the dose, then the released energy's planes
        shift_dose_kernel<<<(int)((d.px + 127) / 128), 128, 0, s>>>(dose + q * d.slice, d, rows);
        if ((e = cudaGetLastError()) != cudaSuccess)
            return e;
    }
    if (nslots < 2)
        nslots = 0;
    shift_boxes_kernel<<<(int)((d.ne + 1 + nslots + 127) / 128), 128, 0, s>>>(
        a.box_a, (int)d.ne, a.reg, a.slot_boxes, nslots, rows);
    if (nslots > 1 && (e = cudaGetLastError()) == cudaSuccess)
        shift_slots_kernel<<<(a.gbins.ncg + 127) / 128, 128, 0, s>>>(
            a.slot_boxes, a.slot_pref, nslots, a.gbins, (int)d.nz, a.st, rows);
    return cudaGetLastError();
}
