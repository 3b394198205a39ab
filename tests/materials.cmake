# Material library (src/physics/material*.c, data/materials/, docs/materials.md).
# With the generator's path test_materials also proves that every
# data/materials/KEY.h5 is what its CSV regenerates to.
add_test(materials "${SMX_BUILD}/tests/test_materials" "${SMX_BUILD}/make_tables")
set_tests_properties(materials PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
# Non-elastic nuclear cross sections: ICRU 63's per-element table, the rule for
# the elements it lacks, the materials' sums and their ratios to water, against
# references stated in the test (ICRU 63, Barashenkov, two parametrisations):
# physics against published data, so regression.
add_test(nuclear "${SMX_BUILD}/tests/test_nuclear")
set_tests_properties(nuclear PROPERTIES LABELS "regression" WORKING_DIRECTORY "${SMX_ROOT}")
# Every library material at 0.5x, 1x and 2x its nominal density builds its
# energy-loss tables on a fine and a coarse grid, the whole-bin gather lists
# complete and ordered (dense implants: titanium once failed here).
add_test(dense_media "${SMX_BUILD}/tests/test_dense_media")
set_tests_properties(dense_media PROPERTIES LABELS "unit" WORKING_DIRECTORY "${SMX_ROOT}")
