#include "source_upload.cuh"

// One warp a piece, a lane a column: the stores of a piece are one row's 32
// consecutive floats.
__global__ void source_scatter_kernel(float *psi, dev_dims d, source_pieces_dev p)
{
    const int lane = threadIdx.x % SOURCE_PIECE_COLS;
    const int64_t warps = (int64_t)gridDim.x * (blockDim.x / SOURCE_PIECE_COLS);
    for (int64_t i = (int64_t)blockIdx.x * (blockDim.x / SOURCE_PIECE_COLS) +
                     threadIdx.x / SOURCE_PIECE_COLS;
         i < p.n; i += warps) {
        const int4 a = p.at[i];
        const int64_t x = (int64_t)a.w * SOURCE_PIECE_COLS + lane;
        if (x < d.nx)
            psi[dev_index(d, a.x, a.y, a.z, x)] = p.vals[i * SOURCE_PIECE_COLS + lane];
    }
}

cudaError_t source_scatter(float *psi, dev_dims d, source_pieces_dev p, cudaStream_t s)
{
    if (p.n == 0)
        return cudaSuccess;
    const int per_block = SMX_THREADS / SOURCE_PIECE_COLS;
    const int64_t want = (p.n + per_block - 1) / per_block;
    const int blocks = (int)(want < 4096 ? want : 4096);
    source_scatter_kernel<<<blocks, SMX_THREADS, 0, s>>>(psi, d, p);
    return cudaGetLastError();
}
