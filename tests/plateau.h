/* The depth dose's worst row in the plateau: the largest deviation, in per
 * cent, of a row from the mean of its two neighbours, over the rows whose far
 * edge lies before 90 % of R80 (the entrance row has one neighbour and is
 * left out). A one-row spike of the grid shows here; the Bragg curve's own
 * curvature over 0.5 mm rows is < 0.4 % this far before the peak. */
#ifndef SMX_TEST_PLATEAU_H
#define SMX_TEST_PLATEAU_H

#include <math.h>
#include <stdint.h>

static inline double plateau_worst_row(const double *dd, int64_t nz, double dz_mm, double r80_mm,
                                       int *row)
{
    double worst = 0.0;
    *row = -1;
    for (int64_t z = 1; z + 1 < nz && (z + 1.5) * dz_mm <= 0.9 * r80_mm; z++) {
        double dev = 100.0 * (dd[z] / (0.5 * (dd[z - 1] + dd[z + 1])) - 1.0);
        if (fabs(dev) > fabs(worst)) {
            worst = dev;
            *row = (int)z;
        }
    }
    return worst;
}

/* A spike of a skipped move was 6-14 %; the limit of docs/physics.md. */
#define PLATEAU_LIMIT_PERCENT 1.0

#endif
