// transport.nuclear: halo: the energy a step's non-elastic events hand to
// secondary protons, summed per cell into the dose's release planes
// (physics/nuclear_halo.h; the CPU's cpu_release_energy, bit for bit).
#pragma once

#include "common.cuh"

#define RELEASE_BANDS_MAX 8 // the bands a run may keep (physics/nuclear_halo.h's SMX_HALO_BANDS)

struct release_tables_dev {
    const double *rel; // [n_media][ne] MeV per unit weight (the medium's mean table)
    const signed char *band; // [n_media][ne] its plane - 1, or -1: nothing released
    int nbands;
    int2 bins[RELEASE_BANDS_MAX]; // each band's source bins (first, last): a run of energies
};

// From psi as the step finds it: psi_a, or in a one-pass run psi[step & 1]
// (flip). dose: [1 + nbands][slice]; wsum: [ne][slice] scratch. medium:
// [nz][px] or NULL (one medium); reg and boxes: the active region and each
// bin's box (NULL: every cell and bin).
cudaError_t release_launch(const float *psi_a, const float *psi_b, int flip, const int64_t *step,
                           double *dose, double *wsum, dev_dims d, release_tables_dev t,
                           const unsigned char *medium, const active_regions *reg,
                           const box4 *boxes, const int *stop, int blocks, cudaStream_t s);
