/* The fused CUDA step's tiling (cuda/tiling.cuh), on the host: for the
 * benchmark grids, edge cases and random boxes, every column lies in exactly
 * one tile, no tile is empty, and the tile count is the rows' whole aligned
 * 32-column blocks plus their leftover columns 32 to a tile. Needs a CUDA
 * build, not a GPU; skipped (77) otherwise. */
#include "check.h"

#include <stddef.h>

#if SMX_HAVE_CUDA
long long cuda_check_tiling(int z0, int z1, int x0, int x1, char *msg, size_t n);

/* The count the tiling should give, from its definition. */
static long long expected_tiles(int z0, int z1, int x0, int x1)
{
    if (z0 > z1 || x0 > x1)
        return 0;
    const long long rows = z1 - z0 + 1, w = x1 - x0 + 1;
    const int xa = (x0 + 31) / 32 * 32, xb = (x1 + 1) / 32 * 32;
    const long long blocks = xb > xa ? (xb - xa) / 32 : 0;
    const long long left = w - 32 * blocks;
    return rows * blocks + (rows * left + 31) / 32;
}

static void check_box(int z0, int z1, int x0, int x1)
{
    char msg[200] = "";
    const long long got = cuda_check_tiling(z0, z1, x0, x1, msg, sizeof msg);
    CHECK_MSG(got >= 0, "box z %d..%d x %d..%d: %s", z0, z1, x0, x1, msg);
    if (got >= 0)
        CHECK_MSG(got == expected_tiles(z0, z1, x0, x1),
                  "box z %d..%d x %d..%d: %lld tiles, expected %lld", z0, z1, x0, x1, got,
                  expected_tiles(z0, z1, x0, x1));
}
#endif

int main(int argc, char **argv)
{
    (void)argc;
#if !SMX_HAVE_CUDA
    printf("%s: built without CUDA, skipped\n", argv[0]);
    return SMX_TEST_SKIP;
#else
    /* The benchmark grids (Production: 2500 tiles, 100 of them leftover; Stress: 10000). */
    check_box(0, 99, 0, 99);
    check_box(0, 399, 0, 199);
    check_box(0, 799, 0, 399);
    CHECK(cuda_check_tiling(0, 399, 0, 199, (char[80]){ 0 }, 80) == 2500);
    CHECK(cuda_check_tiling(0, 799, 0, 399, (char[80]){ 0 }, 80) == 10000);
    /* No whole block; exactly one; one plus leftovers on both sides; a column;
     * a row; the test_gpu grid's 37 columns; an empty box. */
    check_box(5, 9, 31, 32);
    check_box(0, 0, 32, 63);
    check_box(3, 40, 1, 64);
    check_box(0, 63, 17, 17);
    check_box(11, 11, 0, 399);
    check_box(0, 36, 0, 36);
    check_box(4, 3, 0, 10);
    /* Random boxes: offsets and widths of every remainder mod 32, runs of
     * leftover tiles that end mid-row and mid-tile. */
    unsigned long long r = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 3000; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        const int z0 = (int)(r % 50), rows = 1 + (int)((r >> 8) % 70);
        const int x0 = (int)((r >> 16) % 100), w = 1 + (int)((r >> 24) % 300);
        check_box(z0, z0 + rows - 1, x0, x0 + w - 1);
    }
    return check_report(argv[0]);
#endif
}
