/* What GPU, if any, this process can use. Without CUDA in the build it reports none. */
#ifndef SMX_DEVICE_QUERY_H
#define SMX_DEVICE_QUERY_H

#include <stddef.h>

typedef struct gpu_info {
    int count;             /* usable CUDA devices; 0 when none or no driver */
    char name[256];        /* device 0 */
    int cc_major, cc_minor;
    double total_bytes, free_bytes;
    int runtime_version, driver_version;
    char why_none[512];    /* when count == 0 */
    int no_code;           /* a device is there, but this binary has no GPU code it can run */
} gpu_info;

#ifdef __cplusplus
extern "C" {
#endif
void gpu_query(gpu_info *gi);
#ifdef __cplusplus
}
#endif

#endif
