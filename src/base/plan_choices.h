/* The values of the plan's choice keys (grid.angle.mode, transport.streaming_scheme,
 * backend.angular, ...), as the plan (input/plan.h) holds them in its int fields.
 * Every layer compares against them, the backends included, which read no
 * plan: so they sit here, below the plan that parses them. */
#ifndef SMX_PLAN_CHOICES_H
#define SMX_PLAN_CHOICES_H

#define PLAN_ORDER_MAX 3 /* operators of transport.operator_order */

enum energy_grid_kind { EGRID_RANGE = 0, EGRID_UNIFORM = 1 };
enum angle_mode { ANGLE_WINDOW = 0, ANGLE_FULL = 1 };
/* grid.angle.spacing: equal bins, or bins that widen away from the window's
 * centre as sqrt(1 + (theta / theta_c)^2) (physics/angle_grid.h). */
enum angle_spacing { ANGLE_UNIFORM = 0, ANGLE_BEAM = 1 };
/* transport.nuclear: none; the removed energy's fixed local share deposited
 * in the cell; or its partition, with the secondary protons' share spread by
 * the halo kernel (physics/nuclear_halo.h). */
enum nuclear_model { NUCLEAR_OFF = 0, NUCLEAR_LOCAL = 1, NUCLEAR_HALO = 2 };
enum device_kind { DEVICE_AUTO = 0, DEVICE_CPU = 1, DEVICE_CUDA = 2 };
enum op_id { OP_THETA = 0, OP_ENERGY = 1, OP_STREAM = 2 };
enum streaming_scheme { STREAM_BILINEAR = 0, STREAM_SHIFT = 1, STREAM_MOMENTS = 2 };
enum window_mode { WINDOW_MOVING = 0, WINDOW_GRID = 1 };
enum scattering_power_model { SCAT_HIGHLAND = 0, SCAT_FERMI_ROSSI = 1 };
enum variant_energy { VAR_E_AUTO = 0, VAR_E_GATHER = 1, VAR_E_SCATTER = 2 };
enum variant_angular { VAR_A_AUTO = 0, VAR_A_DIRECT = 1, VAR_A_FFT = 2 };
enum variant_stream {
    VAR_S_AUTO = 0,
    VAR_S_GATHER = 1,
    VAR_S_ATOMIC = 2,
    VAR_S_WARP = 3,
    VAR_S_FALLBACK = 4
};
enum early_exit_mode { EARLY_EXIT_OFF = 0, EARLY_EXIT_FIXED = 1, EARLY_EXIT_ADAPTIVE = 2 };
/* output.beyond_grid: what a beam reaching beyond the grid does to the exit status. */
enum beyond_grid_mode { BEYOND_GRID_WARN = 0, BEYOND_GRID_FAIL = 1 };
/* output.per_spot_precision: how the per-spot rows' values are stored
 * (io/output_spots.c): 16-bit integers times a scale per row, or float32. */
enum per_spot_precision { PER_SPOT_UINT16 = 0, PER_SPOT_FLOAT32 = 1 };
/* scenarios.combine: how the range errors and shifts make scenarios (plan_scenarios.c). */
enum scenario_combine { SCENARIO_SEPARATE = 0, SCENARIO_ALL = 1, SCENARIO_PAIRS = 2 };

#endif
