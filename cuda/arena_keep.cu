// The arena kept between states (arena_keep.cuh).
#include "arena_keep.cuh"

#include <mutex>

namespace {

std::mutex keep_lock;
arena_block kept{ nullptr, 0 };
int kept_device = -1;

int current_device()
{
    int d = -1;
    return cudaGetDevice(&d) == cudaSuccess ? d : -1;
}

} // namespace

cudaError_t arena_take(size_t need, size_t room, arena_block *out)
{
    std::lock_guard<std::mutex> hold(keep_lock);
    *out = arena_block{ nullptr, 0 };
    if (kept.p && kept.bytes >= need && kept_device == current_device()) {
        *out = kept;
        kept = arena_block{ nullptr, 0 };
        return cudaSuccess;
    }
    // A state larger than the kept one: the states are growing (a per-spot
    // run's later classes hold more spots), so the new arena takes some room
    // for the next, where the device has it (or the kept one is another
    // device's, which the room then spares nothing).
    const bool growing = kept.p != nullptr;
    if (kept.p) {
        cudaFree(kept.p); // an error here is the next call's to report
        kept = arena_block{ nullptr, 0 };
    }
    cudaError_t e = cudaErrorMemoryAllocation;
    if (growing && room > need) {
        e = cudaMalloc(&out->p, room);
        if (e == cudaSuccess) {
            out->bytes = room;
            return e;
        }
        cudaGetLastError(); // not sticky: try the exact size
    }
    e = cudaMalloc(&out->p, need);
    if (e != cudaSuccess) {
        cudaGetLastError();
        out->p = nullptr;
        return e;
    }
    out->bytes = need;
    return e;
}

void arena_keep(arena_block b)
{
    std::lock_guard<std::mutex> hold(keep_lock);
    if (kept.p && kept.bytes >= b.bytes) {
        cudaFree(b.p);
        return;
    }
    if (kept.p)
        cudaFree(kept.p);
    kept = b;
    kept_device = current_device();
}

size_t arena_kept_bytes()
{
    std::lock_guard<std::mutex> hold(keep_lock);
    return kept.p && kept_device == current_device() ? kept.bytes : 0;
}
