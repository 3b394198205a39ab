/* Non-elastic nuclear cross sections of the library's materials: the per-element
 * table (physics/nuclear_icru63.h), the cross sections per nucleus the
 * transport uses (physics/nuclear.h) against references stated here with their
 * source, the rule for the elements ICRU 63 does not evaluate, and each
 * material's cross section per unit mass and ratio to water.
 *
 *   test_nuclear                               (from the repository root)
 *   test_nuclear --print-doc-table elements    (the tables docs/materials.md
 *   test_nuclear --print-doc-table materials    must hold) */
#include "physics/material.h"
#include "physics/material_library.h"
#include "physics/nuclear.h"

#include "check.h"
#include "doc_table.h"

#include <errno.h>

/* ---- references, with where each number was read ---- */

/* The four energies (MeV) every reference below is given at. */
#define NREF 4
static const double REF_E[NREF] = { 50.0, 100.0, 150.0, 200.0 };

typedef struct ref_element {
    const char *symbol;
    int Z;
    double A; /* standard atomic weight, as in material.c */
    double icru63[NREF]; /* mb; 0: ICRU 63 has no evaluation */
    double barashenkov[NREF]; /* mb; 0: none */
} ref_element;

/* ICRU Report 63 (2000): the `Cross_section` of MCsquare's
 * Materials/<element>/ICRU_Nuclear_inelastic.dat (e0404/MCsquare, commit
 * 211eefe6eaf2), barn, here in mb. Iron at 200 MeV is ICRU 63's 672.1 mb of
 * 150 MeV: ICRU 63 gives 738.7 mb there, a rise the code does not take
 * (physics/nuclear_icru63.h).
 *
 * Barashenkov, "Nucleon-nucleus cross sections", JINR P2-89-770 (Dubna 1989),
 * an evaluation of the measurements independent of ICRU 63: the proton
 * inelastic tables (the *_p_in arrays at 0.05, 0.1, 0.15 and 0.2 GeV) of Geant4's
 * G4ComponentBarNucleonNucleusXsc.cc, which transcribes them. */
static const ref_element REF[] = {
    { "C", 6, 12.0107, { 334.0, 227.0, 222.4, 210.0 }, { 320, 222, 211, 210 } },
    { "N", 7, 14.0067, { 362.4, 259.5, 256.7, 256.7 }, { 377, 270, 252, 245 } },
    { "O", 8, 15.9994, { 401.0, 297.0, 295.0, 295.0 }, { 390, 293, 279, 276 } },
    { "Na", 11, 22.98977, { 0 }, { 490, 360, 350, 350 } },
    { "Mg", 12, 24.305, { 0 }, { 0 } },
    { "Al", 13, 26.981538, { 574.8, 420.7, 399.1, 400.0 }, { 540, 408, 403, 404 } },
    { "Si", 14, 28.0855, { 575.3, 431.1, 410.2, 424.0 }, { 570, 431, 425, 422 } },
    { "P", 15, 30.973761, { 688.3, 487.9, 440.6, 440.0 }, { 0 } },
    { "S", 16, 32.065, { 0 }, { 0 } },
    { "Cl", 17, 35.453, { 0 }, { 0 } },
    { "Ar", 18, 39.948, { 0 }, { 0 } },
    { "K", 19, 39.0983, { 0 }, { 0 } },
    { "Ca", 20, 40.078, { 755.0, 583.0, 537.2, 529.0 }, { 715, 573, 540, 535 } },
    { "Ti", 22, 47.867, { 0 }, { 0 } },
    { "Fe", 26, 55.845, { 898.3, 725.8, 672.1, 672.1 }, { 885, 700, 697, 690 } },
    { "Cu", 29, 63.546, { 971.3, 780.3, 738.6, 739.0 }, { 950, 780, 745, 735 } },
    { "Zn", 30, 65.409, { 0 }, { 0 } },
};
#define NREF_EL ((int)(sizeof REF / sizeof REF[0]))

