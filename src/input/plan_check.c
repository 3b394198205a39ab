/* What single values cannot show: required keys that are missing, and the
 * rules that tie keys together (energy grid, beam inside the grid, ...). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "input/plan_access.h"
#include "input/plan_internal.h"
#include "numerics/deposit_path.h"

static int given(const plan *p, int ki)
{
    return p->loc[ki].line > 0 || p->loc[ki].from_cli;
}

int plan_check_required(loader *L)
{
    for (size_t i = 0; i < plan_key_count; i++) {
        const plan_key *k = &plan_keys[i];
        if (k->default_value || given(L->p, (int)i))
            continue;
        /* A spot file gives every spot its energy. */
        if (!strcmp(k->path, "beam.energy_MeV") && L->p->spots_file[0])
            continue;
        char what[600];
        if (k->units[0])
            snprintf(what, sizeof what, "%s, %s", k->doc, k->units);
        else
            snprintf(what, sizeof what, "%s", k->doc);
        /* Point at the nearest enclosing section the file does have. */
        const section_mark *best = NULL;
        size_t best_len = 0;
        for (int s = 0; s < L->nsec; s++) {
            size_t len = strlen(L->sec[s].path);
            if (!strncmp(k->path, L->sec[s].path, len) && k->path[len] == '.' && len > best_len) {
                best = &L->sec[s];
                best_len = len;
            }
        }
        if (best)
            return smx_fail(L->err, SMX_EXIT_INPUT, "%s:%d:%d: missing required key '%s' (%s)",
                            L->file, best->line, best->col, k->path, what);
        return smx_fail(L->err, SMX_EXIT_INPUT, "%s: missing required key '%s' (%s)", L->file,
                        k->path, what);
    }
    return 0;
}

static const char *num(double v, char *buf)
{
    plan_format_real(v, buf, 40);
    return buf;
}

/* An axis of the domain as a shape's range is checked against: its name,
 * its extent [lo, hi] mm and its cells (from lo). */
typedef struct domain_axis {
    const char *name;
    double lo, hi;
    plan_axis cells;
} domain_axis;

/* A shape's range on one axis: inside the domain [lo, hi] (to rounding) and
 * holding at least one cell centre. */
static int check_shape_axis(const plan *p, smx_error *err, int i, const char *field,
                            const double r[2], const domain_axis *ax)
{
    const char *axis = ax->name;
    const double lo = ax->lo, hi = ax->hi, d = ax->cells.d;
    char a[40], b[40], c[40], e[40];
    double slack = 1e-9 * (hi - lo);
    if (r[0] < lo - slack || r[1] > hi + slack)
        return plan_fail_at_shape(
            p, err, i, field,
            "[%s, %s] mm reaches outside the domain, %s = %s to %s mm; expected a range "
            "inside it",
            num(r[0], a), num(r[1], b), axis, num(lo, c), num(hi, e));
    int first, last;
    if (!plan_axis_cells(&ax->cells, r[0], r[1], &first, &last))
        return plan_fail_at_shape(
            p, err, i, field,
            "[%s, %s] mm holds no cell centre (cells of %s mm; centres at %s + %s (k + 0.5)); "
            "expected a range that covers at least one cell centre",
            num(r[0], a), num(r[1], b), num(d, c), num(lo, e), num(d, c));
    return 0;
}

