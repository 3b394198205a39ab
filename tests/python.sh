# shellcheck shell=sh
# The Python of the shell tests, sourced after their argument handling:
#   . tests/python.sh    (from the repository root)
# py: the interpreter the build found (SMX_PYTHON: scripts/find-python.sh,
# written into the generated CTestTestfile and passed by tests/*.cmake);
# python3 on PATH when a test runs by hand without it.
# need_python MODULE...: returns when $py imports every MODULE; else prints
# which it lacks and exits 77 (skipped; `make test` fails on that skip,
# tests/allowed-skips.txt).
py=${SMX_PYTHON:-python3}
need_python() {
    if ! command -v "$py" >/dev/null 2>&1; then
        echo "SKIP: no Python interpreter $py (make deps installs python3 and its modules)"
        exit 77
    fi
    lacks=$("$py" - "$@" 2>&1 <<'PY'
import importlib, sys
for m in sys.argv[1:]:
    try:
        importlib.import_module(m)
    except ImportError:
        print(m)
PY
) || { echo "SKIP: $py does not run: $lacks"; exit 77; }
    [ -z "$lacks" ] && return 0
    echo "SKIP: $py cannot import $(echo $lacks) (make deps, or apt-get install" \
        "$(for m in $lacks; do printf 'python3-%s ' "${m%%.*}"; done | sed 's/ $//'))"
    exit 77
}