/* Wellisch and Axen's parametrisation of the measured proton reaction cross
 * sections, Phys. Rev. C 54 (1996) 1329, as Geant4 implements it
 * (G4ProtonInelasticCrossSection, "Axen-Wellisch"), evaluated for 48Ti and for
 * its evaluated neighbours 40Ca, 56Fe and 63Cu at REF_E (mb). */
static const struct {
    const char *symbol;
    double sigma[NREF];
} WELLISCH_AXEN[] = {
    { "Ca", { 724, 579, 545, 534 } },
    { "Ti", { 826, 671, 632, 620 } },
    { "Fe", { 899, 740, 699, 686 } },
    { "Cu", { 964, 802, 758, 744 } },
};

/* Letaw, Silberberg and Tsao, Astrophys. J. Suppl. 51 (1983) 271: proton-nucleus
 * reaction cross section (mb) at E (MeV), a fit to the measurements over A:
 * 45 A^0.7 [1 + 0.016 sin(5.3 - 2.63 ln A)] [1 - 0.62 e^(-E/200) sin(10.9 E^-0.28)]. */
static double letaw_mb(double A, double E)
{
    double high = 45.0 * pow(A, 0.7) * (1.0 + 0.016 * sin(5.3 - 2.63 * log(A)));
    return high * (1.0 - 0.62 * exp(-E / 200.0) * sin(10.9 * pow(E, -0.28)));
}

static const ref_element *ref_of(const char *symbol)
{
    for (int i = 0; i < NREF_EL; i++)
        if (strcmp(REF[i].symbol, symbol) == 0)
            return &REF[i];
    return NULL;
}

static double ours(const ref_element *r, double E)
{
    return nonelastic_element_mb(r->Z, r->A, E);
}

/* ---- the table ---- */

static void check_table(void)
{
    CHECK(nonelastic_icru63_count == 9);
    for (int i = 0; i < nonelastic_icru63_count; i++) {
        const nonelastic_eval *e = &nonelastic_icru63[i];
        if (i > 0)
            CHECK_MSG(e->Z > e[-1].Z && e->A > e[-1].A, "%s: not ascending in Z and A", e->symbol);
        CHECK(nonelastic_icru63_find(e->Z) == e);
        CHECK_REL(e->A23, cbrt(e->A * e->A), 1e-15); /* written to 17 digits */
        /* From the water fit's threshold to at least 150 MeV (ICRU 63's iron). */
        CHECK_MSG(e->n >= 2 && e->E_MeV[0] == 7.0 && e->E_MeV[e->n - 1] >= 150.0,
                  "%s: energies %g to %g MeV", e->symbol, e->E_MeV[0], e->E_MeV[e->n - 1]);
        for (int k = 0; k < e->n; k++) {
            CHECK_MSG(k == 0 || e->E_MeV[k] > e->E_MeV[k - 1], "%s: energy %d not ascending",
                      e->symbol, k);
            /* Between light and heavy nuclei's values in 7-250 MeV: a misplaced
             * digit or a value in barn lands outside. */
            CHECK_MSG(isfinite(e->sigma_mb[k]) && e->sigma_mb[k] > 150.0 && e->sigma_mb[k] < 1500.0,
                      "%s: sigma(%g MeV) = %g mb", e->symbol, e->E_MeV[k], e->sigma_mb[k]);
        }
        /* Held at its last value above its last energy, 0 below its first. */
        CHECK(nonelastic_eval_mb(e, 1000.0) == e->sigma_mb[e->n - 1]);
        CHECK(nonelastic_eval_mb(e, 6.99) == 0.0);
    }
    CHECK(nonelastic_icru63_find(1) == NULL && nonelastic_icru63_find(22) == NULL);
}

/* The evaluated values at the reference energies are the source's, digit for
 * digit (1e-12: the same decimal numbers, one linear interpolation at most). */
