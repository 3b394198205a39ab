#include "physics/spectral_tally.h"

#include <math.h>
#include <stdlib.h>

/* Simpson's rule in u = ln E (the tables are log-log smooth; L peaks near
 * 80 keV, where a linear grid in E would need many more points). 64
 * intervals put the integral of the tables' own interpolant within 1e-7. */
#define SPECTRAL_SIMPSON 64

/* Below a table's first energy E0 (1 MeV for the PSTAR tables) the last of a
 * track's energy is lost: there the stopping power follows the power law of
 * the Bragg-Kleeman rule R = a E^p, S(E) = S(E0) (E / E0)^(1/p - 1), with
 * Bortfeld's p for water (Med. Phys. 24 (1997) 2024). Its integral from 0,
 * p S(E0) E0, is within 1 % of PSTAR's tabulated low-energy stopping power
 * in water (44.7 + 1.3 MeV keV/um below 1 MeV); without it a stopping
 * proton's LET would miss the Bragg peak of S near 80 keV, a third of its
 * dose-averaged LET. */
#define SPECTRAL_BK_P 1.77

/* What is integrated over a step's energies: 1, the medium's stopping
 * power (LET), its inverse (the path), or water's mass stopping-power ratio
 * to it. */
enum spectral_kind { SK_ONE, SK_LET, SK_PATH, SK_RATIO };

double spectral_water_ratio(const tables *water, const tables *medium, double E_MeV)
{
    return tables_stopping_power(water, E_MeV) / tables_stopping_power(medium, E_MeV);
}

static double value_of(enum spectral_kind k, const tables *t, const tables *water, double E)
{
    switch (k) {
    case SK_LET:
        return tables_stopping_power(t, E);
    case SK_PATH:
        return 1.0 / tables_stopping_power(t, E);
    case SK_RATIO:
        return spectral_water_ratio(water, t, E);
    default:
        return 1.0;
    }
}

/* int_{lo}^{hi} f(E) dE: the tables' interpolant above E0, the power law
 * (or f(E0), for the ratio) below it. */
static double integral(enum spectral_kind k, const tables *t, const tables *water, double lo,
                       double hi)
{
    const double E0 = t->E_MeV[0] > water->E_MeV[0] ? t->E_MeV[0] : water->E_MeV[0];
    double tail = 0.0;
    if (lo < E0) {
        const double top = hi < E0 ? hi : E0;
        const double q = 1.0 / SPECTRAL_BK_P; /* S ~ E^(q - 1) */
        if (k == SK_LET)
            tail = value_of(k, t, water, E0) * E0 / q * (pow(top / E0, q) - pow(lo / E0, q));
        else if (k == SK_PATH)
            tail = value_of(k, t, water, E0) * E0 / (2.0 - q) *
                   (pow(top / E0, 2.0 - q) - pow(lo / E0, 2.0 - q));
        else
            tail = value_of(k, t, water, E0) * (top - lo);
        lo = E0;
    }
    if (!(hi > lo))
        return tail;
    const double a = log(lo), h = (log(hi) - a) / SPECTRAL_SIMPSON;
    double s = 0.0;
    for (int n = 0; n <= SPECTRAL_SIMPSON; n++) {
        const double E = exp(a + n * h);
        const double w = n == 0 || n == SPECTRAL_SIMPSON ? 1.0 : (n & 1) ? 4.0 : 2.0;
        s += w * value_of(k, t, water, E) * E;
    }
    return tail + s * h / 3.0;
}

void spectral_tallies_free(spectral_tallies *st)
{
    free(st->coef);
    free(st->first);
    free(st->last);
    *st = (spectral_tallies){ 0 };
}

/* The mean of f over a step's energies [lo, hi] weighted by energy lost:
 * both integrals by the same rule, so a constant f comes back exactly (water
 * in water: the dose to water is the dose, bit for bit). */
static double loss_mean(enum spectral_kind k, const tables *t, const tables *water, double lo,
                        double hi)
{
    const double n = integral(SK_ONE, t, water, lo, hi);
    return n > 0.0 ? integral(k, t, water, lo, hi) / n : value_of(k, t, water, hi);
}

/* The terms of one step of a bin in a medium: its loss, its LET integral,
 * its path and its water ratio integral (the header's table). */
typedef struct step_terms {
    double edep, let_edep, track, w_edep;
} step_terms;

