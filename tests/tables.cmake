# Material table (src/physics/tables.c, scripts/make_tables.c) and SHA-256 (src/base/sha256.c).
# The generator's path lets test_tables check data/pstar_water.h5 against a
# fresh regeneration from data/pstar_water.csv.
add_test(tables "${SMX_BUILD}/tests/test_tables" "${SMX_BUILD}/make_tables")
set_tests_properties(tables PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
# The reader against broken table files.
add_test(tables_malformed "${SMX_BUILD}/tests/test_tables_malformed")
set_tests_properties(tables_malformed PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(sha256 "${SMX_BUILD}/tests/test_sha256")
set_tests_properties(sha256 PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
