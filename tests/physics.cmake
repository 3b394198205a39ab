# Physics: operators against their definitions, conservation, range, lateral spread.
add_test(operators "${SMX_BUILD}/tests/test_operators")
set_tests_properties(operators PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
# The step log: ETA and ms/step from the steps alone, snapshot writing timed apart.
add_test(step_log "${SMX_BUILD}/tests/test_step_log")
set_tests_properties(step_log PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
# No carriage-return redraws in a file or an MPI job's output (script(1) gives the pty).
add_test(step_log_terminal /bin/sh "${SMX_ROOT}/tests/log_terminal.sh" "${SMX_BUILD}")
set_tests_properties(step_log_terminal PROPERTIES LABELS "unit" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}")
# Conservation: the weight and energy identities of docs/physics.md at every step
# (exact identities of the code, no physics reference: unit).
add_test(conservation "${SMX_BUILD}/tests/test_conservation")
set_tests_properties(conservation PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
# The out-of-plane detour against Highland's theta_0 and PSTAR's projected range.
add_test(out_of_plane "${SMX_BUILD}/tests/test_out_of_plane")
set_tests_properties(out_of_plane PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(range "${SMX_BUILD}/tests/test_range")
set_tests_properties(range PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
# R80 against PSTAR at 70-230 MeV on the 0.5 mm and the 1 mm grid, side by side;
# 200 and 230 MeV on 0.5 mm take the longest (each step holds 500-700 energy bins).
add_test(range_05 "${SMX_BUILD}/tests/test_range" grid 0.5 70,100,150)
set_tests_properties(range_05 PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(range_05_high "${SMX_BUILD}/tests/test_range" grid 0.5 200,230)
set_tests_properties(range_05_high PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(range_10 "${SMX_BUILD}/tests/test_range" grid 1.0 70,100,150,200,230)
set_tests_properties(range_10 PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(depth_dose "${SMX_BUILD}/tests/test_depth_dose")
set_tests_properties(depth_dose PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(dose_grid "${SMX_BUILD}/tests/test_dose_grid")
set_tests_properties(dose_grid PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(field "${SMX_BUILD}/tests/test_field")
set_tests_properties(field PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(lateral "${SMX_BUILD}/tests/test_lateral")
set_tests_properties(lateral PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
# CUDA backend against the CPU reference; exits 77 (skipped) without a GPU.
add_test(gpu "${SMX_BUILD}/tests/test_gpu")
set_tests_properties(gpu PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}")
add_test(gpu_stress "${SMX_BUILD}/tests/test_gpu" stress)
set_tests_properties(gpu_stress PROPERTIES LABELS "gpu" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}")
# The fused CUDA step's tiling, checked on the host: any CUDA build, no GPU needed;
# exits 77 (skipped) in a build without CUDA.
add_test(tiling "${SMX_BUILD}/tests/test_tiling")
set_tests_properties(tiling PROPERTIES LABELS "unit" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}")
# The whole-bin energy choice of media other than the reference, as a sequence.
add_test(dither "${SMX_BUILD}/tests/test_dither")
set_tests_properties(dither PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")

add_test(window "${SMX_BUILD}/tests/test_window")
set_tests_properties(window PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")

add_test(moments "${SMX_BUILD}/tests/test_moments")
set_tests_properties(moments PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")

add_test(grid_convergence "${SMX_BUILD}/tests/test_grid_convergence")
set_tests_properties(grid_convergence PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")

# transport.nuclear: halo against Gottschalk's halo radius, Bortfeld's peak-to-entrance
# and a Monte Carlo code's energy deposit and halo share.
add_test(halo "${SMX_BUILD}/tests/test_halo")
set_tests_properties(halo PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
# output.let and output.dose_to_water against PSTAR, Wilkens & Oelfke's LET model and
# PSTAR's water-to-bone stopping-power ratio; the per-spot LETd x dose rows.
add_test(let "${SMX_BUILD}/tests/test_let")
set_tests_properties(let PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
# Robust scenarios: (0, 0) is the nominal bit for bit, a one-cell shift moves
# the dose one column, R80 scales with the range error, every density is
# divided, and each scenario's per-spot rows sum to its total.
add_test(scenarios "${SMX_BUILD}/tests/test_scenarios")
set_tests_properties(scenarios PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
# Reports, not requirements (label `report`, outside the regression suite): the
# uniform-in-energy grid's numerical straggling (docs/physics.md).
add_test(range_report "${SMX_BUILD}/tests/test_range" report)
set_tests_properties(range_report PROPERTIES LABELS "report" WORKING_DIRECTORY "${SMX_ROOT}")
# The grids' core widths and, off 0.5 mm rows, fall-off and peak/entrance (known defects).
add_test(grid_convergence_report "${SMX_BUILD}/tests/test_grid_convergence" report)
set_tests_properties(grid_convergence_report PROPERTIES LABELS "report" WORKING_DIRECTORY "${SMX_ROOT}")
