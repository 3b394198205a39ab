/* The order in which a cell column's deposited energy is summed in one step,
 * shared by every backend so that their dose agrees bit for bit.
 *
 * The directions of a column are cut into chunks of SMX_DEPOSIT_CHUNK(nth)
 * consecutive bins (at most four chunks). Per chunk q, over the energy bins in
 * ascending order: w = sum of the chunk's psi in double (theta ascending, from
 * 0.0), then p_q += deposit_per_weight(bin) * w. At the end of the step the
 * column's dose becomes ((dose + p_0) + p_1) + ... in chunk order.
 *
 * Why chunks: the fused CUDA kernel gives each column four threads, each owning
 * one chunk of directions; a single running sum over all directions would
 * serialise them once per energy bin. The chunk length is a multiple of 4 so
 * that the kernel's per-thread register arrays have a compile-time size. */
#ifndef SMX_DEPOSIT_ORDER_H
#define SMX_DEPOSIT_ORDER_H

#define SMX_DEPOSIT_CHUNK(nth) (4 * (((nth) + 15) / 16))

#endif
