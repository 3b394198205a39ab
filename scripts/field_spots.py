#!/usr/bin/env python3
"""Writes the spot map of the `field` benchmark (config/bench/field_spots.csv):
N_E energies evenly spaced from E_LO to E_HI MeV times N_X positions evenly
spaced from -HALF to +HALF mm, one proton weight each (the dose-influence
matrix is per proton; the weights only scale the total).

    python3 scripts/field_spots.py > config/bench/field_spots.csv
"""
import sys

N_E, E_LO, E_HI = 20, 70.0, 230.0
N_X, HALF = 41, 50.0


def main(out=sys.stdout):
    out.write("# field benchmark: %d energies %g-%g MeV x %d positions %g..%g mm "
              "(scripts/field_spots.py)\n" % (N_E, E_LO, E_HI, N_X, -HALF, HALF))
    out.write("energy_MeV, x_mm, weight\n")
    for i in range(N_E):
        e = E_LO + (E_HI - E_LO) * i / (N_E - 1)
        for j in range(N_X):
            x = -HALF + 2 * HALF * j / (N_X - 1)
            out.write("%.4f, %.2f, 1.0\n" % (e, x))


if __name__ == "__main__":
    main()
