/* Build and run facts recorded as root attributes of every output file. */
#ifndef SMX_PROVENANCE_H
#define SMX_PROVENANCE_H

#include <stdint.h>

/* One process of an MPI job (src/parallel/, docs/mpi.md). */
typedef struct provenance_rank {
    char host[64];
    char device[192]; /* "cuda device 0: NVIDIA H100 ...", "cpu: CPU (...)", or why none */
    int64_t spot_first; /* its per-spot rows: spots spot_first .. spot_first + spot_count - 1 */
    int64_t spot_count;
    /* its (scenario, spot) pairs, pair = scenario * mpi_spots + spot: pair_first ..
     * pair_first + pair_count - 1 (the same as its spots without scenarios) */
    int64_t pair_first, pair_count;
} provenance_rank;

typedef struct provenance {
    char code_version[32];
    char git_describe[128];
    char compiler[256];
    char cflags[1024];
    char cuda_version[64]; /* "none" when built without CUDA */
    char cufft_version[64]; /* set by provenance_finish; "none" unless the run loaded cuFFT */
    char hdf5_version[64];
    char yaml_version[64];
    char hostname[256];
    char argv[4096];
    char utc_start[32]; /* ISO 8601, Z */
    char utc_end[32];
    char plan_sha256[65];
    char table_sha256[65];
    /* cuda_version above holds the CUDA runtime version; these keep the toolkit
     * that compiled the kernels apart from the runtime and driver that ran them,
     * which can differ. */
    char nvcc_version[64]; /* "none" when built without CUDA */
    char nvcc_flags[1024];
    /* "none" without CUDA or without a driver; on a CPU run, which leaves
     * the GPU and its driver alone, why it did not ask (gpu_info.why_none) */
    char cuda_driver_version[64];
    /* An MPI build's job (written as /mpi); n_ranks 0 in a build without MPI,
     * whose files have no /mpi. */
    int n_ranks;
    char mpi_library[256]; /* MPI_Get_library_version's first line */
    provenance_rank *ranks; /* [n_ranks], owned (provenance_free) */
    int mpi_scenarios, mpi_spots; /* the pairs divided: scenarios x per-spot rows of each */
} provenance;

/* Fills the build facts, host, argv and utc_start. */
void provenance_init(provenance *pv, int argc, char **argv);
void provenance_finish(provenance *pv); /* sets utc_end and cufft_version */
/* The driver's version from the device query, where the run made one. */
struct gpu_info;
void provenance_set_driver(provenance *pv, const struct gpu_info *gi);
void provenance_free(provenance *pv); /* the ranks */
void utc_now_iso8601(char out[32]);

#endif
