/* Shared by the result writer's files only (output_*.c); the public API is output.h.
 *
 * The writer's jobs: output_hdf5.c (HDF5 calls with one-line errors; every
 * dataset written with its units and description), output_file.c (the
 * temporary name, overwrite policy, commit and abort), output_setup.c (axes and
 * plan, written before the run), output_snapshot.c (psi snapshots during the
 * run), output_result.c (dose, tallies, timing and provenance at the end). */
#ifndef SMX_OUTPUT_INTERNAL_H
#define SMX_OUTPUT_INTERNAL_H

#include <hdf5.h>

#include "io/output.h"
#include "io/xdmf.h"
#include "physics/medium.h"

struct output {
    hid_t file;
    char *final_path;
    char *temp_path;
    int overwrite;
    int setup_done, result_done;
    int geometry_done; /* /geometry written: the sidecar shows the material map */
    const medium_map *media; /* the map written there (NULL: one medium): each cell's mass */
    int placed; /* the file already has its final name; abort must not touch it */
    xdmf_mesh mesh;
};

/* HDF5 prints its whole error stack to stderr by default; the writer reports
 * one line instead, and restores the previous handler on the way out. */
typedef struct h5quiet {
    H5E_auto2_t func;
    void *data;
} h5quiet;

enum value_kind {
    V_F64, /* data: const double * */
    V_F32, /* data: const float * */
    V_I32, /* data: const int * */
    V_I64, /* data: const int64_t * */
    V_U16, /* data: const uint16_t * */
    V_U8, /* data: const uint8_t * */
    V_TEXT, /* data: const char *, rank 0 */
    V_TEXTS /* data: const char *const *, rank 1 */
};

/* One dataset declaration. dcpl and dapl 0 mean H5P_DEFAULT (contiguous, default
 * chunk cache); axes, when set, names what each dimension runs over, slowest first. */
typedef struct dset {
    hid_t parent;
    const char *parent_path;
    const char *name;
    int kind;
    int rank;
    hsize_t dims[4];
    const void *data;
    const char *units;
    const char *description;
    const char *axes;
    hid_t dcpl;
    hid_t dapl;
    int by_caller; /* the caller writes the values through the kept dataset (data unused) */
    /* > 0: dcpl chunks a 1-D dataset by this many values with shuffle and
     * deflate at deflate_level, and the values go in as chunks compressed
     * on the host's threads (io/h5_deflate.h), not through HDF5's filters. */
    size_t deflate_chunk;
    int deflate_level;
} dset;

/* output_hdf5.c */
h5quiet out_quiet_begin(void);
void out_quiet_end(h5quiet q);
int out_h5_fail(const output *o, smx_error *err, const char *action, const char *object);
void out_close_id(hid_t *id, herr_t (*closer)(hid_t));
int out_close_dataset(output *o, hid_t *ds, const char *object, int rc, smx_error *err);
int out_attr_str(output *o, hid_t loc, const char *where, const char *name, const char *value,
                 smx_error *err);
int out_attr_int(output *o, hid_t loc, const char *where, const char *name, int value,
                 smx_error *err);
int out_attr_f64(output *o, hid_t loc, const char *where, const char *name, double value,
                 smx_error *err);
int out_open_group(output *o, const char *path, hid_t *g, smx_error *err);
int out_put_dataset(output *o, const dset *d, hid_t *keep, smx_error *err);
/* Each dataset of a list, into the open group grp (at path). */
int out_put_all(output *o, hid_t grp, const char *path, const dset *list, size_t n, smx_error *err);
/* output_geometry.c: Gy per MeV deposited in one dose cell (its mass). */
double out_gy_per_MeV(const plan *p, const grid *g);
/* The same for cell c of a dose map (z * nx + x), from its medium's density. */
double out_gy_per_MeV_at(const output *o, const plan *p, const grid *g, int64_t c);
/* Rows of spot_dose as one CSR group (output_spots.c): the values in the
 * plan's dose unit times what the rows carry besides (units). */
typedef struct spot_rows_out {
    const spot_dose *rows;
    const char *path; /* the group */
    const char *units, *unit_name; /* "Gy", and the name suffix of peak_ and dropped_ */
    const char *quantity; /* what a value is, in words */
    const char *data_doc, *peak_doc, *group_doc;
} spot_rows_out;
int out_write_spot_rows(output *o, const plan *p, const grid *g, const spot_rows_out *w,
                        smx_error *err);
/* /let and /dose_to_water (output_let.c). */
int out_write_let(output *o, const plan *p, const grid *g, const run_result *r, smx_error *err);
/* output_spots.c: the per-spot matrix (/dose/per_spot, a scenario's
 * /scenarios/NNN/per_spot) into the group at path, when the run has it. */
int out_write_per_spot(output *o, const char *path, const plan *p, const grid *g,
                       const run_result *r, smx_error *err);
/* output_geometry.c: a dose map mev (MeV per proton, [nz][nx]) in Gy of the
 * cells' masses: [2][nz][nx], the beam's protons' dose then per proton
 * (free it); *protons: the beam's. NULL: out of memory. */
double *out_dose_gy(const output *o, const plan *p, const grid *g, const double *mev,
                    double *protons);
/* output_result.c: the dose group (/dose, a scenario's /scenarios/NNN/dose) at
 * path, in MeV and Gy of the cells' masses (o->media), and the per-spot
 * matrix at spots_path. */
int out_write_dose(output *o, const char *path, const char *spots_path, const output_run *run,
                   smx_error *err);
/* output_ranks.c: /mpi, the processes of an MPI job (pv->n_ranks > 0). */
int out_write_ranks(output *o, const provenance *pv, smx_error *err);
/* output_file.c */
/* The check at the start of every write: o is open (else the message names the
 * entry point `what`) and g is consistent. */
int out_ready(const output *o, const grid *g, smx_error *err, const char *what);
void out_remember_mesh(output *o, const grid *g);

#endif
