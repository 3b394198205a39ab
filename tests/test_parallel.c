/* What an MPI job's division of a field rests on, tested in every build:
 *  - par_spot_blocks: the blocks of 1..12 ranks cover 0..n-1 once, in rank
 *    order, contiguous; with equal costs their sizes differ by at most one,
 *    rank 0's the smallest; with rising costs and rank 0's total, each
 *    boundary is where the running cost comes closest to its share;
 *  - par_field_share: a robust plan's (scenario, spot) pairs divided in
 *    blocks give each rank, per scenario, a contiguous share; the shares of
 *    a scenario cover its spots once, in rank order;
 *  - simulate_part: a block of per-spot rows run without the total (as ranks
 *    1.. run it) is bit for bit the same rows of the whole run, and the total
 *    run with an empty block is bit for bit the whole run's total. The MPI
 *    job itself (gather, failures) is tests/mpi.sh. */
#include <stdint.h>

#include "check.h"
#include "parallel/parallel.h"
#include "sim_fixture.h"

/* The blocks of 1..12 ranks over 0..40 spots: contiguous, in order, covering. */
static void check_cover(int n, int size, const int *bound)
{
    CHECK_MSG(bound[0] == 0 && bound[size] == n, "n %d size %d: blocks from %d to %d", n, size,
              bound[0], bound[size]);
    for (int r = 0; r < size; r++)
        CHECK_MSG(bound[r] <= bound[r + 1], "n %d size %d: block %d is [%d, %d)", n, size, r,
                  bound[r], bound[r + 1]);
}

static void check_blocks(void)
{
    int bound[13];
    int64_t cost[40];
    for (int size = 1; size <= 12; size++) {
        for (int n = 0; n <= 40; n++) {
            /* Equal costs: sizes within one, rank 0's the smallest. */
            par_spot_blocks(n, NULL, 0, size, bound);
            check_cover(n, size, bound);
            int least = n, most = 0;
            for (int r = 0; r < size; r++) {
                int c = bound[r + 1] - bound[r];
                least = c < least ? c : least;
                most = c > most ? c : most;
            }
            CHECK_MSG(most - least <= 1 && bound[1] - bound[0] == least,
                      "n %d size %d: sizes %d..%d, rank 0 %d", n, size, least, most, bound[1]);
            /* Rising costs (a spot map sorted by energy) and a head for rank 0's total. */
            int64_t total = 0, head = 3 * (n + 1);
            for (int k = 0; k < n; k++) {
                cost[k] = 10 + 3 * k + (k * 7) % 5;
                total += cost[k];
            }
            total += head;
            par_spot_blocks(n, cost, head, size, bound);
            check_cover(n, size, bound);
            /* Boundary r: of all the running costs (head + the spots before k),
             * the one closest to r / size of the total, the earliest of equals. */
            for (int r = 1; r < size; r++) {
                const double target = (double)(total * r / size);
                int best = 0;
                int64_t run = head;
                for (int k = 0; k <= n; k++) {
                    int64_t at_best = head;
                    for (int j = 0; j < best; j++)
                        at_best += cost[j];
                    if (fabs((double)run - target) < fabs((double)at_best - target))
                        best = k;
                    if (k < n)
                        run += cost[k];
                }
                CHECK_MSG(bound[r] == best,
                          "n %d size %d: boundary %d at spot %d, the closest to %.0f is %d", n,
                          size, r, bound[r], target, best);
            }
        }
    }
}

static int same_row(const spot_dose *a, int ra, const spot_dose *b, int rb)
{
    int64_t na = a->indptr[ra + 1] - a->indptr[ra], nb = b->indptr[rb + 1] - b->indptr[rb];
    return na == nb &&
           memcmp(a->indices + a->indptr[ra], b->indices + b->indptr[rb],
                  (size_t)na * sizeof *a->indices) == 0 &&
           memcmp(a->values + a->indptr[ra], b->values + b->indptr[rb],
                  (size_t)na * sizeof *a->values) == 0 &&
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
    const char *sets[] = {
        set_spots,          "output.per_spot_dose=true", "grid.space.nx=31",
        "grid.space.nz=40", "grid.energy.E_max_MeV=40",  "grid.angle.n_bins=15"
    };
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
                const sim_part sp = { total, first, count, NULL };
                CHECK(simulate_part(&(sim_input){ &part.p, &part.g, &part.t, NULL }, &backend_cpu,
                                    NULL, &sp, &part.r, &part.err) == 0);
                const spot_dose *s = &part.r.per_spot;
                CHECK_MSG(s->n_spots == count, "block [%d, +%d): %d rows", first, count,
                          s->n_spots);
                for (int k = 0; k < count && k < s->n_spots; k++)
                    CHECK_MSG(same_row(s, k, w, first + k),
                              "block [%d, +%d) total %d: row %d differs from row %d", first, count,
                              total, k, first + k);
                if (total)
                    CHECK_MSG(part.r.dose_MeV && memcmp(part.r.dose_MeV, whole.r.dose_MeV,
                                                        whole.g.slice * sizeof(double)) == 0,
                              "the total with block [%d, +%d) differs from the whole run's", first,
                              count);
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

/* A robust plan's (scenario, spot) pairs: each rank's share of each scenario
 * (par_field_share) is its block clipped to the scenario's pairs, so that the
 * shares of a scenario are contiguous in rank order and cover its spots
 * once, and the total is rank 0's in every scenario. */
static void check_scenario_shares(void)
{
    int bound[9];
    for (int size = 1; size <= 8; size++) {
        for (int n_scen = 1; n_scen <= 4; n_scen++) {
            for (int n_spots = 0; n_spots <= 6; n_spots++) {
                par_field f = { .n_scenarios = n_scen, .n_spots = n_spots, .bound = bound };
                par_spot_blocks(n_scen * n_spots, NULL, 2 * n_scen, size, bound);
                int pairs = 0;
                for (int k = 0; k < n_scen; k++) {
                    int next = 0;
                    for (int r = 0; r < size; r++) {
                        const sim_part sp = par_field_share(&f, r, k);
                        CHECK_MSG(sp.total == (r == 0) && sp.spot_first == next &&
                                      sp.spot_count >= 0,
                                  "size %d, %d x %d: rank %d scenario %d: total %d, spots %d + %d "
                                  "(expected from %d)",
                                  size, n_scen, n_spots, r, k, sp.total, sp.spot_first,
                                  sp.spot_count, next);
                        /* The rank's pairs of scenario k are inside its block. */
                        if (sp.spot_count > 0)
                            CHECK_MSG(k * n_spots + sp.spot_first >= bound[r] &&
                                          k * n_spots + sp.spot_first + sp.spot_count <=
                                              bound[r + 1],
                                      "size %d: rank %d scenario %d outside its block", size, r, k);
                        next = sp.spot_first + sp.spot_count;
                        pairs += sp.spot_count;
                    }
                    CHECK_MSG(next == n_spots, "size %d, %d x %d: scenario %d covered to %d", size,
                              n_scen, n_spots, k, next);
                }
                CHECK_MSG(pairs == n_scen * n_spots, "size %d: %d pairs of %d", size, pairs,
                          n_scen * n_spots);
            }
        }
    }
}

int main(int argc, char **argv)
{
    (void)argc;
    check_blocks();
    check_scenario_shares();
    check_parts();
    return check_report(argv[0]);
}
