# Plan reader: error messages, defaults, --set, table lookup, schema drift, round trip.
add_test(plan_reader "${SMX_BUILD}/tests/test_plan")
set_tests_properties(plan_reader PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
