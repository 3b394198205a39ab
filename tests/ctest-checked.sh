#!/bin/sh
# CTest as `make test`, `make test-mpi` and `make test-asan` run it: a test
# that skips for a reason tests/allowed-skips.txt does not list fails the
# run, as a failed test does, naming the test and what it printed.
#   sh tests/ctest-checked.sh BUILD_DIR [CTEST_ARG...]   run CTest there, then check
#   sh tests/ctest-checked.sh --check JUNIT_XML           check an earlier run's results
# CTest writes each test's status and output to BUILD_DIR/Testing/junit.xml
# (--output-junit); a skip is a test that exited 77 (SKIP_RETURN_CODE). It is
# allowed when a line of tests/allowed-skips.txt matches its name (the whole
# name) and a line of its output (each skip prints its reason). Before the
# run, every test must carry one of the labels unit, regression, gpu, report.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
allowed="$root/tests/allowed-skips.txt"

# check JUNIT: the skips of JUNIT against the allowed list; 1 if any is not allowed.
check() {
    awk -v allowed="$allowed" '
    function unxml(s) {
        gsub(/&lt;/, "<", s); gsub(/&gt;/, ">", s); gsub(/&quot;/, "\"", s)
        gsub(/&apos;/, "\047", s); gsub(/&amp;/, "\\&", s)
        return s
    }
    function attr(line, key,    m) {
        if (!match(line, key "=\"[^\"]*\"")) return ""
        m = substr(line, RSTART + length(key) + 2, RLENGTH - length(key) - 3)
        return unxml(m)
    }
    BEGIN {
        # NAME-ERE | MESSAGE-ERE | reason ("|" with a space either side separates).
        while ((getline line < allowed) > 0) {
            if (line ~ /^[ \t]*(#|$)/) continue
            n = split(line, f, / \| /)
            if (n != 3) { printf "%s: not NAME | MESSAGE | REASON: %s\n", allowed, line; bad_list = 1; continue }
            gsub(/^[ \t]+|[ \t]+$/, "", f[1]); gsub(/^[ \t]+|[ \t]+$/, "", f[2])
            gsub(/^[ \t]+|[ \t]+$/, "", f[3])
            rules++; rname[rules] = f[1]; rmsg[rules] = f[2]; rwhy[rules] = f[3]
        }
    }
    /<testcase / {
        name = attr($0, "name"); status = attr($0, "status"); t = attr($0, "time") + 0
        ntests++; total += t; skip77 = 0; out = ""; nout = 0; inout = 0
        if (status == "fail") nfail++
        next
    }
    /<skipped message="SKIP_RETURN_CODE=/ { skip77 = 1 }
    /<system-out>/ { inout = 1; sub(/.*<system-out>/, "") }
    inout {
        last = index($0, "</system-out>") > 0
        if (last) sub(/<\/system-out>.*/, "")
        if (!last || $0 != "") { nout++; outl[nout] = unxml($0) }
        if (last) inout = 0
    }
    /<\/testcase>/ {
        if (!skip77) next
        nskip++
        ok = 0
        for (r = 1; r <= rules && !ok; r++) {
            if (name !~ ("^(" rname[r] ")$")) continue
            for (i = 1; i <= nout; i++) if (outl[i] ~ rmsg[r]) { ok = r; break }
        }
        if (ok) {
            printf "skipped, allowed: %s: %s\n", name, rwhy[ok]
            next
        }
        nbad++
        printf "smx2d-sim: error: test %s skipped, which tests/allowed-skips.txt does not allow; it said:\n", name
        if (nout == 0) print "    (nothing)"
        for (i = 1; i <= nout && i <= 8; i++) printf "    %s\n", outl[i]
        if (nout > 8) printf "    ... (%d more lines)\n", nout - 8
    }
    END {
        if (ntests == 0) { print "smx2d-sim: error: no test results in " FILENAME; exit 1 }
        printf "%d tests: %d failed, %d skipped (%d not allowed); the tests took %.1f s together\n",
               ntests, nfail, nskip, nbad, total
        exit (nbad > 0 || bad_list)
    }' "$1"
}

if [ "${1:-}" = "--check" ]; then
    check "$2"
    exit
fi
build=$1
shift
cd "$build" || exit 1
# Every test says what kind of check it is (docs/testing.md): CTest lists
# under -LE those that carry none of the four labels.
unlabelled=$(ctest -N -LE '^(unit|regression|gpu|report)$' | sed -n 's/^ *Test *#[0-9]*: //p')
if [ -n "$unlabelled" ]; then
    echo "smx2d-sim: error: tests without one of the labels unit, regression, gpu, report (tests/*.cmake):" $unlabelled
    exit 1
fi
rm -f Testing/junit.xml
# Each test's OpenMP threads wait for each other asleep, not spinning: `make
# test` runs two tests at once on two cores (ctest -j), and a spinning thread
# takes the core from the other test's (measured on the shared 2-core machine:
# four tests with -j2 took 133 s of CPU spinning, 41 s asleep, the same checks).
OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
export OMP_WAIT_POLICY
# A skipped test's output is kept whole (CTest keeps 1 kB of a test that did not
# fail): the reason may be its last line.
ctest --output-on-failure --test-output-size-passed 65536 --output-junit Testing/junit.xml "$@"
rc=$?
if [ -f Testing/junit.xml ]; then
    check Testing/junit.xml || rc=1
else
    echo "smx2d-sim: error: CTest wrote no Testing/junit.xml: the skips could not be checked"
    rc=1
fi
exit $rc
