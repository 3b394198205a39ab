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
smx_cases(hetero slabs 15 slabs)
smx_cases(hetero slabs_200 33 slabs_200)
smx_cases(hetero lateral 25 lateral)
smx_cases(hetero half_plane 23 half_plane)
smx_cases(hetero noisy 6 noisy)
smx_cases(hetero moments_slabs 10 moments_slabs)
smx_cases(hetero moments_noisy 18 moments_noisy)
smx_cases(hetero moments_lung_grids 20 moments_lung_grids)
