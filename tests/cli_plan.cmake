# The binary on what a plan asks for before the first step: snapshots in the
# step log's order, lookup-table errors the dry run raises as the run does,
# the backend said on screen, geometry files' errors naming their plan keys.
foreach(case snapshots plurals tables_dry_run backend_line)
  add_test(cli_${case} /bin/sh "${SMX_ROOT}/tests/cli.sh" ${case} "${SMX_BUILD}")
  set_tests_properties(cli_${case} PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
endforeach()
