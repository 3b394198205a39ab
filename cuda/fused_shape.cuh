// The fused kernels' block shape (fused.cuh): blocks per cluster, bins per
// cluster barrier, tiles per block. Both the kernels (fused.cuh) and the
// tiles' order (tiling.cuh) are built on it, so it sits below both.
#ifndef SMX_CUDA_FUSED_SHAPE_CUH
#define SMX_CUDA_FUSED_SHAPE_CUH

// Blocks per thread-block cluster of the unsplit instance (where the device
// launches clusters, sm_90 on): adjacent tiles, kept within FUSED_PACE energy
// bins of each other (cluster_arrive / cluster_wait), so that the two halves of
// each 32-byte sector that a sideways move makes them share are stored at
// about the same time (a sector stored by halves far apart is written
// twice). Clusters of 4 would keep more blocks waiting on the slowest.
#define FUSED_CLUSTER 2

// Bins per round of the cluster barrier. Each round costs every warp a wait
// for the cluster's slowest; two bins a round halve those waits and still
// keep the shared sectors' halves close.
#define FUSED_PACE 2

// Tiles per block of the unsplit instance (one where the grid's per-bin tables
// leave no room for FUSED_SUB stage rings): FUSED_SUB groups of warps, each on
// its own tile with its own (named) barrier, the tiles adjacent, so that a
// cluster's blocks cover FUSED_CLUSTER * FUSED_SUB adjacent tiles kept within
// a bin of each other without a barrier wider than one tile (four adjacent
// tiles then load and store together, as one 128-column block would).
#define FUSED_SUB 2

// Fewest source bins per group of the energy split (fused.cuh): more leave a
// pencil's few tiles fewer groups than there are blocks to take them; fewer
// add little.
#define FUSED_SPLIT_MIN_BINS 3

#endif
