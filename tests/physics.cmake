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
set_tests_properties(conservation PROPERTIES LABELS "unit" COST 10 WORKING_DIRECTORY "${SMX_ROOT}")
# COST (tests/cases.cmake): the longest tests start first on a fresh clone.
# The out-of-plane detour against Highland's theta_0 and PSTAR's projected range.
add_test(out_of_plane "${SMX_BUILD}/tests/test_out_of_plane")
set_tests_properties(out_of_plane PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(range "${SMX_BUILD}/tests/test_range")
set_tests_properties(range PROPERTIES LABELS "regression" COST 40 WORKING_DIRECTORY "${SMX_ROOT}")
# R80 against PSTAR at 70-230 MeV on the 0.5 mm and the 1 mm grid, side by side;
# 200 and 230 MeV on 0.5 mm take the longest (each step holds 500-700 energy bins).
add_test(range_05 "${SMX_BUILD}/tests/test_range" grid 0.5 70,100,150)
set_tests_properties(range_05 PROPERTIES LABELS "regression" COST 30 WORKING_DIRECTORY "${SMX_ROOT}")
add_test(range_05_high "${SMX_BUILD}/tests/test_range" grid 0.5 200,230)
set_tests_properties(range_05_high PROPERTIES LABELS "regression" COST 100 WORKING_DIRECTORY "${SMX_ROOT}")
add_test(range_10 "${SMX_BUILD}/tests/test_range" grid 1.0 70,100,150,200,230)
set_tests_properties(range_10 PROPERTIES LABELS "regression" COST 40 WORKING_DIRECTORY "${SMX_ROOT}")
add_test(depth_dose "${SMX_BUILD}/tests/test_depth_dose")
set_tests_properties(depth_dose PROPERTIES LABELS "regression" COST 90 WORKING_DIRECTORY "${SMX_ROOT}")
smx_cases(dose_grid steps_100 10 steps_100)
smx_cases(dose_grid rows_200 14 rows_200)
smx_cases(field linear 7 linear sobp)
smx_cases(field per_spot 20 per_spot)
smx_cases(lateral highland 6 highland_70 highland_150)
smx_cases(lateral highland_230 45 highland_230)
smx_cases(lateral fermi_rossi 7 fermi_rossi)
smx_cases(lateral scattering_off 32 scattering_off)
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

smx_cases(window whole_grid 12 whole_grid moments)
smx_cases(window rows 16 narrow_rows band_rows kept_planes rows_that_fit rows_sum class_rows class_rows_media class_rows_media_moments)
smx_cases(window slots 24 slots slots_1mm moments_slots)
# The slots' sides on 0.25 mm cells: what window_slots checks on 0.5 and 1 mm
# cells, at 64 times the 1 mm case's work (about a minute): `make test-long`.
smx_cases(window slots_quarter 60 slots_quarter)
set_tests_properties(window_slots_quarter PROPERTIES LABELS "regression;long")

add_test(moments "${SMX_BUILD}/tests/test_moments")
set_tests_properties(moments PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")

add_test(grid_convergence "${SMX_BUILD}/tests/test_grid_convergence")
set_tests_properties(grid_convergence PROPERTIES LABELS "regression" COST 35 WORKING_DIRECTORY "${SMX_ROOT}")

# transport.nuclear: halo against Gottschalk's halo radius, Bortfeld's peak-to-entrance
# and a Monte Carlo code's energy deposit and halo share.
smx_cases(halo pencil_150 7 kernel pencil_150)
smx_cases(halo pencil_230 18 pencil_230)
# output.let and output.dose_to_water against PSTAR, Wilkens & Oelfke's LET model and
# PSTAR's water-to-bone stopping-power ratio; the per-spot LETd x dose rows.
smx_cases(let along_depth 7 along_depth)
smx_cases(let per_spot 2 dose_to_water per_spot)
smx_cases(let per_spot_fine 8 per_spot_fine)
# Robust scenarios: (0, 0) is the nominal bit for bit, a one-cell shift moves
# the dose one column, R80 scales with the range error, every density is
# divided, and each scenario's per-spot rows sum to its total.
smx_cases(scenarios nominal 6 zero_is_nominal every_density)
smx_cases(scenarios shift 7 shift_one_cell)
smx_cases(scenarios range 6 range_scaling)
smx_cases(scenarios rows_sum 9 rows_sum)
# Reports, not requirements (label `report`, outside the regression suite): the
# uniform-in-energy grid's numerical straggling (docs/physics.md).
add_test(range_report "${SMX_BUILD}/tests/test_range" report)
set_tests_properties(range_report PROPERTIES LABELS "report" WORKING_DIRECTORY "${SMX_ROOT}")
# The grids' core widths and, off 0.5 mm rows, fall-off and peak/entrance (known defects).
add_test(grid_convergence_report "${SMX_BUILD}/tests/test_grid_convergence" report)
set_tests_properties(grid_convergence_report PROPERTIES LABELS "report" WORKING_DIRECTORY "${SMX_ROOT}")
