# A patient's CT in and the dose out in clinical formats (scripts/smx2d-import-ct,
# smx2d-import-spots, smx2d-export-dose, package smx2d_dicom; docs/dicom.md): Python tests run by
# tests/post.sh with the build's Python (SMX_PYTHON); skipped (77), naming the module,
# where it lacks numpy, h5py, scipy or pydicom (which `make test` then fails).
# dicom_import: the importer against the CT's own pixels and its refusals.
add_test(dicom_import /bin/sh "${SMX_ROOT}/tests/post.sh" "test_import_ct.py" "${SMX_BUILD}")
set_tests_properties(dicom_import PROPERTIES LABELS "unit" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}"
                     ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
# dicom_dose: pydicom's CT slice imported, run and exported end to end; R80 against the
# water-equivalent depth along the beam (PSTAR), the RT Dose read back value for value.
add_test(dicom_dose /bin/sh "${SMX_ROOT}/tests/post.sh" "test_dicom_dose.py" "${SMX_BUILD}")
set_tests_properties(dicom_dose PROPERTIES LABELS "regression" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}"
                     ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
# dicom_spots: an RT Ion Plan's spots in the CT input's plane as a spot map, and its refusals.
add_test(dicom_spots /bin/sh "${SMX_ROOT}/tests/post.sh" "test_import_spots.py" "${SMX_BUILD}")
set_tests_properties(dicom_spots PROPERTIES LABELS "unit" SKIP_RETURN_CODE 77 WORKING_DIRECTORY "${SMX_ROOT}"
                     ENVIRONMENT "SMX_PYTHON=${SMX_PYTHON}")
