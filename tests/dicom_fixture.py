"""What the tests of smx2d-import-ct and smx2d-export-dose share: the CT slice
pydicom ships, running the tools, MetaImage volumes written as ITK writes
them, and files that must not be left behind."""
import os
import zlib

import numpy as np
import pydicom

import post_fixture

# pydicom's own test image (a 128 x 128 slice of a GE HiSpeed CT/i scan, David
# Clunie's "CompressedSamples" patient), installed with it: Debian's
# python3-pydicom and the pip wheel both carry it. Found by path, never with
# pydicom.data.get_testdata_file, which downloads what it does not find.
CT_SMALL = os.path.join(os.path.dirname(pydicom.__file__), "data", "test_files", "CT_small.dcm")


def ct_small():
    if not os.path.isfile(CT_SMALL):
        raise AssertionError("%s: not installed with pydicom %s; the tests need it (Debian's python3-pydicom "
                             "has it)" % (CT_SMALL, pydicom.__version__))
    return CT_SMALL


def import_ct(source, out, *args):
    """Runs smx2d-import-ct on `source` writing `out`; returns the CompletedProcess."""
    return post_fixture.tool("smx2d-import-ct", source, "--out", out, *args)


def leftovers(directory):
    """Files of `directory` a failed run may have left: partial outputs."""
    return sorted(n for n in os.listdir(directory) if ".partial-" in n)


def write_mhd(path, values, spacing, offset, matrix=(1, 0, 0, 0, 1, 0, 0, 0, 1), local=False, compressed=False,
              etype="MET_SHORT", dtype="<i2"):
    """A MetaImage volume values[k][j][i] (i fastest), as ITK writes one."""
    raw = np.ascontiguousarray(values, dtype=dtype).tobytes()
    if compressed:
        raw = zlib.compress(raw)
    head = ["ObjectType = Image", "NDims = 3", "BinaryData = True", "BinaryDataByteOrderMSB = False",
            "CompressedData = %s" % compressed, "TransformMatrix = %s" % " ".join(map(str, matrix)),
            "Offset = %s" % " ".join(map(str, offset)), "ElementSpacing = %s" % " ".join(map(str, spacing)),
            "DimSize = %d %d %d" % values.shape[::-1], "ElementType = %s" % etype]
    if local:
        with open(path, "wb") as f:
            f.write(("\n".join(head + ["ElementDataFile = LOCAL"]) + "\n").encode() + raw)
        return path
    name = os.path.splitext(os.path.basename(path))[0] + ".raw"
    with open(path, "w") as f:
        f.write("\n".join(head + ["ElementDataFile = " + name]) + "\n")
    with open(os.path.join(os.path.dirname(path), name), "wb") as f:
        f.write(raw)
    return path
