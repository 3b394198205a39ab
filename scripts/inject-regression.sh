#!/bin/sh
# Injects one known error into a scratch copy of the tree, builds it (CPU only)
# and runs the named tests, to show which of them catch it
# (docs/dev/regression-injection.md). Nothing in this tree changes: the copy
# is made from the working tree's tracked and untracked files, patched, built
# and run in a temporary folder, and removed at the end.
#
#   sh scripts/inject-regression.sh INJECTION [TEST...]
#
# INJECTION (each a regression the suite must catch):
#   none        the tree as it is (every named test should pass)
#   range       every table's stopping power x 1.005 where it is read (its
#               ranges / 1.005): 0.39 mm of range at 100 MeV, 0.79 at 150
#   slab        compact bone's stopping power x 1.015 where it is read: 0.5 mm
#               more water-equivalent thickness for a 2 cm slab
#   width       the scattering power x 1.21 (both models): lateral widths +10 %
#   nuclear     water's non-elastic cross section x 1.3: peak/entrance about -5 %
#   straggling  Bohr's energy-loss variance x 1.21: range straggling +10 %,
#               the fall-off +10 % and the peak a few per cent lower
# TEST: a CTest program's name without `test_` (range, depth_dose, lateral,
# hetero, halo, let, grid_convergence, ...) or config_PLAN (the shipped plan's
# regression, tests/test_config_plans.py). Default: the physics regressions.
# Prints one line per test, `caught` (it failed) or `passed`, and the failed
# checks. Takes minutes per test on two cores.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || { sed -n '2,26p' "$0"; exit 2; }
INJ=$1
shift
TESTS=${*:-range depth_dose lateral hetero halo let grid_convergence}
WORK=$(mktemp -d /tmp/smx-inject-XXXXXX)
trap 'rm -rf "$WORK"' EXIT INT TERM
(cd "$ROOT" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - --no-recursion) |
    tar -xf - -C "$WORK"
cd "$WORK"

# Each patch marks its line INJECTED; a patch that no longer applies stops here.
scale_tables() { # $1: C condition on the table's name, $2: factor
    perl -0pi -e 's|(\n    int rc = load_from\(fid, t, name, err\);\n)|$1    for (int i = 0; !rc \&\& ('"$1"') \&\& i < t->n; i++) { /* INJECTED */\n        t->S_total_MeV_cm2_g[i] *= '"$2"';\n        t->csda_g_cm2[i] /= '"$2"';\n        t->projected_g_cm2[i] /= '"$2"';\n    }\n|' src/physics/tables.c
}
case $INJ in
none) ;;
range) scale_tables 1 1.005 ;;
slab) scale_tables 'strstr(name, "bone_compact") != NULL' 1.015 ;;
width)
    perl -pi -e 's|return f > 0.0 \? f \* es \* es / XS_g_cm2 : 0.0;|return f > 0.0 ? 1.21 * f * es * es / XS_g_cm2 : 0.0; /* INJECTED */|' \
        src/physics/scattering_power.c
    perl -pi -e 's|return t \? lookup\(t, t->E_MeV, t->T_rad2_cm2_g, E_MeV\) : NAN;|return t ? 1.21 * lookup(t, t->E_MeV, t->T_rad2_cm2_g, E_MeV) : NAN; /* INJECTED */|' \
        src/physics/tables.c
    ;;
nuclear)
    perl -pi -e 's|return 1e-3 \* \(1.64|return 1.3e-3 * (1.64|; s|(\+ 9.86\);)|$1 /* INJECTED */|' src/physics/nuclear.c
    ;;
straggling)
    perl -pi -e 's|return SMX_BOHR_K_MEV2_CM2_G \* Z_over_A|return 1.21 * SMX_BOHR_K_MEV2_CM2_G * Z_over_A|; s|(\(1.0 - 0.5 \* b2\) / \(1.0 - b2\);)|$1 /* INJECTED */|' \
        src/physics/straggling.c
    ;;
*) echo "unknown injection: $INJ" >&2; exit 2 ;;
esac
if [ "$INJ" != none ] && ! grep -rq INJECTED src; then
    echo "the $INJ patch did not apply (the source moved): update this script" >&2
    exit 2
fi
# INJECT_DRY=1: show the patch and stop.
if [ "${INJECT_DRY:-0}" = 1 ]; then
    diff -ru "$ROOT/src" src || true
    exit 0
fi

targets=
for t in $TESTS; do
    case $t in
    config_*) targets="$targets build/smx2d-sim" ;;
    *) targets="$targets build/tests/test_$t" ;;
    esac
done
make -j2 CUDA=0 $targets >build.log 2>&1 || { tail -20 build.log; exit 1; }

echo "injection: $INJ"
for t in $TESTS; do
    case $t in
    config_*) cmd="/usr/bin/python3 tests/test_config_plans.py build ${t#config_}" ;;
    *) cmd="./build/tests/test_$t" ;;
    esac
    start=$(date +%s)
    if $cmd >"$t.log" 2>&1; then
        echo "$t: passed ($(($(date +%s) - start)) s)"
    else
        echo "$t: caught ($(($(date +%s) - start)) s)"
        grep -E "CHECK|FAIL" "$t.log" | sed 's/^/    /' | head -12
    fi
done
