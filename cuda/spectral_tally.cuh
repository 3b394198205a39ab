// The spectral tallies (physics/spectral_tally.h): the dose's planes 1.. that
// each step adds to from psi as it finds the cells, a coefficient per
// (medium, bin) times the bin's weight summed over its directions (the
// nuclear halo's released energy per band; LET's and the dose to water's
// sums). The CPU's cpu_spectral_tallies, bit for bit.
#pragma once

#include "common.cuh"

#define SPECTRAL_PLANES_MAX 12 // halo bands (physics/nuclear_halo.h) + the 4 of LET and water

struct spectral_tables_dev {
    const double *coef; // [nplanes][n_media][ne], per unit weight
    int nplanes, n_media;
    int2 bins[SPECTRAL_PLANES_MAX]; // each plane's bins with a non-zero coefficient (first, last)
};

// Where the one pass takes the tallies of its unsplit steps (fused.cuh),
// the tallies run apart only on the steps it splits: on = 1 and what
// decides the split (tiling.cuh, step_split_groups).
struct spectral_gate {
    int on;
    const int *slot_pref;
    int nslots, max_tiles, blocks;
};

// What the tallies are handed: psi as the step finds it, psi_a, or in a
// one-pass run psi[*step & 1] of (psi_a, psi_b) (flip); dose: [1 + nplanes]
// [slice]; wsum: [ne][slice] scratch; the grid and the coefficients; medium:
// [nz][px] or NULL (one medium); reg and boxes: the active region and each
// bin's box (NULL: every cell and bin); the stop flag and the blocks.
struct spectral_args {
    const float *psi_a, *psi_b;
    int flip;
    const int64_t *step;
    double *dose, *wsum;
    dev_dims d;
    spectral_tables_dev t;
    const unsigned char *medium;
    const active_regions *reg;
    const box4 *boxes;
    const int *stop;
    int blocks;
    spectral_gate gate;
};
cudaError_t spectral_launch(const spectral_args &a, cudaStream_t s);
// The plane kernel alone, after a one-pass step whose split instance wrote
// wsum (fused.cuh, spec_wsum): it forms the planes on the steps the pass
// split (gate on: it returns on the others, whose tallies the pass took), from
// the region the step started from (enqueued before the step's bookkeeping).
cudaError_t spectral_plane_launch(const spectral_args &a, cudaStream_t s);