static int check_geometry(const plan *p, smx_error *err)
{
    int map = plan_key_index("geometry.map_file");
    if (p->map_file[0] && p->ct_file[0]) {
        const plan_loc *m = &p->loc[map];
        char where[64];
        if (m->line > 0)
            snprintf(where, sizeof where, " (given at %d:%d)", m->line, m->col);
        else
            snprintf(where, sizeof where, "%s", m->from_cli ? " (given by --set)" : "");
        return plan_fail_at(
            p, err, "geometry.ct.file",
            "a CT image and geometry.map_file%s both give every cell its material; expected one "
            "of them (shapes may go on top of either)",
            where);
    }
    if (p->ct_file[0] && !p->ct_calibration[0])
        return plan_fail_at(
            p, err, "geometry.ct.file",
            "a CT image needs geometry.ct.calibration; expected a calibration CSV next to it, "
            "e.g. calibration: ct_schneider2000.csv");
    if (p->ct_calibration[0] && !p->ct_file[0])
        return plan_fail_at(
            p, err, "geometry.ct.calibration",
            "a calibration without geometry.ct.file has nothing to calibrate; expected "
            "geometry.ct.file too, or no calibration");
    double half = 0.5 * p->nx * p->dx_mm;
    const domain_axis z = { "z", 0.0, p->nz * p->dz_mm, { 0.0, p->dz_mm, p->nz } };
    const domain_axis x = { "x", -half, half, { -half, p->dx_mm, p->nx } };
    for (int i = 0; i < p->n_shapes; i++) {
        const plan_shape *s = &p->shapes[i];
        if (check_shape_axis(p, err, i, "z_mm", s->z_mm, &z) ||
            (s->has_x && check_shape_axis(p, err, i, "x_mm", s->x_mm, &x)))
            return SMX_EXIT_INPUT;
    }
    return 0;
}

/* scenarios.*: pairs need lists of one length, and every shift must keep
 * every spot in the domain (the nominal's own rule, plan_spot_check), so that
 * no scenario fails after the others have run. */
static int check_scenarios(const plan *p, smx_error *err)
{
    char a[40], b[40], c[40], d[40];
    if (p->scenario_combine == SCENARIO_PAIRS &&
        p->n_scenario_range_percent != p->n_scenario_shift_mm)
        return plan_fail_at(p, err,
                            p->n_scenario_range_percent < p->n_scenario_shift_mm
                                ? "scenarios.shift_mm"
                                : "scenarios.range_error_percent",
                            "combine: pairs takes the i-th range error with the i-th shift, but "
                            "range_error_percent has %d entries and shift_mm %d; expected lists of "
                            "equal length",
                            p->n_scenario_range_percent, p->n_scenario_shift_mm);
    const double half = 0.5 * p->nx * p->dx_mm;
    for (int j = 0; j < p->n_scenario_shift_mm; j++)
        for (int i = 0; i < plan_spot_count(p); i++) {
            const plan_spot s = plan_spot_at(p, i);
            const double x = s.x_mm + p->scenario_shift_mm[j];
            if (fabs(x) <= half)
                continue;
            char spot[PLAN_PATH_MAX + 100];
            if (s.line == 0)
                snprintf(spot, sizeof spot, "the beam (beam.x_mm %s)", num(s.x_mm, a));
            else
                snprintf(spot, sizeof spot, "the spot at %s:%d (x_mm %s)", p->spots_path, s.line,
                         num(s.x_mm, a));
            return plan_fail_at(p, err, "scenarios.shift_mm",
                                "entry %d, %s mm, moves %s to x = %s mm, outside the domain (|x| "
                                "<= %s mm); expected shifts that keep every spot inside the grid",
                                j, num(p->scenario_shift_mm[j], b), spot, num(x, c), num(half, d));
        }
    return 0;
}

