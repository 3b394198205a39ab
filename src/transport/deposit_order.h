/* The order in which a cell column's deposited energy is summed in one step,
 * shared by every backend so that their dose agrees bit for bit.
 *
 * The directions of a column are cut into chunks of SMX_DEPOSIT_CHUNK(nth)
 * consecutive bins (4 up to 16 directions, 8 up to 64, then 8 per 64: at most
 * eight chunks). Per chunk q, over the energy bins in ascending order:
 * w = the chunk's psi summed in float by a pairwise tree (smx_chunk_sum:
 * ((v0 + v1) + (v2 + v3)) + ... over the chunk padded with +0.0f to a power
 * of two), then p_q += deposit_per_weight(bin) * (double)w in double.
 * At the end of the step the column's dose becomes ((dose + p_0) + p_1) + ...
 * in chunk order.
 *
 * Why float: psi >= 0, so a tree of depth d rounds w by at most d ulp
 * relative (1.8e-7 for chunks of 8), far inside the 1e-6 energy balance, while
 * a double sum costs the fused kernel eight conversions and seven double
 * additions per thread and bin (0.7 % of the dense Stress step on an H100; see
 * docs/bench/history.md). Padding with +0.0f changes no sum (x + 0 == x for
 * x >= +0), so any power of two >= the chunk gives the same w.
 *
 * Why chunks: the fused CUDA kernel gives each column one thread per chunk of
 * directions (4, 4, 6 or 8 threads for up to 16, 32, 48 or 64 directions); a
 * single running sum over all directions would serialise them once per energy
 * bin. The chunk length is fixed so that the kernel's per-thread register
 * arrays have a compile-time size. */
#ifndef SMX_DEPOSIT_ORDER_H
#define SMX_DEPOSIT_ORDER_H

#define SMX_DEPOSIT_CHUNK(nth) ((nth) <= 16 ? 4 : 8 * (((nth) + 63) / 64))
/* Most chunks a column can have (the chunk grows past 64 directions, where no
 * fused kernel runs, so that the count stays bounded). */
#define SMX_DEPOSIT_MAX_CHUNKS 8

#ifdef __CUDACC__
#define SMX_DEPOSIT_HD __host__ __device__
#else
#define SMX_DEPOSIT_HD
#endif

/* Leaves of a chunk's tree: the chunk rounded up to a power of two. */
static inline SMX_DEPOSIT_HD int smx_chunk_leaves(int chunk)
{
    int p = 1;
    while (p < chunk)
        p *= 2;
    return p;
}

/* Rows a tree of that many leaves keeps at once when built leaf by leaf
 * (smx_chunk_sum's stack): log2(leaves) + 1. */
static inline SMX_DEPOSIT_HD int smx_chunk_stack_rows(int chunk)
{
    int r = 1;
    for (int p = smx_chunk_leaves(chunk); p > 1; p /= 2)
        r++;
    return r;
}

/* The tree sum of v[0], v[stride], ..., v[(n - 1) stride] (n <= chunk),
 * leaf by leaf: leaf i joins the stack, then its completed subtrees merge
 * (one merge per trailing one bit of i), left operand the lower leaves. */
static inline SMX_DEPOSIT_HD float smx_chunk_sum(const float *v, long long stride, int n, int chunk)
{
    float stack[32];
    int top = 0;
    const int leaves = smx_chunk_leaves(chunk);
    for (int i = 0; i < leaves; i++) {
        float x = i < n ? v[(long long)i * stride] : 0.0f;
        for (int k = i; k & 1; k >>= 1)
            x = stack[--top] + x;
        stack[top++] = x;
    }
    return stack[0];
}

#endif