static void check_transcription(void)
{
    for (int i = 0; i < NREF_EL; i++) {
        const ref_element *r = &REF[i];
        if (r->icru63[0] == 0.0)
            continue;
        for (int k = 0; k < NREF; k++)
            CHECK_REL(nonelastic_element_eval_mb(r->Z, r->A, REF_E[k]), r->icru63[k], 1e-12);
    }
    const nonelastic_eval *o = nonelastic_icru63_find(8);
    /* Midway between 90 and 100 MeV: 302.1 and 297.0 mb. */
    CHECK_REL(nonelastic_eval_mb(o, 95.0), 0.5 * (302.1 + 297.0), 1e-12);
    /* Iron is held at its 150 MeV value (not ICRU 63's 865.4 mb at 250 MeV). */
    CHECK(nonelastic_element_eval_mb(26, 55.845, 250.0) == 672.1);
}

/* Water: the fit itself, and its composition gives it back. The transport's
 * oxygen differs from ICRU 63's by the fit's error, which bounds how far every
 * element is scaled from ICRU 63. */
static double check_water(void)
{
    const material_props *w = material_props_by_key("water");
    CHECK(w && w->nonelastic_cm2_g == nonelastic_water_cm2_g);
    const nonelastic_eval *o = nonelastic_icru63_find(8);
    double worst = 0.0, at = 0.0;
    for (double E = 7.5; E <= 260.0; E += 0.5) {
        double sum = 0.0;
        for (int i = 0; w && i < w->n_elements; i++)
            sum += w->elements[i].w * SMX_AVOGADRO / w->elements[i].A * SMX_MB_CM2 *
                   nonelastic_element_mb(w->elements[i].Z, w->elements[i].A, E);
        CHECK_REL(sum, nonelastic_water_cm2_g(E), 1e-12);
        CHECK(w && material_nonelastic_ratio(w, E) == 1.0);
        double d = nonelastic_oxygen_fit_mb(E) / nonelastic_eval_mb(o, E) - 1.0;
        if (E >= 10.0 && fabs(d) > fabs(worst)) {
            worst = d;
            at = E;
        }
    }
    /* Fippel and Soukup fitted ICRU 63's oxygen; their fit stays within 3 % of
     * it above 10 MeV (measured -2.5 % at 10 MeV, +2.2 % at 90 MeV). */
    CHECK_MSG(fabs(worst) <= 0.03, "water fit vs ICRU 63 oxygen: %+.2f %% at %g MeV", 100 * worst,
              at);
    printf("water fit's oxygen vs ICRU 63's, worst above 10 MeV: %+.2f %% at %g MeV\n", 100 * worst,
           at);
    /* Nothing at or below the fit's 7 MeV; hydrogen never. */
    CHECK(nonelastic_element_mb(8, SMX_OXYGEN_A, 7.0) == 0.0);
    CHECK(nonelastic_element_mb(29, 63.546, 7.0) == 0.0);
    CHECK(nonelastic_element_mb(1, 1.00794, 100.0) == 0.0);
    return fabs(worst);
}

/* The transport's cross section per nucleus against ICRU 63 and Barashenkov. */
static void check_elements(double fit_err)
{
    double worst_bar = 0.0;
    const char *worst_at = "";
    double worst_E = 0.0;
    for (int i = 0; i < NREF_EL; i++) {
        const ref_element *r = &REF[i];
        for (int k = 0; k < NREF; k++) {
            double s = ours(r, REF_E[k]);
            /* ICRU 63 times the water fit's scale: off by the fit's error only
             * (check_water's bound, plus 1e-9 for rounding). */
            if (r->icru63[k] > 0.0)
                CHECK_MSG(fabs(s / r->icru63[k] - 1.0) <= fit_err + 1e-9,
                          "%s at %g MeV: %.1f mb, ICRU 63 %.1f", r->symbol, REF_E[k], s,
                          r->icru63[k]);
            if (r->barashenkov[k] > 0.0) {
                double d = s / r->barashenkov[k] - 1.0;
                if (fabs(d) > fabs(worst_bar)) {
                    worst_bar = d;
                    worst_at = r->symbol;
                    worst_E = REF_E[k];
                }
                /* Two evaluations of the same measurements differ by up to 7 %
                 * here: ICRU 63's own oxygen at 200 MeV (295 mb) is 6.9 % above
                 * Barashenkov's (276 mb); sodium, which ICRU 63 lacks, is within
                 * that (measured +7.2 % at 100 MeV). 8 % holds that, and a wrong
                 * element, unit or scale is further off. */
                CHECK_MSG(fabs(d) <= 0.08, "%s at %g MeV: %.1f mb, Barashenkov %.0f (%+.1f %%)",
                          r->symbol, REF_E[k], s, r->barashenkov[k], 100 * d);
            }
        }
    }
    printf("vs Barashenkov's evaluation, worst: %+.1f %% (%s, %g MeV)\n", 100 * worst_bar, worst_at,
           worst_E);
}

