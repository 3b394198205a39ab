# The post-processing tools (scripts/smx2d-plot, scripts/smx2d-compare and their
# smx2d_post package), Python tests run by tests/post.sh with the build's Python
# (SMX_PYTHON); skipped (77), naming the module, where it lacks numpy, h5py or matplotlib.
foreach(t gamma plot compare doc_examples)
  add_test(post_${t} /bin/sh "${SMX_ROOT}/tests/post.sh" "test_${t}.py" "${SMX_BUILD}")
  set_tests_properties(post_${t} PROPERTIES LABELS "unit" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}"
                       ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
endforeach()
# The figures the user documents quote from quickstart runs (docs/model.md, docs/accuracy-and-speed.md,
# docs/postprocessing.md's compare example, the README's CSV excerpt) against this build's runs.
add_test(post_doc_figures /bin/sh "${SMX_ROOT}/tests/post.sh" "test_doc_figures.py" "${SMX_BUILD}")
set_tests_properties(post_doc_figures PROPERTIES LABELS "regression" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}"
                     ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}" COST 10)
set_tests_properties(post_plot PROPERTIES COST 12)
