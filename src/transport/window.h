/* The part of the grid a source's state holds (docs/model.md, "Windows"):
 * the columns of its lateral reach and a band of rows that follows the beam
 * in depth, every energy bin and direction. A beam occupies a few rows near
 * its front at any step, so its state need not be the whole grid: device and
 * host memory then scale with the sources in flight, not with the grid.
 *
 * The backends step a window as they step a grid (its own grid, wg, and
 * medium map, mm); when the beam's front nears the window's far end, the
 * window moves: the rows behind the beam, which no step can reach any more,
 * leave with their dose (backend_ops.shift), and empty rows enter at the far
 * end. Nothing in a step depends on where a row lies, so a window that holds
 * every cell the beam reaches gives the grid's dose bit for bit; what leaves
 * through a side of a narrower window is an escape like any other. A window
 * as large as the grid never moves (a dense start, snapshots). */
#ifndef SMX_WINDOW_H
#define SMX_WINDOW_H

#include "base/error.h"
#include "input/plan.h"
#include "physics/grid.h"
#include "physics/medium.h"
#include "physics/source.h"
#include "physics/tables.h"
#include "transport/backend.h"

/* The size of every window of a run (one state serves its sources in turn).
 * A state may hold `slots` windows side by side, each a domain of its own
 * (physics/grid.h, slot_nx): a field's per-spot runs step several spots at
 * once, each in its slot, with every launch of a step serving all of them. */
typedef struct window_shape {
    int nx, nz; /* columns and rows a window holds (one slot's) */
    int front_margin; /* rows kept free ahead of the front: what the steps between two
                         collects can cover */
    int back_margin; /* rows kept behind the back row: where a step's deposit reaches */
    int slots; /* windows side by side in the state (0 or 1: one source at a time) */
} window_shape;

/* The columns a source needs: what its spots' reach covers (inclusive). */
typedef struct window_span {
    int x_lo, x_hi;
} window_span;

/* What a window is shaped for: sources 'first .. first + n - 1' of the plan
 * (field: the whole field in one), each needing the columns its spots reach
 * to `sigmas` standard deviations (window_sigmas), with `collect_every`
 * steps between the host's looks at the front (backend_ops). moving = 0: the
 * window keeps every row (snapshots, a backend that cannot shift). mt: the
 * tables of m's materials. */
typedef struct window_request {
    const plan *p;
    const grid *g;
    const medium_map *m;
    const tables *const *mt;
    int first, n, field;
    double sigmas;
    int collect_every, moving;
} window_request;

/* The shape for request q; spans: [q->n] each source's columns (may be NULL). */
int window_shape_of(window_shape *ws, window_span *spans, const window_request *q, smx_error *err);

/* A field's per-spot windows: the host looks at the fronts every
 * WINDOW_SPOT_COLLECT steps at most (a smaller front margin than the
 * backend's own interval), and a batch's windows start with a band of
 * WINDOW_SPOT_BAND_MM between back and front (window_spot_band's rows), far
 * fewer than window_shape_of's bound: a spot's rows spread over at most 6.5
 * mm on the benchmark field (13 rows at 0.5 mm; docs/model.md, "Windows"),
 * and every row of the window costs memory that would hold more spots at
 * once (on an H200, a band of 16 rows at 0.5 mm instead of 32 put 39 spots
 * at once instead of 31 and took the per-spot steps from 5.64-5.74 s to
 * 5.35-5.37 s; 8 rows made the first batch outgrow it). A batch whose rows
 * outgrow its band runs again on twice the band (window.overflow), up to
 * that bound: a window holding every cell the beam reaches gives the same
 * dose bit for bit, whatever its size. */
#define WINDOW_SPOT_COLLECT 16
#define WINDOW_SPOT_BAND_MM 8.0

/* The rows of WINDOW_SPOT_BAND_MM on g's rows, at least 8. */
int window_spot_band(const grid *g);

/* The rows of a window of shape ws whose band is `band` rows (its margins
 * kept), never more than ws->nz (the bound). */
int window_rows_for_band(const window_shape *ws, int band);

/* Standard deviations of a Gaussian at which it falls to `fraction` of its
 * peak, plus one for the pencil's tails beyond a Gaussian; the whole grid
 * (a large number) for fraction 0. */
double window_sigmas(double fraction);

/* One window: where it lies on the run's grid now, its own grid and medium
 * map (which the backend's tables point to), and the dose of the rows that
 * have left it. */
typedef struct window {
    const grid *g; /* the run's grid */
    const medium_map *full; /* the run's map (NULL or one medium: no cells) */
    window_shape shape;
    grid wg; /* per slot k, columns x0[k] .. x0[k] + nx - 1 of g at columns k nx .. (k + 1) nx
                - 1, rows 0 .. nz - 1 (z from the entrance) */
    medium_map mm; /* g's media; the cells of the rows and columns the window holds */
    int *x0; /* [slots] each slot's first column on g */
    int z0; /* the window's first row on g (every slot's) */
    int64_t width; /* slots * nx: the state's columns */
    double *left; /* [g->dose_planes][g->nz][width] MeV: rows below z0, the dose of the rows
                     that have left (the rest is stale: never read) */
    double *rows_out; /* [g->dose_planes][shape.nz][width] scratch for a shift */
    int kept_lo, kept_hi; /* dose planes the backend keeps on the device (a field's halo
                             bands, summed there: backend_ops.halo_keep), neither written by
                             its shift nor copied into left; none where kept_lo > kept_hi */
    int shifts; /* moves so far (this source) */
    int overflow; /* the last window_follow failed: the beam's rows outgrew the window */
    int band; /* the most rows between back and front seen at a look (this source) */
} window;

int window_init(window *w, const grid *g, const medium_map *full, const window_shape *ws,
                smx_error *err);
void window_free(window *w);
/* Puts the window at the entrance, its columns covering span (centred on it
 * where the grid allows), for a new source: no dose yet. */
void window_place(window *w, window_span span);
/* The same for a new batch of sources: window_reset, then each slot k that
 * takes a source window_place_slot (a slot without one holds nothing). */
void window_reset(window *w);
void window_place_slot(window *w, int k, window_span span);
/* After a collect (every enqueued step done): front and back, the rows (on the
 * window) holding weight after the last step. Moves the window when the
 * front nears its far end; fails when the beam's band of rows no longer fits
 * (the rows between back and front with both margins). */
int window_follow(window *w, const backend_ops *be, void *ctx, int front, int back, smx_error *err);
/* Slot k's dose on the run's grid ([g->nz][g->nx], MeV, zero outside the
 * slot's columns): the rows that have left and the window's own (win:
 * [shape.nz][width], the backend's download). */
void window_dose(const window *w, int k, const double *win, double *dose);
/* Plane q of window_dose alone (dose: all the planes; the others untouched). */
void window_dose_plane(const window *w, int k, const double *win, int q, double *dose);
/* Slot k's rows of dose plane q, where window_dose takes them from: row[z]
 * for each of the grid's rows (its columns x0[k] .. x0[k] + shape.nx - 1),
 * NULL where the slot holds none. */
void window_plane_rows(const window *w, int k, const double *win, int q, const double **row);
/* Slot k's source on the window (wpsi: the window's cells, zero in the
 * slot's) from src, filled on the run's grid's row 0 alone (grid_row0's
 * layout, as source_fill writes it, with its boxes); its boxes in window
 * coordinates are joined into wocc ([ne], empty boxes on the first slot's
 * call: first = 1). */
void window_source(const window *w, int k, int first, const source_buf *src, float *wpsi,
                   grid_box *wocc);

#endif