/* Titanium, the one library material of an element ICRU 63 lacks: against the
 * two parametrisations, which reproduce the transport's values of the
 * evaluated neighbours Ca, Fe and Cu to 4 % at 100-200 MeV (checked here too;
 * Letaw's is 7 % off at 50 MeV, so 50 MeV is left out). 5 % for both: the
 * parametrisations' own error where they can be checked. */
static void check_titanium(void)
{
    const double tol = 0.05;
    for (size_t j = 0; j < sizeof WELLISCH_AXEN / sizeof WELLISCH_AXEN[0]; j++) {
        const ref_element *r = ref_of(WELLISCH_AXEN[j].symbol);
        for (int k = 1; k < NREF; k++) {
            double s = ours(r, REF_E[k]), wa = WELLISCH_AXEN[j].sigma[k],
                   le = letaw_mb(r->A, REF_E[k]);
            CHECK_MSG(fabs(s / wa - 1.0) <= tol, "%s at %g MeV: %.1f mb, Wellisch-Axen %.0f",
                      r->symbol, REF_E[k], s, wa);
            CHECK_MSG(fabs(s / le - 1.0) <= tol, "%s at %g MeV: %.1f mb, Letaw %.1f", r->symbol,
                      REF_E[k], s, le);
        }
    }
}

/* The rule for an element ICRU 63 does not evaluate, tried on evaluated ones
 * left out, with neighbours as far apart as titanium's (Ca and Fe, 16 in A):
 * Ca from P and Fe (25 apart), Fe from Ca and Cu, N from C and O. Measured
 * worst at 50-200 MeV: +3.5 % (Ca at 50 MeV); 5 % holds it. (P from Si and Ca
 * is 10-12 % low at 50-70 MeV, where P's cross section has a bump the rule
 * cannot know: docs/materials.md.) */
static void check_rule(void)
{
    static const int cases[][3] = { { 20, 15, 26 }, { 26, 20, 29 }, { 7, 6, 8 } };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const nonelastic_eval *e = nonelastic_icru63_find(cases[c][0]);
        const nonelastic_eval *lo = nonelastic_icru63_find(cases[c][1]);
        const nonelastic_eval *hi = nonelastic_icru63_find(cases[c][2]);
        for (int k = 0; k < NREF; k++) {
            double got = nonelastic_between_mb(lo, hi, e->A, REF_E[k]);
            double want = nonelastic_eval_mb(e, REF_E[k]);
            CHECK_MSG(fabs(got / want - 1.0) <= 0.05,
                      "%s from %s and %s at %g MeV: %.1f mb, "
                      "ICRU 63 %.1f",
                      e->symbol, lo->symbol, hi->symbol, REF_E[k], got, want);
        }
    }
    /* Beyond the table: A^(2/3) from the nearest evaluated element. */
    CHECK_REL(nonelastic_element_eval_mb(30, 65.409, 100.0),
              780.3 * pow(65.409 / 63.546, 2.0 / 3.0), 1e-12);
    CHECK_REL(nonelastic_element_eval_mb(4, 9.012182, 100.0),
              227.0 * pow(9.012182 / 12.0107, 2.0 / 3.0), 1e-12);
}

/* ---- materials ---- */

/* sigma/rho (cm2/g) from the transport's cross sections per nucleus. */
static double composition_sum(const material_props *m, double E)
{
    double s = 0.0;
    for (int i = 0; i < m->n_elements; i++)
        s += m->elements[i].w * SMX_AVOGADRO / m->elements[i].A * SMX_MB_CM2 *
             nonelastic_element_mb(m->elements[i].Z, m->elements[i].A, E);
    return s;
}

