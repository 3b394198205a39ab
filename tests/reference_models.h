/* Published analytic models the physics tests compare the simulator with. They
 * are written here from the papers' formulas, independently of the simulator's
 * own models, so that a test against them checks the physics, not only the
 * arithmetic (docs/physics.md, Measured accuracy).
 *
 * - Bortfeld, "An analytical approximation of the Bragg curve for therapeutic
 *   proton beams", Med. Phys. 24 (1997) 2024: the Bragg-Kleeman depth dose of
 *   protons of range R (p = 1.77), with the fluence falling linearly in
 *   residual range through non-elastic interactions (beta = 0.012 /cm) and a
 *   share gamma = 0.6 of their energy absorbed locally, convolved with a
 *   Gaussian range straggling sigma = 0.012 R^0.935 (R, sigma in cm).
 * - Highland's theta_0 for a slab with energy loss (Gottschalk et al., NIM B
 *   74 (1993) 467): theta_0 = 14.1 MeV (1 + lg(L / X0) / 9) (int_0^L dx / (pv)^2
 *   / X0)^(1/2), and the Fermi-Eyges width built from it. */
#ifndef SMX_TEST_REFERENCE_MODELS_H
#define SMX_TEST_REFERENCE_MODELS_H

#include <math.h>

#include "physics/tables.h"

#define BORTFELD_P 1.77
#define BORTFELD_BETA_CM 0.012
#define BORTFELD_GAMMA 0.6

static inline double bortfeld_sigma_cm(double R_cm)
{
    return 0.012 * pow(R_cm, 0.935);
}

/* Undisturbed depth dose (arbitrary units) at depth z of protons of range R. */
static inline double bortfeld_unstraggled(double z, double R)
{
    if (z >= R)
        return 0.0;
    double r = R - z, b = BORTFELD_BETA_CM;
    return (pow(r, 1.0 / BORTFELD_P - 1.0) +
            (b + BORTFELD_GAMMA * b * BORTFELD_P) * pow(r, 1.0 / BORTFELD_P)) /
           (1.0 + b * R);
}

/* The straggled curve at z: the undisturbed one averaged over a Gaussian
 * distribution of ranges (mean R, sd sigma), by the trapezoid rule in the
 * variable u = sqrt(R' - z), which removes the integrable singularity. */
static inline double bortfeld_dose(double z, double R, double sigma)
{
    const double lo = fmax(z, R - 8.0 * sigma), hi = R + 8.0 * sigma;
    if (hi <= z)
        return 0.0;
    const int n = 4000;
    double ulo = sqrt(lo - z), uhi = sqrt(hi - z), du = (uhi - ulo) / n, sum = 0.0;
    for (int i = 0; i <= n; i++) {
        double u = ulo + i * du, Rp = z + u * u;
        double g = exp(-0.5 * (Rp - R) * (Rp - R) / (sigma * sigma));
        double f = u > 0.0 ? bortfeld_unstraggled(z, Rp) * 2.0 * u * g : 0.0;
        sum += (i == 0 || i == n) ? 0.5 * f : f;
    }
    return sum * du / (sigma * sqrt(2.0 * M_PI));
}

typedef struct bragg_figures {
    double r80_cm, r20_cm, peak_to_entrance;
} bragg_figures;

/* R80, R20 and peak-to-entrance of the straggled curve, on a 1 um mesh. */
static inline bragg_figures bortfeld_figures(double R, double sigma)
{
    const double h = 1e-4;
    double peak = 0.0, zpk = 0.0;
    for (double z = fmax(0.0, R - 10.0 * sigma); z < R + 2.0 * sigma; z += h) {
        double d = bortfeld_dose(z, R, sigma);
        if (d > peak)
            peak = d, zpk = z;
    }
    bragg_figures f = { 0.0, 0.0, peak / bortfeld_dose(0.0, R, sigma) };
    double prev = peak;
    for (double z = zpk + h; z < R + 8.0 * sigma; z += h) {
        double d = bortfeld_dose(z, R, sigma);
        if (f.r80_cm == 0.0 && d <= 0.8 * peak)
            f.r80_cm = z - h * (0.8 * peak - d) / (prev - d);
        if (d <= 0.2 * peak) {
            f.r20_cm = z - h * (0.2 * peak - d) / (prev - d);
            break;
        }
        prev = d;
    }
    return f;
}

/* Surviving fraction of primaries at depth z (cm) in Bortfeld's model. */
static inline double bortfeld_fluence(double z, double R)
{
    return (1.0 + BORTFELD_BETA_CM * (R - z)) / (1.0 + BORTFELD_BETA_CM * R);
}

/* Highland's theta_0^2 (rad^2) after L mm of the table's material. */
static inline double highland_theta0_sq(const tables *t, double E0, double L_mm, double rho,
                                        double X0_g_cm2)
{
    if (L_mm <= 0.0)
        return 0.0;
    const double m = SMX_PROTON_MASS_MEV;
    double R0 = tables_csda_range(t, E0);
    const int n = 400;
    double h = L_mm / n, I = 0.0;
    for (int i = 0; i < n; i++) {
        double E = tables_energy_at_range(t, R0 - (i + 0.5) * h * 0.1 * rho);
        double pv = E * (E + 2.0 * m) / (E + m);
        I += h * 0.1 * rho / (pv * pv);
    }
    double c = 14.1 * (1.0 + log10(L_mm * 0.1 * rho / X0_g_cm2) / 9.0);
    return c * c * I / X0_g_cm2;
}

/* Fermi-Eyges width (mm) at depth z of a zero-width pencil beam whose angular
 * variance after u mm is Highland's theta_0^2(u): with T = d theta_0^2 / du,
 * sigma_x^2 = int_0^z (z - u)^2 T du = 2 int_0^z (z - u) theta_0^2(u) du. */
static inline double highland_fermi_eyges_mm(const tables *t, double E0, double z_mm, double rho,
                                             double X0_g_cm2)
{
    const int n = 400;
    double h = z_mm / n, s = 0.0;
    for (int i = 0; i < n; i++) {
        double u = (i + 0.5) * h;
        s += (z_mm - u) * highland_theta0_sq(t, E0, u, rho, X0_g_cm2) * h;
    }
    return sqrt(2.0 * s);
}

#endif
