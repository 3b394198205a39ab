# The post-processing tools (scripts/smx2d-plot, scripts/smx2d-compare and their
# smx2d_post package), Python tests run by tests/post.sh with the build's Python
# (SMX_PYTHON); skipped (77), naming the module, where it lacks numpy, h5py or matplotlib.
foreach(t gamma plot compare)
  add_test(post_${t} /bin/sh "${SMX_ROOT}/tests/post.sh" "test_${t}.py" "${SMX_BUILD}")
  set_tests_properties(post_${t} PROPERTIES LABELS "unit" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}"
                       ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
endforeach()
