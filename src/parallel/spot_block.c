/* The deterministic division of a field's spots over the ranks of a job. */
#include "parallel/parallel.h"

void par_spot_block(int n_spots, int rank, int size, int *first, int *count)
{
    if (size < 1 || rank < 0 || rank >= size || n_spots < 0) {
        *first = *count = 0;
        return;
    }
    /* The first size - extra ranks get base spots, the last extra ranks one more. */
    const int base = n_spots / size, extra = n_spots % size, small = size - extra;
    *count = base + (rank >= small);
    *first = rank * base + (rank > small ? rank - small : 0);
}
