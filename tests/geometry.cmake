# Geometry: the plan's shapes, material maps and CT images as a medium map
# (cells, densities, quantisation, errors); /geometry in the result file and
# the XDMF sidecar, read back with h5py.
add_test(geometry "${SMX_BUILD}/tests/test_geometry")
set_tests_properties(geometry PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
add_test(geometry_output /bin/sh "${SMX_ROOT}/tests/post.sh" "test_geometry_output.py" "${SMX_BUILD}")
set_tests_properties(geometry_output PROPERTIES LABELS "unit" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}"
                     ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
# Transport through media against references computed from the PSTAR ranges,
# Highland over the layers (Fermi-Eyges) and Bortfeld's Bragg curve.
add_test(hetero "${SMX_BUILD}/tests/test_hetero")
set_tests_properties(hetero PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