/* The step of bin i in medium md. */
static step_terms step_terms_of(const grid *g, const spectral_medium *md, const tables *water,
                                int64_t i)
{
    step_terms s;
    const double E = g->E.centres[i], Ep = md->lut->E_after[i];
    const int stops = isnan(Ep);
    const double lo = stops ? 0.0 : Ep;
    s.edep = E - lo;
    /* L in keV/um: S (MeV cm2/g) * rho (g/cm3) is MeV/cm, 0.1 keV/um. */
    s.let_edep = g->plane_let_edep
                     ? s.edep * 0.1 * md->density_g_cm3 * loss_mean(SK_LET, md->t, md->t, lo, E)
                     : 0.0;
    /* The path by the same stopping power as L (not the transport's ds or
     * range table, which differ from it by up to 0.3 %): a step's LETt,
     * dE / path, is then the harmonic mean of L over its energies and never
     * above its LETd, their energy-weighted mean. */
    s.track =
        g->plane_track ? 10.0 * integral(SK_PATH, md->t, md->t, lo, E) / md->density_g_cm3 : 0.0;
    s.w_edep = g->plane_water ? s.edep * loss_mean(SK_RATIO, md->t, water, lo, E) : 0.0;
    return s;
}

int spectral_tallies_build(spectral_tallies *st, const grid *g, int n_media,
                           const spectral_medium *media, const tables *water, smx_error *err)
{
    *st =
        (spectral_tallies){ .n_planes = g->dose_planes - 1, .n_media = n_media, .ne = (int)g->ne };
    if (st->n_planes == 0)
        return 0;
    if (g->plane_water && !water)
        return smx_fail(err, SMX_EXIT_RUNTIME,
                        "internal: output.dose_to_water without the water table");
    const int64_t ne = g->ne, n = (int64_t)st->n_planes * n_media * ne;
    st->coef = calloc((size_t)n, sizeof *st->coef);
    st->first = malloc((size_t)st->n_planes * sizeof *st->first);
    st->last = malloc((size_t)st->n_planes * sizeof *st->last);
    if (!st->coef || !st->first || !st->last) {
        spectral_tallies_free(st);
        return smx_fail(err, SMX_EXIT_RUNTIME, "out of memory building the spectral tallies");
    }
#define COEF(q, m, i) st->coef[((int64_t)((q)-1) * n_media + (m)) * ne + (i)]
#pragma omp parallel for schedule(dynamic, 1)
    for (int m = 0; m < n_media; m++) {
        const spectral_medium *md = &media[m];
        for (int64_t i = 0; i < ne; i++) {
            if (g->halo_bands) {
                const int b = md->lut->release_band[i];
                if (b >= 0)
                    COEF(1 + b, m, i) = md->lut->release_MeV[i];
            }
            if (!g->plane_edep)
                continue;
            const step_terms s = step_terms_of(g, md, water ? water : md->t, i);
            COEF(g->plane_edep, m, i) = s.edep;
            if (g->plane_let_edep) {
                COEF(g->plane_let_edep, m, i) = s.let_edep;
                COEF(g->plane_track, m, i) = s.track;
            }
            if (g->plane_water)
                COEF(g->plane_water, m, i) = s.w_edep;
        }
    }
    for (int q = 1; q <= st->n_planes; q++) {
        st->first[q - 1] = (int)ne;
        st->last[q - 1] = -1;
        for (int m = 0; m < n_media; m++)
            for (int64_t i = 0; i < ne; i++)
                if (COEF(q, m, i) != 0.0) {
                    if (i < st->first[q - 1])
                        st->first[q - 1] = (int)i;
                    if (i > st->last[q - 1])
                        st->last[q - 1] = (int)i;
                }
    }
#undef COEF
    for (int64_t k = 0; k < n; k++)
        if (!isfinite(st->coef[k])) {
            const int64_t q = k / ((int64_t)n_media * ne) + 1, m = k / ne % n_media, i = k % ne;
            spectral_tallies_free(st);
            return smx_fail(err, SMX_EXIT_INPUT,
                            "the material table of medium %lld has no stopping power at %.4g MeV "
                            "(dose plane %lld's tally); expected a table that covers the energy "
                            "grid",
                            (long long)m, g->E.centres[i], (long long)q);
        }
    return 0;
}