int plan_check_consistency(const plan *p, smx_error *err)
{
    char a[40], b[40], c[40];
    int bins = plan_key_index("grid.energy.n_bins");

    if (p->energy_kind == EGRID_UNIFORM && !given(p, bins))
        return plan_fail_at(p, err, "grid.energy.kind",
                            "uniform grids need grid.energy.n_bins; expected n_bins (an integer "
                            "in [1, 100000]) next to kind: uniform");
    if (p->energy_kind == EGRID_RANGE && given(p, bins))
        return plan_fail_at(p, err, "grid.energy.n_bins",
                            "range grids derive the bin count from transport.step_mm; expected "
                            "no n_bins, or kind: uniform");
    if (!(p->E_max_MeV > p->E_min_MeV))
        return plan_fail_at(p, err, "grid.energy.E_max_MeV",
                            "%s is not above grid.energy.E_min_MeV = %s; expected E_max > E_min",
                            num(p->E_max_MeV, a), num(p->E_min_MeV, b));
    if (p->E_cutoff_MeV < p->E_min_MeV)
        return plan_fail_at(p, err, "grid.energy.E_cutoff_MeV",
                            "%s is below grid.energy.E_min_MeV = %s; expected a cutoff >= E_min",
                            num(p->E_cutoff_MeV, a), num(p->E_min_MeV, b));
    if (!(p->E_cutoff_MeV < p->E_max_MeV))
        return plan_fail_at(p, err, "grid.energy.E_cutoff_MeV",
                            "%s is not below grid.energy.E_max_MeV = %s; expected a cutoff < E_max",
                            num(p->E_cutoff_MeV, a), num(p->E_max_MeV, b));
    /* The deposit is spread over the cells a step crosses (deposit_path.h),
     * at most SMX_PATH_MAX_MOVE of them along either axis. */
    double cell = p->dz_mm < p->dx_mm ? p->dz_mm : p->dx_mm;
    if (p->step_mm > SMX_PATH_MAX_MOVE * cell)
        return plan_fail_at(p, err, "transport.step_mm",
                            "%s mm crosses more than %d cells of grid.space.%s = %s mm; expected "
                            "step_mm <= %s mm (%d x min(dz_mm, dx_mm))",
                            num(p->step_mm, a), SMX_PATH_MAX_MOVE,
                            p->dz_mm < p->dx_mm ? "dz_mm" : "dx_mm", num(cell, b),
                            num(SMX_PATH_MAX_MOVE * cell, c), SMX_PATH_MAX_MOVE);
    if (p->angle_spacing == ANGLE_BEAM && p->angle_mode == ANGLE_FULL)
        return plan_fail_at(p, err, "grid.angle.spacing",
                            "beam is for a window about the beam's direction (its bins are "
                            "finest at grid.angle.centre_deg and widen towards the edges); "
                            "expected uniform with grid.angle.mode: full, or mode: window");
    if (p->angle_spacing == ANGLE_BEAM && !p->scattering)
        return plan_fail_at(p, err, "grid.angle.spacing",
                            "beam sizes the direction bins from the beam's scattering (theta_0 "
                            "at half its path), and transport.scattering is false; expected "
                            "uniform");
    if (p->per_spot_let && !(p->per_spot_dose && p->let))
        return plan_fail_at(p, err, "output.per_spot_let",
                            "true needs output.per_spot_dose: true and output.let: true (its rows "
                            "are each spot's LETd times its dose row); expected both, or false");
    for (int i = 0; i < plan_spot_count(p); i++) {
        plan_spot s = plan_spot_at(p, i);
        if (plan_spot_check(p, &s, err))
            return SMX_EXIT_INPUT;
    }
    if (check_scenarios(p, err))
        return SMX_EXIT_INPUT;
    return check_geometry(p, err);
}

/* The grid must hold a spot's energy spectrum: the source keeps only the part
 * below the grid's top (renormalised), so a lower E_max would shift the beam's
 * mean energy and range without a word. Beyond PLAN_SPECTRUM_SIGMAS spreads
 * lies 3e-5 of a Gaussian: that much may go. */
