/* The order in which a cell column's deposited energy is summed in one step,
 * shared by every backend so that their dose agrees bit for bit.
 *
 * The directions of a column are cut into chunks of SMX_DEPOSIT_CHUNK(nth)
 * consecutive bins (4 up to 16 directions, 8 up to 64, then 8 per 64: at most
 * eight chunks). Per
 * chunk q, over the energy bins in ascending order: w = sum of the chunk's psi
 * in double (theta ascending, from 0.0), then p_q += deposit_per_weight(bin) * w.
 * At the end of the step the column's dose becomes ((dose + p_0) + p_1) + ...
 * in chunk order.
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

#endif
