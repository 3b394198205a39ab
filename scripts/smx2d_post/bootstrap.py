"""What the command-line tools do before importing numpy, h5py, matplotlib or
pydicom: check that this interpreter has them, and otherwise say what to install.
Standard library only, so that the message can always be printed."""
import importlib.util
import os
import sys

MODULES = ("numpy", "h5py", "matplotlib")
# Debian's package of each module is python3-MODULE.
SYSTEM_PYTHON = "/usr/bin/python3"
# Set when the tool has re-run itself under the system interpreter, so that it does it once.
_RETRIED = "SMX2D_POST_SYSTEM_PYTHON"


def missing_modules(modules=MODULES):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require_modules(tool, script, modules=MODULES):
    """Returns when `modules` (numpy, h5py and matplotlib unless named) import;
    otherwise runs the tool again under /usr/bin/python3 (where the Debian
    packages install them) if that is another interpreter, or exits 3 naming
    what is missing and how to install it."""
    missing = missing_modules(modules)
    if not missing:
        return
    here = os.path.realpath(sys.executable)
    if (os.environ.get(_RETRIED) is None and os.access(SYSTEM_PYTHON, os.X_OK)
            and os.path.realpath(SYSTEM_PYTHON) != here):
        os.environ[_RETRIED] = here
        os.execv(SYSTEM_PYTHON, [SYSTEM_PYTHON, script] + sys.argv[1:])
    tried = os.environ.get(_RETRIED)
    pythons = here if tried is None else "%s and %s" % (tried, here)
    sys.stderr.write(
        "%s: error: Python modules missing: %s (looked in %s)\n"
        "  Debian/Ubuntu: apt-get install %s (or 'make deps'); elsewhere: pip install %s\n"
        % (tool, ", ".join(missing), pythons, " ".join("python3-" + m for m in modules), " ".join(modules)))
    sys.exit(3)
