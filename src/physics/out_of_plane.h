/* The out-of-plane detour: the path a proton travels across the plane.
 *
 * The state holds the projected angle theta_x only, and a step of in-plane
 * path ds moves its particles by ds cos(theta_x) in depth: the detour in x is
 * transported. A 3-D proton also scatters in y, independently and with the
 * same projected variance theta_0^2 (Fermi-Eyges), and its path dl projects
 * onto the plane as ds = dl (1 - theta_y^2 / 2) to second order. Averaged
 * over theta_y, a step of in-plane path ds is a true path
 *     dl = ds (1 + theta_0^2 / 2)
 * and loses the energy of that path. So the transport's range relation is not
 * the CSDA range R(E) = int dE / S but the in-plane path range
 *     R_p(E) = int dE / S(E) (1 - theta_0^2(E) / 2),
 * theta_0^2(E) the projected variance a beam incident at E_ref has gathered
 * by the time it has slowed to E, int_E^E_ref T(E') / S(E') dE' in the
 * reference material (the plan's). It shortens a 230 MeV range by 0.17 mm,
 * half of PSTAR's CSDA-to-projected difference, whose other half the
 * transported x detour makes; at 70 MeV by 0.02 mm (docs/model.md).
 *
 * Approximations, each below 0.02 mm of range at therapy energies: theta_0
 * gathers in the reference material even where the beam crosses another (each
 * medium's own S with the reference's theta_0); a field's every spot takes the
 * highest spot energy as E_ref, as the differential Highland scattering power
 * does; the step's scattering, straggling and nuclear removal are integrated
 * over its in-plane path, short of the true one by the same factor (at most
 * 0.7 %, in the last millimetre). */
#ifndef SMX_OUT_OF_PLANE_H
#define SMX_OUT_OF_PLANE_H

#include "base/error.h"
#include "input/plan.h"
#include "physics/tables.h"

typedef struct out_of_plane_model {
    int on; /* 0: the CSDA range (a strictly 2-D proton, or no scattering) */
    int highland; /* theta_0 from the differential Highland T, else the table's Fermi-Rossi T */
    double E_ref_MeV; /* the beam's incident energy, where theta_0 starts */
    double XS_g_cm2; /* the reference material's scattering length (Highland) */
} out_of_plane_model;

/* The plan's model with the reference material's table t: on with
 * transport.out_of_plane_detour and scattering, theta_0 from the plan's
 * scattering power and its reference energy (the highest spot energy). */
out_of_plane_model out_of_plane_of_plan(const plan *p, const tables *t);

/* theta_0^2 (rad^2) at E of a beam incident at m->E_ref_MeV in the material of
 * ref: 0 at and above E_ref, NAN outside the table. */
double out_of_plane_theta2(const tables *ref, const out_of_plane_model *m, double E_MeV);

/* Fills t->path_g_cm2, the in-plane path range of t's material with theta_0
 * from ref (t itself for the reference material); with m NULL or m->on == 0
 * it leaves the transport on the CSDA range. */
int tables_set_path_range(tables *t, const tables *ref, const out_of_plane_model *m,
                          smx_error *err);

#endif
