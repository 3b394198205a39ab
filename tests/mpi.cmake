# MPI scale-out (docs/mpi.md). The division of a field and simulate_part, in every build:
add_test(parallel "${SMX_BUILD}/tests/test_parallel")
set_tests_properties(parallel PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
# Jobs under mpirun on the CPU (skip without an MPI build, mpirun, or h5py for the
# build's Python, SMX_PYTHON; `make test-mpi` runs them in build-mpi/): identical
# bytes for 1, 2 and 3 ranks, a robust plan's scenarios and LET rows on 1 to 4 ranks, a
# field without per-spot doses, failing ranks, and the
# dist tree's bundled Open MPI with the system's hidden.
foreach(case field scenarios total_only fail dist)
  add_test(mpi_${case} /bin/sh "${SMX_ROOT}/tests/mpi.sh" ${case} "${SMX_BUILD}")
  set_tests_properties(mpi_${case} PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}"
                       SKIP_RETURN_CODE 77 TIMEOUT 600
                       ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
endforeach()
