# The run's summary and what the grid cuts off: figures of the dose (not the
# energy per cell) on synthetic maps, a spread-out peak, the dry run's reach;
# then the binary on small plans whose beam leaves the grid (run, dry run, /summary).
add_test(summary "${SMX_BUILD}/tests/test_summary")
set_tests_properties(summary PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
foreach(case beyond_depth beyond_side inside media)
  add_test(summary_${case} /bin/sh "${SMX_ROOT}/tests/summary.sh" ${case} "${SMX_BUILD}")
  set_tests_properties(summary_${case} PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
endforeach()
# /summary and dose_Gy's attributes with media, smx2d-plot's markers on its curve
# (the build's Python, SMX_PYTHON, with numpy, h5py and matplotlib; skipped without them).
add_test(summary_file /bin/sh "${SMX_ROOT}/tests/post.sh" test_summary_file.py "${SMX_BUILD}")
set_tests_properties(summary_file PROPERTIES LABELS "unit" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}"
                     ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
