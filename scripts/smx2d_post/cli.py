"""What smx2d-plot and smx2d-compare share on the command line: exit codes
(those of smx2d-sim), error messages, lists of numbers, and output files that
appear only complete."""
import argparse
import os
import sys

EXIT_USAGE = 1      # bad command line
EXIT_INPUT = 2      # bad input file, or an output directory that cannot be written
EXIT_RUNTIME = 3    # missing Python modules, or anything unexpected


class Parser(argparse.ArgumentParser):
    """argparse, exiting 1 (not argparse's 2) on a bad command line, as smx2d-sim does."""

    def error(self, message):
        self.print_usage(sys.stderr)
        sys.stderr.write("%s: error: %s\n" % (self.prog, message))
        sys.exit(EXIT_USAGE)


def numbers(what, positive=False):
    """An argparse type: a comma-separated list of numbers ('10,20.5')."""
    def parse(s):
        out = []
        for part in s.split(","):
            try:
                v = float(part)
            except ValueError:
                raise argparse.ArgumentTypeError("%s: '%s' is not a number (expected e.g. 10,20.5)" % (what, part))
            if v != v or (positive and not v > 0):
                raise argparse.ArgumentTypeError("%s: '%s' must be a %snumber"
                                                 % (what, part, "positive " if positive else ""))
            out.append(v)
        return out
    return parse


def number(what, positive=False, minimum=None):
    def parse(s):
        try:
            v = float(s)
        except ValueError:
            raise argparse.ArgumentTypeError("%s: '%s' is not a number" % (what, s))
        if v != v or (positive and not v > 0) or (minimum is not None and v < minimum):
            raise argparse.ArgumentTypeError("%s: '%s' must be %s" % (
                what, s, "a positive number" if positive else "at least %g" % minimum))
        return v
    return parse


def fail(tool, code, message):
    sys.stderr.write("%s: error: %s\n" % (tool, message))
    return code


class Outputs:
    """Files written into one directory under temporary names and renamed into
    place together by commit(), so that an error leaves none half-written; on
    commit, the files of `known` not written this time are removed, so that the
    directory holds only this run's files (e.g. no material map of an earlier result)."""

    def __init__(self, directory, known=()):
        self.dir = directory
        self.known = known
        self.pending = []
        try:
            os.makedirs(directory, exist_ok=True)
        except OSError as e:
            raise OSError("%s: cannot create the output directory (%s)" % (directory, e.strerror or e))
        if not os.access(directory, os.W_OK):
            raise OSError("%s: the output directory is not writable" % directory)

    def path(self, name):
        """A temporary path for `name`; the file takes its name on commit()."""
        final = os.path.join(self.dir, name)
        tmp = os.path.join(self.dir, ".%s.partial-%d" % (name, os.getpid()))
        self.pending.append((tmp, final))
        return tmp

    def commit(self):
        for tmp, final in self.pending:
            os.replace(tmp, final)
        written = [final for _, final in self.pending]
        for name in self.known:
            p = os.path.join(self.dir, name)
            if p not in written and os.path.exists(p):
                os.remove(p)
        self.pending = []
        return written

    def discard(self):
        for tmp, _ in self.pending:
            try:
                os.remove(tmp)
            except OSError:
                pass
        self.pending = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.discard()
        return False
