/* Proton non-elastic (reaction) cross sections per nucleus, element by element,
 * as evaluated in ICRU Report 63, "Nuclear Data for Neutron and Proton
 * Radiotherapy and for Radiation Protection" (2000): the elements that report
 * evaluates and the library's materials contain (C, N, O, Al, Si, P, Ca, Fe,
 * Cu), from 7 MeV (the threshold of the water fit the transport keeps,
 * physics/nuclear.h) to 250 MeV, on each evaluation's own energies.
 *
 * Where the numbers were read: the `Cross_section` (barn) of every `Energy`
 * block of Materials/<element>/ICRU_Nuclear_inelastic.dat in MCsquare's
 * material data (Souris, Lee, Sterpin, Med. Phys. 43 (2016) 1700), repository
 * e0404/MCsquare, commit 211eefe6eaf2 (files of 2018-01-09), which tabulates
 * ICRU 63's evaluation for these elements; its titanium/README.txt says ICRU 63
 * has no titanium. Transcribed in millibarn, every digit kept.
 *
 * Iron: ICRU 63 rises from 672 mb at 150 MeV to 865 mb at 250 MeV, where
 * Barashenkov's evaluation of the measurements is flat (697 -> 688 mb) and
 * ICRU 63's own O, N, Al and Cu are flat; only its values up to 150 MeV are
 * kept, and the lookup holds the last value above (docs/materials.md).
 *
 * tests/test_nuclear.c checks the table's shape, spot values against the
 * source, and the whole against Barashenkov's independent evaluation. */
#ifndef SMX_NUCLEAR_ICRU63_H
#define SMX_NUCLEAR_ICRU63_H

typedef struct nonelastic_eval {
    int Z;
    const char *symbol;
    double A; /* g/mol, the natural element's standard atomic weight */
    double A23; /* A^(2/3), written out (the A-rule of physics/nuclear.h
                             * uses it on every call; tests/test_nuclear.c checks it) */
    int n;
    const double *E_MeV; /* strictly ascending, from 7 MeV */
    const double *sigma_mb; /* per nucleus */
} nonelastic_eval;

/* Ascending in Z (and in A). */
#define NONELASTIC_ICRU63_N 9
extern const nonelastic_eval nonelastic_icru63[NONELASTIC_ICRU63_N];
extern const int nonelastic_icru63_count;

/* The evaluation of element Z; NULL when ICRU 63 has none. */
const nonelastic_eval *nonelastic_icru63_find(int Z);

/* Linear in E between the evaluation's energies; its last value above its last
 * energy, 0 below its first. */
double nonelastic_eval_mb(const nonelastic_eval *e, double E_MeV);

#endif
