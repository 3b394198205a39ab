// The arena of a released state, kept for the process's next state. A
// per-spot run makes a state per class of energy bins (and per scenario),
// each a device arena of tens of GB: on an H200, cudaMalloc of 60-90 GB just
// after cudaFree of as much took 0.22-0.29 s, and the free 0.04-0.05 s, most
// of the 0.62-0.74 s that the benchmark field's four states took. A state
// takes the kept arena where it is large enough; where not, the kept one is
// freed first and the new one is made with room for a somewhat larger next
// state. Only one state lives at a time on these runs, so the kept arena
// holds memory only between a state's release and the next one's setup.
#ifndef SMX_CUDA_ARENA_KEEP_CUH
#define SMX_CUDA_ARENA_KEEP_CUH

#include <cstddef>

#include <cuda_runtime.h>

// An arena: its base and the bytes allocated (at least what its state needs).
struct arena_block {
    char *p;
    size_t bytes;
};

// Kept arenas belong to the device current when they were kept: arena_take
// on another device frees the kept one instead of handing it out.

// An arena of at least `need` bytes: the kept one if it holds that many,
// else a new one (the kept one freed first) of up to `room` bytes where the
// device has them, else exactly `need`. cudaErrorMemoryAllocation where
// `need` does not fit; the error is cleared (not sticky).
cudaError_t arena_take(size_t need, size_t room, arena_block *out);

// Keeps `b` for the next arena_take (freeing the arena kept before, if any).
void arena_keep(arena_block b);

// The bytes the kept arena holds (0 if none): memory a new state can have.
size_t arena_kept_bytes();

#endif