static int check_spectrum_top(const plan *p, const plan_spot *s, smx_error *err)
{
    double top = plan_spectrum_top_MeV(s);
    /* 1e-9: the sum's rounding (99.5 + 4 x 0.8 is not 102.7 in binary), so
     * that the value the message suggests, printed to 10 digits, passes. */
    if (!(s->energy_sigma_MeV > 0.0) || top <= p->E_max_MeV * (1.0 + 1e-9))
        return 0;
    char a[40], b[40], c[40], spot[PLAN_PATH_MAX + 200];
    double cut = 0.5 * erfc((p->E_max_MeV - s->energy_MeV) / (s->energy_sigma_MeV * M_SQRT2));
    if (s->line == 0)
        snprintf(spot, sizeof spot,
                 "the beam's energy spectrum: beam.energy_MeV %s + %g x beam.energy_sigma_MeV %s",
                 num(s->energy_MeV, a), PLAN_SPECTRUM_SIGMAS, num(s->energy_sigma_MeV, b));
    else
        snprintf(spot, sizeof spot,
                 "the energy spectrum of the spot at %s:%d (beam.spots_file): energy_MeV %s + %g x "
                 "energy_sigma_MeV %s",
                 p->spots_path, s->line, num(s->energy_MeV, a), PLAN_SPECTRUM_SIGMAS,
                 num(s->energy_sigma_MeV, b));
    return plan_fail_at(
        p, err, "grid.energy.E_max_MeV",
        "%s MeV cuts off the top of %s = %.10g MeV (%.2g %% of its protons lie above %s MeV and "
        "would be dropped); expected E_max_MeV >= %.10g, e.g. %.10g as the grid takes when E_max_MeV "
        "is left out, or a smaller spread",
        num(p->E_max_MeV, c), spot, top, 100.0 * cut, c, top, ceil(top));
}

int plan_spot_check(const plan *p, const plan_spot *s, smx_error *err)
{
    char a[40], b[40], c[40], d[40], e[40];
    if (s->energy_MeV > p->E_max_MeV || s->energy_MeV < p->E_cutoff_MeV) {
        int above = s->energy_MeV > p->E_max_MeV;
        return plan_spot_fail(p, s, "energy_MeV", err,
                              "%s is %s grid.energy.%s = %s; expected a beam energy in "
                              "[E_cutoff, E_max] = [%s, %s] MeV",
                              num(s->energy_MeV, a), above ? "above" : "below",
                              above ? "E_max_MeV" : "E_cutoff_MeV",
                              num(above ? p->E_max_MeV : p->E_cutoff_MeV, b),
                              num(p->E_cutoff_MeV, c), num(p->E_max_MeV, d));
    }
    if (check_spectrum_top(p, s, err))
        return SMX_EXIT_INPUT;
    if (s->correlation != 0.0 && !(s->sigma_x_mm > 0.0 && s->divergence_mrad > 0.0))
        return plan_spot_fail(p, s, "correlation", err,
                              "a position-angle correlation needs both beam.sigma_x_mm and "
                              "beam.divergence_mrad greater than 0");
    double half = 0.5 * p->nx * p->dx_mm;
    if (fabs(s->x_mm) > half)
        return plan_spot_fail(p, s, "x_mm", err,
                              "%s is outside the domain, x = -%s to %s mm (grid.space.nx %d x "
                              "dx_mm %s); expected |x_mm| <= %s",
                              num(s->x_mm, a), num(half, b), num(half, c), p->nx, num(p->dx_mm, d),
                              num(half, b));
    if (p->angle_mode == ANGLE_WINDOW) {
        /* Compare on the circle: a window centred at 350 deg contains 5 deg. */
        double off = fmod(s->direction_deg - p->angle_centre_deg, 360.0);
        if (off > 180.0)
            off -= 360.0;
        if (off < -180.0)
            off += 360.0;
        if (fabs(off) > p->angle_half_width_deg)
            return plan_spot_fail(p, s, "direction_deg", err,
                                  "%s is outside the angular window %s to %s deg "
                                  "(grid.angle.centre_deg %s +- half_width_deg %s); expected a "
                                  "direction inside the window, or grid.angle.mode: full",
                                  num(s->direction_deg, a),
                                  num(p->angle_centre_deg - p->angle_half_width_deg, b),
                                  num(p->angle_centre_deg + p->angle_half_width_deg, c),
                                  num(p->angle_centre_deg, d), num(p->angle_half_width_deg, e));
    }
    return 0;
}
