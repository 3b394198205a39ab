/* The order in which a cell's weight is summed over its directions for the
 * spectral tallies (physics/spectral_tally.h), the same on every backend so
 * that they agree bit for bit: the directions in chunks of
 * smx_direction_chunk(nth) consecutive ones, each chunk summed in double by
 * a pairwise tree (smx_chunk_tree; directions past the last count as 0),
 * then the chunks' sums added in ascending order, from the first. The chunk
 * is what one thread of the CUDA step kernel holds in registers
 * (cuda/fused_layout.cuh, fused_m), so that the kernel takes the sums inside
 * its one pass over psi: each thread sums its own directions (a tree: three
 * dependent adds, not eight, before the bin's barrier) and the warps that
 * keep a plane add the chunks. */
#ifndef SMX_DIRECTION_CHUNKS_H
#define SMX_DIRECTION_CHUNKS_H

#include <stdint.h>

#ifdef __CUDACC__
#define SMX_CHUNK_FN __host__ __device__ static inline
#else
#define SMX_CHUNK_FN static inline
#endif

/* The largest chunk. */
#define SMX_DIRECTION_CHUNK_MAX 8

/* Directions per chunk: 4 for up to 16 directions, else 8. */
SMX_CHUNK_FN int smx_direction_chunk(int64_t nth)
{
    return nth <= 16 ? 4 : 8;
}

/* The pairwise tree over t[0 .. chunk) (chunk 4 or 8): pairs at distance
 * 1, then 2, then 4; returns the sum, t unchanged. Written out, so that a
 * loop over cells keeps t in registers (a compiler need not unroll loops
 * that write t: the CPU's loops over cells kept them in memory). */
SMX_CHUNK_FN double smx_chunk_tree4(const double *t)
{
    return (t[0] + t[1]) + (t[2] + t[3]);
}

SMX_CHUNK_FN double smx_chunk_tree8(const double *t)
{
    return smx_chunk_tree4(t) + smx_chunk_tree4(t + 4);
}

/* The tree of a chunk of smx_direction_chunk's size, 4 or 8. */
SMX_CHUNK_FN double smx_chunk_tree(const double *t, int chunk)
{
    return chunk == 4 ? smx_chunk_tree4(t) : smx_chunk_tree8(t);
}

#endif
