/* What GPU, if any, this process can use, and whether cuFFT loads. Without CUDA
 * in the build both report none. */
#ifndef SMX_DEVICE_QUERY_H
#define SMX_DEVICE_QUERY_H

#include <stddef.h>

typedef struct gpu_info {
    int count; /* usable CUDA devices; 0 when none or no driver */
    char name[256]; /* the selected device (gpu_select; 0 by default) */
    int cc_major, cc_minor;
    double total_bytes, free_bytes;
    int runtime_version, driver_version;
    char why_none[512]; /* when count == 0 */
    int no_code; /* a device is there, but this binary has no GPU code it can run */
    int queried; /* gpu_query filled it (a CPU run asks nothing: run_setup.c) */
} gpu_info;

#ifdef __cplusplus
extern "C" {
#endif
void gpu_query(gpu_info *gi);
/* The device gpu_query describes and the CUDA backend runs on: 0 unless an MPI
 * rank picks another (its local rank modulo the count, src/parallel/); an
 * index beyond the devices makes gpu_query report none, with the reason.
 * Builds without CUDA ignore it. */
void gpu_select(int index);
int gpu_selected(void);
/* cuFFT, which the CUDA backend loads at run time for its FFT angular operator
 * (cuda/cufft_loader.cuh): its version (e.g. 12000), or 0 with the reason in
 * why. load = 1 loads it unless that was tried already; load = 0 only reports
 * what an earlier load found ("not loaded" when none was tried), i.e. whether
 * this run used it. Builds without CUDA: 0, "built without CUDA". */
int cufft_query(int load, char *why, size_t cap);
#ifdef __cplusplus
}
#endif

#endif
