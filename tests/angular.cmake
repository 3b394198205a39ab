# Angular scattering kernels (A_theta): moments, conservation, grid limits.
add_test(angular_kernels "${SMX_BUILD}/tests/test_angular")
set_tests_properties(angular_kernels PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
