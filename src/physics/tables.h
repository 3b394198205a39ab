/* Physics tables of one material (HDF5, generated from NIST PSTAR by make tables).
 * All interpolation is log-log between table points, so the range-energy relation
 * and its inverse are exact inverses of each other. */
#ifndef SMX_TABLES_H
#define SMX_TABLES_H

#include <stddef.h>

#include "base/error.h"

typedef struct tables {
    int n; /* number of energy points */
    double *E_MeV; /* kinetic energy, ascending */
    double *S_elec_MeV_cm2_g; /* electronic mass stopping power */
    double *S_nuc_MeV_cm2_g; /* nuclear mass stopping power */
    double *S_total_MeV_cm2_g; /* total mass stopping power */
    double *csda_g_cm2; /* CSDA range */
    double *projected_g_cm2; /* projected range */
    double *detour; /* projected / CSDA */
    double *T_rad2_cm2_g; /* mass scattering power T/rho (projected angle) */
    /* The transport's range: the in-plane path range, the CSDA range less the
     * out-of-plane detour (physics/out_of_plane.h); NULL: the CSDA range. Not
     * a dataset of the file: set after loading, freed with the tables. */
    double *path_g_cm2;
    char material[64];
    char source[2048]; /* provenance of the numbers */
    char scattering_model[512];
    double I_eV; /* mean excitation energy */
    char path[4096];
    char sha256[65]; /* of the file as read */
} tables;

/* Reads the file once, checks it in a child process (a corrupt file that
 * crashes the HDF5 library is then an error, not a crash of the caller), and
 * loads and validates it. t->sha256 is of the bytes read. */
int tables_load(tables *t, const char *path, smx_error *err);
/* The reader and its checks on a file's bytes in memory, in this process
 * (name is used in messages and kept as t->path; the hash is of the bytes). */
int tables_load_image(tables *t, const void *bytes, size_t len, const char *name, smx_error *err);
void tables_free(tables *t);

/* Interpolation (log-log). Energies outside [E_MeV[0], E_MeV[n-1]] return NAN. */
double tables_csda_range(const tables *t, double E_MeV); /* g/cm2 */
double tables_energy_at_range(const tables *t, double R_g_cm2); /* MeV; NAN below table */
double tables_stopping_power(const tables *t, double E_MeV); /* MeV cm2/g */
double tables_scattering_power(const tables *t, double E_MeV); /* rad2 cm2/g */
double tables_projected_range(const tables *t, double E_MeV); /* g/cm2 */
/* The range the transport steps through (path_g_cm2, else the CSDA range)
 * and its inverse: what the energy grid, the energy-loss step and the beam's
 * predicted reach use. */
double tables_path_range(const tables *t, double E_MeV); /* g/cm2 */
double tables_energy_at_path_range(const tables *t, double R_g_cm2); /* MeV; NAN below table */

/* The integral of f(E) over the path of one step, in residual range (g/cm2):
 * from R(E) down by ds_g, or to R(E_stop) if that comes first (a particle that
 * stops within the step). Gauss-Legendre, two panels of 8 points, which never
 * evaluate f at the step's ends. 0 when the path is empty. */
double tables_step_integral(const tables *t, double E_MeV, double E_stop_MeV, double ds_g,
                            double (*f)(double E_MeV, const void *ctx), const void *ctx);

/* The same quadrature split in two, for several integrands over one step:
 * its energies (each a lookup in the range table), then the sum of one f
 * over them in tables_step_integral's order, so that each integral is that
 * function's bit for bit. */
typedef struct tables_step_points {
    int empty; /* the path is empty: every integral is 0 */
    double half; /* a quarter of the path's residual range */
    double E[2][8][2]; /* panel, point, below and above the panel's middle */
} tables_step_points;
void tables_step_points_of(const tables *t, double E_MeV, double E_stop_MeV, double ds_g,
                           tables_step_points *q);
double tables_step_sum(const tables_step_points *q, double (*f)(double E_MeV, const void *ctx),
                       const void *ctx);

/* The scattering-power model used to fill T is scattering_power_fermi_rossi
 * (physics/scattering_power.h), shared by scripts/make_tables.c and the tests. */
/* Constants of that model. Es is Rossi's 21.2 MeV (space angle) over sqrt 2, so T
 * is the variance of the projected angle, the one a 2D x-z model transports. */
#define SMX_FR_ES_MEV 15.0
#define SMX_PROTON_MASS_MEV 938.272088
#define SMX_X0_WATER_G_CM2 36.08

/* The file layout, declared once: the generator writes exactly these datasets (in this
 * order, each with these units and description) and the reader requires them. */
#define TABLES_FILETYPE "smx2d-sim material table"
#define TABLES_FORMAT_VERSION "1.0"
#define TABLES_NDATASETS 8
#define TABLES_MAX_BYTES (256 << 20)
typedef struct tables_dataset_spec {
    const char *name;
    const char *units;
    const char *description;
} tables_dataset_spec;
extern const tables_dataset_spec tables_datasets[TABLES_NDATASETS];
/* The array of t holding dataset k of tables_datasets (NULL for k out of range). */
double *tables_column(const tables *t, int k);

#endif
