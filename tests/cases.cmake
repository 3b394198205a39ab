# smx_cases(PROG NAME COST CASE...): used by geometry.cmake and physics.cmake
# (the Makefile joins tests/*.cmake in name order, this file first of them).
# A program of independent cases (tests/check.h: `test_PROG CASE...`) runs as
# several tests, PROG_NAME each running the cases listed, so that `ctest -j`
# spreads them over the cores. COST: about the seconds each takes on one core,
# so that CTest starts the longest first where no earlier run has timed them
# (a fresh clone). Every case of a program is in one of its tests.
function(smx_cases prog name cost)
    add_test(${prog}_${name} "${SMX_BUILD}/tests/test_${prog}" ${ARGN})
    set_tests_properties(${prog}_${name} PROPERTIES LABELS "regression" COST ${cost}
                         WORKING_DIRECTORY "${SMX_ROOT}")
endfunction()
