/* Builds without CUDA have no GPU to offer. */
#include "transport/device_query.h"

#include <stdio.h>
#include <string.h>

#ifndef SMX_HAVE_CUDA
void gpu_query(gpu_info *gi)
{
    memset(gi, 0, sizeof *gi);
    gi->queried = 1;
    snprintf(gi->why_none, sizeof gi->why_none, "built without CUDA (make CUDA=0)");
}

void gpu_select(int index)
{
    (void)index;
}

int gpu_selected(void)
{
    return 0;
}

int cufft_query(int load, char *why, size_t cap)
{
    (void)load;
    snprintf(why, cap, "built without CUDA");
    return 0;
}
#else
/* The CUDA build defines gpu_query and gpu_select in cuda/device_query.cu and cufft_query in
 * cuda/cufft_loader.cu; ISO C wants a declaration here. */
typedef int device_query_none_unused;
#endif
