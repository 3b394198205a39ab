/* What an MPI job's division of a field rests on, tested in every build:
 *  - par_spot_block: the blocks of 1..12 ranks cover 0..n-1 once, in rank
 *    order, contiguous, their sizes differ by at most one, rank 0's the smallest;
 *  - simulate_part: a block of per-spot rows run without the total (as ranks
 *    1.. run it) is bit for bit the same rows of the whole run, and the total
 *    run with an empty block is bit for bit the whole run's total. The MPI
 *    job itself (gather, failures) is tests/mpi.sh. */
#include <stdint.h>

#include "check.h"
#include "parallel/parallel.h"
#include "sim_fixture.h"

static void check_blocks(void)
{
    for (int size = 1; size <= 12; size++) {
        for (int n = 0; n <= 40; n++) {
            int next = 0, smallest = n + 1, largest = -1, c0 = 0;
            for (int r = 0; r < size; r++) {
                int first = -1, count = -1;
                par_spot_block(n, r, size, &first, &count);
                CHECK_MSG(first == next && count >= 0, "n %d size %d rank %d: [%d, +%d), expected first %d", n,
                          size, r, first, count, next);
                next = first + count;
                smallest = count < smallest ? count : smallest;
                largest = count > largest ? count : largest;
                if (r == 0)
                    c0 = count;
            }
            CHECK_MSG(next == n, "n %d size %d: the blocks end at %d", n, size, next);
            CHECK_MSG(largest - smallest <= 1 && c0 == smallest, "n %d size %d: sizes %d..%d, rank 0 %d", n, size,
                      smallest, largest, c0);
        }
    }
    int first = -1, count = -1;
    par_spot_block(5, 3, 3, &first, &count);
    CHECK(first == 0 && count == 0); /* no such rank: nothing */
}

static int same_row(const spot_dose *a, int ra, const spot_dose *b, int rb)
{
    int64_t na = a->indptr[ra + 1] - a->indptr[ra], nb = b->indptr[rb + 1] - b->indptr[rb];
    return na == nb &&
           memcmp(a->indices + a->indptr[ra], b->indices + b->indptr[rb], (size_t)na * sizeof *a->indices) == 0 &&
           memcmp(a->values + a->indptr[ra], b->values + b->indptr[rb], (size_t)na * sizeof *a->values) == 0 &&
           memcmp(&a->dropped[ra], &b->dropped[rb], sizeof a->dropped[ra]) == 0 &&
           memcmp(&a->weight[ra], &b->weight[rb], sizeof a->weight[ra]) == 0;
}

static void check_parts(void)
{
    char spots[] = "/tmp/smx-parallel-XXXXXX";
    int fd = mkstemp(spots);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fprintf(f, "energy_MeV, x_mm, weight\n40, -3, 1\n30, 0, 2\n35, 2, 1\n38, 4, 0.5\n");
    fclose(f);
    char set_spots[96];
    snprintf(set_spots, sizeof set_spots, "beam.spots_file=%s", spots);
    const char *sets[] = {set_spots, "output.per_spot_dose=true", "grid.space.nx=31", "grid.space.nz=40",
                          "grid.energy.E_max_MeV=40", "grid.angle.n_bins=15"};
    const int nsets = sizeof sets / sizeof sets[0];
    fixture whole;
    int rc = fixture_run(&whole, NULL, sets, nsets);
    CHECK(rc == 0);
    const spot_dose *w = &whole.r.per_spot;
    CHECK(rc || w->n_spots == 4);
    for (int first = 0; !rc && first < 4; first++) {
        for (int count = 0; first + count <= 4; count++) {
            for (int total = 0; total < 2; total++) {
                if (!total && count == 0)
                    continue;
                fixture part;
                if (fixture_load(&part, NULL, sets, nsets) != 0) {
                    CHECK(0);
                    return;
                }
                const sim_part sp = {total, first, count};
                CHECK(simulate_part(&part.p, &part.g, &part.t, NULL, &backend_cpu, NULL, &sp, &part.r, &part.err) ==
                      0);
                const spot_dose *s = &part.r.per_spot;
                CHECK_MSG(s->n_spots == count, "block [%d, +%d): %d rows", first, count, s->n_spots);
                for (int k = 0; k < count && k < s->n_spots; k++)
                    CHECK_MSG(same_row(s, k, w, first + k), "block [%d, +%d) total %d: row %d differs from row %d",
                              first, count, total, k, first + k);
                if (total)
                    CHECK_MSG(part.r.dose_MeV &&
                                  memcmp(part.r.dose_MeV, whole.r.dose_MeV, whole.g.slice * sizeof(double)) == 0,
                              "the total with block [%d, +%d) differs from the whole run's", first, count);
                else
                    CHECK(part.r.dose_MeV == NULL && part.r.n_steps == 0);
                CHECK(part.r.backend_name[0] != '\0'); /* described for /mpi */
                fixture_free(&part);
            }
        }
    }
    if (!rc)
        fixture_free(&whole);
    unlink(spots);
}

int main(int argc, char **argv)
{
    (void)argc;
    check_blocks();
    check_parts();
    return check_report(argv[0]);
}
