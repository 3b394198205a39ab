#!/usr/bin/env python3
"""Writes the input files of the shipped geometry examples (docs/geometry.md):

  data/phantom_map.h5  a material map (config/phantom_map.yaml): water with a PMMA
                       slab, a lung insert, a compact-bone block and an air gap, on
                       1 mm cells (the plan's 0.5 mm grid resamples it)
  data/ct_phantom.h5   a CT image in HU (config/ct_phantom.yaml, calibrated by
                       data/ct_schneider2000.csv): air, skin, fat, muscle, lung with
                       a density gradient, a rib, on the plan's 0.5 mm grid

    /usr/bin/python3 scripts/make_geometry_examples.py [DATA_DIR]

Needs h5py and numpy (Debian: python3-h5py, python3-numpy). The files are written
without timestamps, so the same script gives the same values; the phantom is
drawn from the numbers below, nothing random.
"""
import os
import sys

import h5py
import numpy as np


def centres(n, d, origin):
    return origin + d * (np.arange(n) + 0.5)


def box(z, x, z0, z1, x0=-1e9, x1=1e9):
    """Cells whose centre lies in [x0, x1) x [z0, z1), the simulator's rule."""
    zz, xx = np.meshgrid(z, x, indexing="ij")
    return (zz >= z0) & (zz < z1) & (xx >= x0) & (xx < x1)


def grid_attrs(f, dz, dx, nx):
    f.attrs["dz_mm"] = dz
    f.attrs["dx_mm"] = dx
    f.attrs["z0_mm"] = 0.0
    f.attrs["x0_mm"] = -0.5 * nx * dx


def phantom_map(path):
    nz, nx, d = 120, 50, 1.0
    z, x = centres(nz, d, 0.0), centres(nx, d, -0.5 * nx * d)
    names = ["water", "pmma", "lung", "bone_compact", "air"]
    index = np.zeros((nz, nx), dtype=np.uint8)
    density = np.full((nz, nx), 1.0, dtype=np.float32)
    layers = [  # (material, density g/cm3, z from, z to, x from, x to), later wins
        ("pmma", 1.19, 10, 20, -25, 25),
        ("lung", 0.26, 30, 60, -25, 0),
        ("bone_compact", 1.85, 40, 50, 0, 10),
        ("air", 0.00120479, 65, 70, -5, 5),
    ]
    for name, rho, z0, z1, x0, x1 in layers:
        m = box(z, x, z0, z1, x0, x1)
        index[m] = names.index(name)
        density[m] = rho
    with h5py.File(path, "w", track_order=False) as f:
        f.attrs["description"] = ("smx2d-sim example material map (scripts/make_geometry_examples.py): "
                                  "water, PMMA slab, lung insert, compact-bone block, air gap")
        grid_attrs(f, d, d, nx)
        f.create_dataset("material_index", data=index, track_times=False)
        f.create_dataset("density_g_cm3", data=density, track_times=False)
        f.create_dataset("materials", data=np.array(names, dtype="S"), track_times=False)


def ct_phantom(path):
    nz, nx, d = 240, 100, 0.5
    z, x = centres(nz, d, 0.0), centres(nx, d, -0.5 * nx * d)
    zz, xx = np.meshgrid(z, x, indexing="ij")
    hu = np.full((nz, nx), 40.0)                      # muscle / soft tissue
    hu[box(z, x, 0, 4)] = -1000.0                      # air in front of the body
    hu[box(z, x, 4, 6)] = 20.0                         # skin
    hu[box(z, x, 6, 16)] = -100.0                      # subcutaneous fat
    lung = box(z, x, 40, 90)
    hu[lung] = (-850.0 + 4.0 * (zz - 40.0))[lung]      # lung, denser with depth: -850 to -650 HU
    hu[box(z, x, 30, 36, -10, 15)] = 1200.0            # a rib across the beam's path
    # A smooth +-10 HU texture: many distinct CT numbers, so the calibrated
    # densities exercise the media quantisation.
    hu += np.round(10.0 * np.sin(zz / 3.0) * np.cos(xx / 4.0))
    with h5py.File(path, "w", track_order=False) as f:
        f.attrs["description"] = ("smx2d-sim example CT image in HU (scripts/make_geometry_examples.py): "
                                  "air, skin, fat, muscle, a rib, lung with a gradient")
        grid_attrs(f, d, d, nx)
        f.create_dataset("hu", data=hu.astype(np.int16), track_times=False)


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "data")
    phantom_map(os.path.join(data, "phantom_map.h5"))
    ct_phantom(os.path.join(data, "ct_phantom.h5"))


if __name__ == "__main__":
    main()
