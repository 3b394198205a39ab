// A source's upload in pieces (cuda_upload): the host packs each row piece of
// 32 columns that holds a value, and one kernel puts the pieces into psi, so
// that a batch of spots side by side crosses the bus as the values it holds,
// not as whole rows of the state's width.
#ifndef SMX_CUDA_SOURCE_UPLOAD_CUH
#define SMX_CUDA_SOURCE_UPLOAD_CUH

#include "common.cuh"

// Columns of a piece: one warp's.
#define SOURCE_PIECE_COLS 32

// Piece i: its bin, direction, row and group of columns (at[i]: x = ie, y = j,
// z = z, w = group, its columns w * 32 .. w * 32 + 31) and its 32 values
// (vals[i * 32 ..], zeros past nx).
struct source_pieces_dev {
    const int4 *at;
    const float *vals;
    int64_t n;
};

// psi (zero where no piece lands) takes the pieces, on stream s.
cudaError_t source_scatter(float *psi, dev_dims d, source_pieces_dev p, cudaStream_t s);

#endif
