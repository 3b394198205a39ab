/* The deterministic division of a field's spots over the ranks of a job. */
#include "parallel/parallel.h"

void par_spot_blocks(int n_spots, const int64_t *cost, int64_t head, int size, int *bound)
{
    if (n_spots < 0)
        n_spots = 0;
    if (head < 0)
        head = 0;
    int64_t total = head;
    for (int k = 0; k < n_spots; k++)
        total += cost ? (cost[k] > 0 ? cost[k] : 1) : 1;
    /* Boundary r: where the running cost (the head, then the spots in order)
     * comes closest to r / size of the total, the earlier spot on a tie. */
    bound[0] = 0;
    int k = 0;
    int64_t before = head; /* cost of the head and the spots before k */
    for (int r = 1; r < size; r++) {
        const int64_t target = total / size * r + total % size * r / size; /* total * r / size, no overflow */
        while (k < n_spots) {
            const int64_t c = cost ? (cost[k] > 0 ? cost[k] : 1) : 1;
            if (before + c > target && (before + c - target) >= (target - before))
                break;
            before += c;
            k++;
        }
        bound[r] = k;
    }
    if (size > 0)
        bound[size] = n_spots;
}
