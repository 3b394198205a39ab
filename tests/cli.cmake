# The binary as a user runs it: exit codes, messages, dry run, overwrite policy,
# Ctrl-C and SIGTERM in every phase, partial files of killed runs, write errors
# and a full disk, the quickstart end to end, and the relocatable dist tree.
foreach(case usage bad_input dry_run grid_warnings overwrite interrupt stale disk_full dist bench no_cufft)
  add_test(cli_${case} /bin/sh "${SMX_ROOT}/tests/cli.sh" ${case} "${SMX_BUILD}")
  set_tests_properties(cli_${case} PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
endforeach()
add_test(cli_quickstart /bin/sh "${SMX_ROOT}/tests/cli.sh" quickstart "${SMX_BUILD}")
set_tests_properties(cli_quickstart PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
# The dose-influence matrix of a field, read back with h5py and scipy.sparse (skips without them).
add_test(cli_per_spot /bin/sh "${SMX_ROOT}/tests/cli.sh" per_spot "${SMX_BUILD}")
set_tests_properties(cli_per_spot PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}" SKIP_RETURN_CODE 77)
# A field's robust scenarios, read back with h5py and scipy.sparse (skips without them).
add_test(cli_scenarios /bin/sh "${SMX_ROOT}/tests/cli.sh" scenarios "${SMX_BUILD}")
set_tests_properties(cli_scenarios PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}" SKIP_RETURN_CODE 77)
# The XDMF sidecar opened and rendered by ParaView (skips without pvpython).
add_test(cli_paraview /bin/sh "${SMX_ROOT}/tests/cli.sh" paraview "${SMX_BUILD}")
set_tests_properties(cli_paraview PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}"
                     SKIP_RETURN_CODE 77)
# Without cuFFT on a GPU: the direct kernel, one warning; fft refused (skips without a GPU).
add_test(cli_gpu_no_cufft /bin/sh "${SMX_ROOT}/tests/cli.sh" gpu_no_cufft "${SMX_BUILD}")
set_tests_properties(cli_gpu_no_cufft PROPERTIES LABELS "gpu" WORKING_DIRECTORY "${SMX_ROOT}"
                     SKIP_RETURN_CODE 77)
