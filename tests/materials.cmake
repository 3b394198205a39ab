# Material library (src/physics/material*.c, data/materials/, docs/materials.md).
# With the generator's path test_materials also proves that every
# data/materials/KEY.h5 is what its CSV regenerates to.
add_test(materials_library "${SMX_BUILD}/tests/test_materials" "${SMX_BUILD}/make_tables")
set_tests_properties(materials_library PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
