# Plan reader: defaults, --set, table lookup, schema drift, round trip; and its error messages.
add_test(plan "${SMX_BUILD}/tests/test_plan")
set_tests_properties(plan PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(plan_errors "${SMX_BUILD}/tests/test_plan_errors")
set_tests_properties(plan_errors PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