static void check_materials(void)
{
    for (int i = 0; i < material_props_count(); i++) {
        const material_props *m = material_props_at(i);
        for (double E = 5.0; E <= 300.0; E += 2.5) {
            /* What the transport integrates is the mass-weighted sum over the
             * composition (1e-12: the same sum in another order). */
            CHECK_REL(m->nonelastic_cm2_g(E), composition_sum(m, E), 1e-12);
            if (E <= 7.0)
                CHECK(m->nonelastic_cm2_g(E) == 0.0);
        }
        /* Above 250 MeV, where the fit and the evaluations end, it stays. */
        CHECK(m->nonelastic_cm2_g(300.0) == m->nonelastic_cm2_g(250.0));
        /* The composition planned once (nonelastic_mix, what the library's
         * cross sections use) gives the unplanned sum's bits: a plan that
         * took another element, weight or rule would show here. */
        nonelastic_mix mix;
        CHECK(nonelastic_mix_init(&mix, m->elements, m->n_elements));
        for (double E = 5.0; E <= 300.0; E += 0.37) {
            CHECK(nonelastic_mix_ratio(&mix, E) == material_nonelastic_ratio(m, E));
            CHECK(m->nonelastic_cm2_g(E) ==
                  nonelastic_water_cm2_g(E) * material_nonelastic_ratio(m, E));
        }
    }
    /* More elements than a mix holds: refused, so that the caller sums unplanned. */
    material_element many[NONELASTIC_MIX_MAX + 1];
    for (int i = 0; i <= NONELASTIC_MIX_MAX; i++)
        many[i] = (material_element){ 8, SMX_OXYGEN_A, 1.0 / (NONELASTIC_MIX_MAX + 1) };
    nonelastic_mix big;
    CHECK(!nonelastic_mix_init(&big, many, NONELASTIC_MIX_MAX + 1));
    CHECK_REL(nonelastic_ratio_to_water(many, NONELASTIC_MIX_MAX + 1, 100.0),
              1.0 / SMX_WATER_OXYGEN_MASS_FRACTION, 1e-12); /* all oxygen: 1 / w_O of water */
    /* The ratio to water, recomputed here from the ICRU 63 values above and
     * NIST's mass fractions: (sum w_i sigma_i / A_i) / (w_O sigma_O / A_O) of
     * water. 1e-12: the same numbers. */
    const ref_element *C = ref_of("C"), *O = ref_of("O"), *Al = ref_of("Al");
    for (int k = 0; k < NREF; k++) {
        double water = 0.888106 * O->icru63[k] / O->A;
        CHECK_REL(material_nonelastic_ratio(material_props_by_key("graphite"), REF_E[k]),
                  C->icru63[k] / C->A / water, 1e-12);
        CHECK_REL(material_nonelastic_ratio(material_props_by_key("aluminium"), REF_E[k]),
                  Al->icru63[k] / Al->A / water, 1e-12);
        CHECK_REL(material_nonelastic_ratio(material_props_by_key("pmma"), REF_E[k]),
                  (0.599848 * C->icru63[k] / C->A + 0.319614 * O->icru63[k] / O->A) / water, 1e-12);
    }
}

/* ---- the tables of docs/materials.md ---- */

