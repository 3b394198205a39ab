# Angular scattering kernels (A_theta): moments, conservation, grid limits.
add_test(angular "${SMX_BUILD}/tests/test_angular")
set_tests_properties(angular PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
# cuFFT, loaded at run time for the CUDA backend's FFT variant (cuda/cufft_loader.cu):
# a library that is not there, SMX2D_CUFFT_LIBRARY=none, and the installed one
# (skipped where there is none). No GPU needed.
foreach(mode missing none present)
  add_test(cufft_loader_${mode} "${SMX_BUILD}/tests/test_cufft_loader" ${mode})
  set_tests_properties(cufft_loader_${mode} PROPERTIES LABELS "unit" SKIP_RETURN_CODE 77
                       WORKING_DIRECTORY "${SMX_ROOT}")
endforeach()
# The direction bins a plan that leaves grid.angle out gets from its beam.
add_test(angle_grid "${SMX_BUILD}/tests/test_angle_grid")
set_tests_properties(angle_grid PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
# grid.angle.spacing: beam: the per-source kernels' moments, conservation, and a
# 150 MeV pencil's core and rms against Fermi-Eyges under shift and moments;
# `report` (outside the regression suite) prints docs/model.md's table of
# uniform against beam spacing at 70 and 150 MeV, 0.5 and 1 mm.
add_test(angle_spacing "${SMX_BUILD}/tests/test_angle_spacing")
set_tests_properties(angle_spacing PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(angle_spacing_report "${SMX_BUILD}/tests/test_angle_spacing" report)
set_tests_properties(angle_spacing_report PROPERTIES LABELS "report" WORKING_DIRECTORY "${SMX_ROOT}")
