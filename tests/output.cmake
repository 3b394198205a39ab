# HDF5 result writer, XDMF sidecar, provenance, run_result and tally arithmetic.
add_test(output "${SMX_BUILD}/tests/test_output")
set_tests_properties(output PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
# The result file's life: overwrite, abort, keep-partial, write errors, disk full.
add_test(output_file "${SMX_BUILD}/tests/test_output_file")
set_tests_properties(output_file PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
# The per-spot matrix's chunks compressed on the host's threads: the bytes
# HDF5's own shuffle and deflate filters store, chunk for chunk.
add_test(h5_deflate "${SMX_BUILD}/tests/test_h5_deflate")
set_tests_properties(h5_deflate PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