static size_t doc_elements(char *buf, size_t cap)
{
    size_t u = (size_t)snprintf(buf, cap,
                                "| Element | Ours from | 50 MeV | 100 MeV | 150 MeV | 200 MeV |\n"
                                "|---|---|---|---|---|---|\n");
    for (int i = 0; i < NREF_EL && u < cap; i++) {
        const ref_element *r = &REF[i];
        const char *from = nonelastic_icru63_find(r->Z) ? "ICRU 63" : "rule";
        u += (size_t)snprintf(buf + u, cap - u, "| %s | %s |", r->symbol, from);
        for (int k = 0; k < NREF && u < cap; k++) {
            double wa = 0.0;
            for (size_t j = 0; j < sizeof WELLISCH_AXEN / sizeof WELLISCH_AXEN[0]; j++)
                if (strcmp(WELLISCH_AXEN[j].symbol, r->symbol) == 0)
                    wa = WELLISCH_AXEN[j].sigma[k];
            double cells[4] = { r->icru63[k], r->barashenkov[k], letaw_mb(r->A, REF_E[k]), wa };
            u += (size_t)snprintf(buf + u, cap - u, " **%.0f**", ours(r, REF_E[k]));
            for (int c = 0; c < 4 && u < cap; c++)
                u += cells[c] > 0.0 ? (size_t)snprintf(buf + u, cap - u, " / %.0f", cells[c])
                                    : (size_t)snprintf(buf + u, cap - u, " / –");
            u += (size_t)snprintf(buf + u, cap - u, " |");
        }
        u += (size_t)snprintf(buf + u, cap - u, "\n");
    }
    return u;
}

static const double DOC_MAT_E[] = { 20.0, 50.0, 100.0, 150.0, 200.0, 250.0 };
#define NDOC_MAT_E ((int)(sizeof DOC_MAT_E / sizeof DOC_MAT_E[0]))

static size_t doc_materials(char *buf, size_t cap)
{
    size_t u = (size_t)snprintf(buf, cap, "| Key | σ/ρ at 100 MeV (cm²/g) |");
    for (int k = 0; k < NDOC_MAT_E; k++)
        u += (size_t)snprintf(buf + u, cap - u, " %g MeV |", DOC_MAT_E[k]);
    u += (size_t)snprintf(buf + u, cap - u, "\n|---|---|");
    for (int k = 0; k < NDOC_MAT_E; k++)
        u += (size_t)snprintf(buf + u, cap - u, "---|");
    u += (size_t)snprintf(buf + u, cap - u, "\n");
    for (int i = 0; i < material_props_count() && u < cap; i++) {
        const material_props *m = material_props_at(i);
        u += (size_t)snprintf(buf + u, cap - u, "| `%s` | %.5f |", m->key,
                              m->nonelastic_cm2_g(100.0));
        for (int k = 0; k < NDOC_MAT_E && u < cap; k++)
            u += (size_t)snprintf(buf + u, cap - u, " %.3f |",
                                  material_nonelastic_ratio(m, DOC_MAT_E[k]));
        u += (size_t)snprintf(buf + u, cap - u, "\n");
    }
    return u;
}

#define DOC_PATH "docs/materials.md"

static void check_doc_table(const char *name, const char *expected)
{
    char begin[128], end[128], stale[256];
    snprintf(begin, sizeof begin,
             "<!-- nonelastic-%s:begin (tests/test_nuclear.c --print-doc-table %s) -->\n", name,
             name);
    snprintf(end, sizeof end, "<!-- nonelastic-%s:end -->", name);
    snprintf(stale, sizeof stale,
             "the non-elastic %s table is stale; run sh scripts/update_materials_doc.sh "
             "or paste the output of build/tests/test_nuclear --print-doc-table %s",
             name, name);
    check_doc_table_in(DOC_PATH, begin, end, expected, stale);
}

int main(int argc, char **argv)
{
    static char elements[1 << 13], materials[1 << 12];
    doc_elements(elements, sizeof elements);
    doc_materials(materials, sizeof materials);
    if (argc == 3 && strcmp(argv[1], "--print-doc-table") == 0) {
        if (strcmp(argv[2], "elements") == 0)
            fputs(elements, stdout);
        else if (strcmp(argv[2], "materials") == 0)
            fputs(materials, stdout);
        else {
            fprintf(stderr, "%s: --print-doc-table takes 'elements' or 'materials', not '%s'\n",
                    argv[0], argv[2]);
            return 2;
        }
        return 0;
    }
    check_table();
    check_transcription();
    double fit_err = check_water();
    check_elements(fit_err);
    check_titanium();
    check_rule();
    check_materials();
    check_doc_table("elements", elements);
    check_doc_table("materials", materials);
    fputs(elements, stdout);
    fputs(materials, stdout);
    return check_report(argv[0]);
}
