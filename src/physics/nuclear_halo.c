#include "physics/nuclear_halo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* The partition's table (docs/physics.md, "Nuclear products"): per primary
 * energy, the shares of the energy brought into the event, linear between.
 * Neutral 0.43: what an independent Monte Carlo code's energy deposit per
 * proton in water implies; the charged 0.57 is close to Bortfeld's 0.6 local
 * share (after ICRU Report 63, whose table by particle should replace these).
 * Half the secondary protons' energy is taken to be the fast cascade's (the
 * kernel), the rest slow evaporation protons counted as local; below 50 MeV
 * the cascade fades to nothing at the 7 MeV threshold. */
static const double part_E[] = { 7.0, 50.0, 100.0, 150.0, 200.0, 250.0 };
static const double part_local[] = { 0.57, 0.40, 0.33, 0.32, 0.28, 0.24 };
static const double part_protons[] = { 0.00, 0.17, 0.24, 0.25, 0.26, 0.27 };
#define PART_N ((int)(sizeof part_E / sizeof part_E[0]))

nuclear_partition nuclear_partition_water(double E)
{
    int i = 0;
    if (E <= part_E[0])
        i = 0;
    else if (E >= part_E[PART_N - 1])
        i = PART_N - 2;
    else
        while (i < PART_N - 2 && E > part_E[i + 1])
            i++;
    double f = (E - part_E[i]) / (part_E[i + 1] - part_E[i]);
    f = f < 0.0 ? 0.0 : f > 1.0 ? 1.0 : f;
    nuclear_partition p;
    p.local = part_local[i] + f * (part_local[i + 1] - part_local[i]);
    p.protons = part_protons[i] + f * (part_protons[i + 1] - part_protons[i]);
    p.neutral = 1.0 - p.local - p.protons;
    return p;
}

/* Band edges (MeV): narrower where a secondary's range changes fastest with
 * its primary's energy relative to the kernel's cells. */
static const double band_edge[SMX_HALO_BANDS] = { 7.0, 25.0, 50.0, 80.0, 120.0, 170.0 };

int nuclear_halo_band(double E)
{
    int b = -1;
    for (int k = 0; k < SMX_HALO_BANDS; k++)
        if (E >= band_edge[k])
            b = k;
    return b;
}

double nuclear_halo_band_edge(int b)
{
    return band_edge[b];
}

void halo_kernel_free(halo_kernel *k)
{
    free(k->K);
    k->K = NULL;
}

/* Quadrature of the kernel: primaries' energies in a band, secondary
 * energies, azimuths. The secondaries of quasi-free proton-proton collisions
 * (a nucleon knocked out of the nucleus, the primary scattered): with the
 * collision isotropic in the centre of mass, a secondary's energy is uniform
 * on [0, E] and its angle to the primary theta = acos(sqrt(E'/E)) (equal
 * masses, the bound nucleon's motion and binding neglected); the share of the
 * released energy carried by energies near E' is 2 E' / E^2. Each goes
 * straight (its scattering is small beside the kernel's reach) and loses its
 * energy along its CSDA range in water. */
#define N_PRIMARY 4
#define N_SECONDARY 48
#define N_AZIMUTH 24

int halo_kernel_build(halo_kernel *k, const tables *water, const halo_kernel_spec *s)
{
    const double E_lo = s->E_lo, E_hi = s->E_hi, angle_deg = s->angle_deg, hz = s->hz_mm,
                 hx = s->hx_mm;
    const int max_rows = s->max_rows, max_cols = s->max_cols;
    *k = (halo_kernel){ 0 };
    const int nz = 2 * max_rows + 1, nx = 2 * max_cols + 1;
    double *full = calloc((size_t)nz * nx, sizeof *full);
    const double step = 0.5 * (hz < hx ? hz : hx); /* path per segment, mm */
    const double ca = cos(angle_deg * PI / 180.0), sa = sin(angle_deg * PI / 180.0);
    double cphi[N_AZIMUTH];
    for (int q = 0; q < N_AZIMUTH; q++)
        cphi[q] = cos((q + 0.5) * PI / N_AZIMUTH); /* cos(phi) over [0, pi]; the rest mirrors */
    int max_seg = 0;
    double *dE = NULL;
    for (int a = 0; a < N_PRIMARY && full; a++) {
        const double E = E_lo + (a + 0.5) * (E_hi - E_lo) / N_PRIMARY;
        for (int j = 0; j < N_SECONDARY; j++) {
            const double u = (j + 0.5) / N_SECONDARY; /* E' / E */
            const double Ep = u * E;
            const double w = 2.0 * u / N_SECONDARY / N_PRIMARY / N_AZIMUTH;
            const double ct = sqrt(u), st = sqrt(1.0 - u);
            const double R = tables_csda_range(water, Ep) * 10.0; /* mm at 1 g/cm3 */
            int nseg = (int)ceil(R / step);
            if (nseg < 1)
                nseg = 1;
            if (nseg > max_seg) {
                double *t = realloc(dE, (size_t)nseg * sizeof *dE);
                if (!t) {
                    free(full);
                    full = NULL;
                    break;
                }
                dE = t;
                max_seg = nseg;
            }
            /* The share of E' lost in each segment (the last one takes the
             * rest, so the track's shares sum to 1). */
            double prev = Ep, sum = 0.0;
            for (int s = 0; s < nseg; s++) {
                double left = R - (s + 1) * R / nseg;
                double Es = s + 1 < nseg ? tables_energy_at_range(water, left / 10.0) : 0.0;
                if (!(Es == Es) || Es < 0.0)
                    Es = 0.0;
                dE[s] = (prev - Es) / Ep;
                sum += dE[s];
                prev = Es;
            }
            for (int s = 0; s < nseg; s++) {
                const double mid = (s + 0.5) * R / nseg;
                const double along = mid * ct, side = mid * st;
                for (int q = 0; q < N_AZIMUTH; q++) {
                    for (int sign = -1; sign <= 1; sign += 2) {
                        const double b = sign * side * cphi[q];
                        const double dz = along * ca - b * sa, dx = along * sa + b * ca;
                        const int iz = (int)lround(dz / hz), ix = (int)lround(dx / hx);
                        if (iz < -max_rows || iz > max_rows || ix < -max_cols || ix > max_cols)
                            continue;
                        full[(int64_t)(iz + max_rows) * nx + ix + max_cols] +=
                            0.5 * w * dE[s] / sum;
                    }
                }
            }
        }
    }
    free(dE);
    if (!full)
        return -1;
    /* Cropped to the cells it reaches. */
    int r0 = nz, r1 = -1, c0 = nx, c1 = -1;
    for (int r = 0; r < nz; r++)
        for (int c = 0; c < nx; c++)
            if (full[(int64_t)r * nx + c] != 0.0) {
                r0 = r < r0 ? r : r0;
                r1 = r > r1 ? r : r1;
                c0 = c < c0 ? c : c0;
                c1 = c > c1 ? c : c1;
            }
    if (r1 < 0) {
        r0 = r1 = max_rows;
        c0 = c1 = max_cols;
    }
    k->z0 = r0 - max_rows;
    k->x0 = c0 - max_cols;
    k->nkz = r1 - r0 + 1;
    k->nkx = c1 - c0 + 1;
    k->K = malloc((size_t)k->nkz * k->nkx * sizeof *k->K);
    if (!k->K) {
        free(full);
        return -1;
    }
    for (int r = 0; r < k->nkz; r++)
        memcpy(k->K + (int64_t)r * k->nkx, full + (int64_t)(r + r0) * nx + c0,
               (size_t)k->nkx * sizeof *k->K);
    free(full);
    return 0;
}
