# Every shipped plan (config/*.yaml; config/bench/*.yaml on a reduced grid)
# runs on the CPU and its summary agrees with a water-equivalent prediction
# along the beam's axis (tests/test_config_plans.py), run with the build's
# Python (SMX_PYTHON); skipped (77), naming the module, where it lacks numpy or h5py.
foreach(plan quickstart plan_reference slab_bone phantom_map ct_phantom sobp
        bench_pencil150 bench_pencil230 bench_field)
  add_test(config_${plan} /bin/sh "${SMX_ROOT}/tests/post.sh" "test_config_plans.py" "${SMX_BUILD}" "${plan}")
  set_tests_properties(config_${plan} PROPERTIES LABELS "regression" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}"
                       ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
endforeach()
# The longest plans start first on a fresh clone (COST: tests/cases.cmake).
set_tests_properties(config_ct_phantom PROPERTIES COST 18)
set_tests_properties(config_bench_pencil230 config_bench_pencil150 PROPERTIES COST 14)
set_tests_properties(config_sobp config_bench_field config_phantom_map PROPERTIES COST 9)
