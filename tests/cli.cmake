# The binary as a user runs it: exit codes, messages, dry run, overwrite policy,
# Ctrl-C and SIGTERM in every phase, partial files of killed runs, write errors
# and a full disk, the relocatable dist tree. tests/cli.sh runs Python with the
# build's interpreter (SMX_PYTHON, tests/python.sh) and skips (77), naming the
# module, where it lacks one a case needs.
foreach(case usage bad_input dry_run grid_warnings overwrite interrupt stale dist bench no_cufft)
  add_test(cli_${case} /bin/sh "${SMX_ROOT}/tests/cli.sh" ${case} "${SMX_BUILD}")
  set_tests_properties(cli_${case} PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}"
                       SKIP_RETURN_CODE 77 ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
endforeach()
# A file-size limit and a full disk (a tmpfs in a mount namespace of its own:
# skips after the file-size part where the machine allows none).
add_test(cli_disk_full /bin/sh "${SMX_ROOT}/tests/cli.sh" disk_full "${SMX_BUILD}")
set_tests_properties(cli_disk_full PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}" SKIP_RETURN_CODE 77)
# The quick start end to end: its result file and sidecar, and its R80 against
# PSTAR's projected range.
add_test(cli_quickstart /bin/sh "${SMX_ROOT}/tests/cli.sh" quickstart "${SMX_BUILD}")
set_tests_properties(cli_quickstart PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
# The dose-influence matrix of a field, read back with h5py and scipy.sparse.
add_test(cli_per_spot /bin/sh "${SMX_ROOT}/tests/cli.sh" per_spot "${SMX_BUILD}")
set_tests_properties(cli_per_spot PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}" SKIP_RETURN_CODE 77
                     ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
# output.per_spot_precision: the uint16 rows against the float32 rows, and the reader of both.
add_test(cli_per_spot_precision /bin/sh "${SMX_ROOT}/tests/cli.sh" per_spot_precision "${SMX_BUILD}")
set_tests_properties(cli_per_spot_precision PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}"
                     SKIP_RETURN_CODE 77 ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
# A field's robust scenarios, read back with h5py and scipy.sparse.
add_test(cli_scenarios /bin/sh "${SMX_ROOT}/tests/cli.sh" scenarios "${SMX_BUILD}")
set_tests_properties(cli_scenarios PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}" SKIP_RETURN_CODE 77
                     ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
# One progress count over a robust plan's (scenario, spot) pairs; a field
# without scenarios counts its spots.
add_test(cli_progress /bin/sh "${SMX_ROOT}/tests/cli.sh" progress "${SMX_BUILD}")
set_tests_properties(cli_progress PROPERTIES LABELS "unit" COST 2 WORKING_DIRECTORY "${SMX_ROOT}")
# The XDMF sidecar opened and rendered by ParaView (skips without pvpython).
add_test(cli_paraview /bin/sh "${SMX_ROOT}/tests/cli.sh" paraview "${SMX_BUILD}")
set_tests_properties(cli_paraview PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}"
                     SKIP_RETURN_CODE 77)
# Without cuFFT on a GPU: the direct kernel, one warning; fft refused (skips without a GPU).
add_test(cli_gpu_no_cufft /bin/sh "${SMX_ROOT}/tests/cli.sh" gpu_no_cufft "${SMX_BUILD}")
set_tests_properties(cli_gpu_no_cufft PROPERTIES LABELS "gpu" WORKING_DIRECTORY "${SMX_ROOT}"
                     SKIP_RETURN_CODE 77)
