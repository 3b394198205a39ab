"""smx2d-export-dose: a result's dose as a DICOM RT Dose and a MetaImage, placed
in the patient where the CT input it ran on (written by smx2d-import-ct) says
its grid lies."""
import argparse
import os
import sys

import numpy as np

from smx2d_post import cli
from smx2d_post.result import InputError, protons_text

from . import ct_input, metaimage, rtdose
from .result_planes import find_ct, read_planes

TOOL = "smx2d-export-dose"
FORMATS = ("dicom", "mhd")

EPILOG = """\
writes into DIR (default: RESULT's name without .h5, plus _dose, in the current
directory):
  dose.dcm             /dose/dose_Gy as a DICOM RT Dose (Gy, one frame, 32-bit
                       integers times Dose Grid Scaling)
  dose.mhd, dose.raw   the same as a MetaImage (float64, the values exactly)
  scenario_NNN.*       with --scenarios, each robust scenario's dose likewise
The CT input is the one the result's plan names (geometry.ct.file, looked up
next to the plan as the simulator did), or --ct. Its frame of reference,
patient and study go into the RT Dose.

exit codes: 0 ok, 1 bad command line, 2 bad input, 3 missing Python modules.
docs/dicom.md has a worked example."""


def parser():
    p = cli.Parser(prog=TOOL, description="A result's dose as DICOM RT Dose and MetaImage.", epilog=EPILOG,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("result", metavar="RESULT.h5", help="an smx2d-sim result file")
    p.add_argument("--ct", metavar="CT.h5", help="the CT input written by smx2d-import-ct (default: the plan's)")
    p.add_argument("--out", metavar="DIR", help="output directory (created if missing)")
    p.add_argument("--format", default="dicom,mhd", help="dicom, mhd or both, comma-separated (default both)")
    p.add_argument("--scenarios", action="store_true", help="also each robust scenario's dose (/scenarios)")
    p.add_argument("--bits", type=int, choices=(16, 32), default=32,
                   help="bits per RT Dose value (default 32: each value within 1.2e-10 of the maximum)")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return p


def _formats(text):
    fs = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in fs if f not in FORMATS]
    if bad or not fs:
        raise InputError("--format %s: expected dicom, mhd or both (dicom,mhd)" % text)
    return fs


def main(argv):
    args = parser().parse_args(argv)
    try:
        formats = _formats(args.format)
        res, slab, planes = read_planes(args.result, args.scenarios)
        ct_path, how = find_ct(args.result, res, args.ct)
        geo = ct_input.read_geometry(ct_path)
        d = res.dose
        dz = (d.z_edges[-1] - d.z_edges[0]) / len(d.z)
        dx = (d.x_edges[-1] - d.x_edges[0]) / len(d.x)
        origin, depth, lateral = geo["grid_origin_mm"], geo["beam_direction"], geo["lateral_direction"]
        # Pixel (r, c) is the cell (iz, ix): rows go along the beam, columns along x.
        position = origin + d.z[0] * depth + d.x[0] * lateral
        identity = {k[len("dicom_"):]: v for k, v in geo.items() if k.startswith("dicom_")}
        identity["FrameOfReferenceUID"] = geo.get("frame_of_reference_uid", "")
        software = "smx2d-sim %s (%s)" % (res.attrs.get("code_version", "?"), res.attrs.get("git_describe", "?"))
        stem = os.path.splitext(os.path.basename(args.result))[0]
        out_dir = args.out or stem + "_dose"
        written, scalings = [], []
        with cli.Outputs(out_dir) as out:
            for pl in planes:
                comment = "2-D model: Gy per %g mm slab, of %s" % (slab, protons_text(pl.protons))
                what = "smx2d-sim %s, %s" % ("dose" if pl.name == "dose" else pl.description, stem)
                if "dicom" in formats:
                    ds = rtdose.build(pl.values, position, lateral, depth, dz, dx, identity, bits=args.bits,
                                      slab_mm=slab, comment=comment, description=what, software=software)
                    rtdose.save(ds, out.path(pl.name + ".dcm"))
                    scalings.append(float(ds.DoseGridScaling))
                if "mhd" in formats:
                    metaimage.write(out.path(pl.name + ".mhd"), out.path(pl.name + ".raw"), pl.name + ".raw",
                                    pl.values, position, lateral, depth, dz, dx, slab,
                                    comment="%s; %s; %s" % (what, comment, "Gy, dose to medium"))
            written = out.commit()
    except InputError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, str(e))
    except ValueError as e:  # a dose an RT Dose cannot hold (negative, not finite)
        return cli.fail(TOOL, cli.EXIT_INPUT, "%s: %s" % (args.result, e))
    except OSError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, str(e))
    if not args.quiet:
        report(args, res, ct_path, how, geo, position, depth, lateral, planes, scalings, written)
    return 0


def _v(v):
    return "(%s)" % ", ".join("%.6g" % c for c in v)


def report(args, res, ct_path, how, geo, position, depth, lateral, planes, scalings, written):
    d = res.dose
    print("result     %s: %d x %d cells, %d dose plane%s" % (args.result, len(d.z), len(d.x), len(planes),
                                                           "s" if len(planes) > 1 else ""))
    print("CT input   %s (%s)" % (ct_path, how))
    print("frame      %s" % (geo.get("frame_of_reference_uid") or "none recorded (MetaImage input): a new UID"))
    print("plane      first cell at %s mm; rows along %s, columns along %s" % (_v(position), _v(depth), _v(lateral)))
    for pl, s in zip(planes, scalings or [None] * len(planes)):
        extra = "" if s is None else "; Dose Grid Scaling %.11g Gy, each value within %.3g Gy" % (s, s / 2)
        print("dose       %s: %s, max %.6g Gy%s" % (pl.name, pl.description, float(np.max(pl.values)), extra))
    print("wrote      %s" % ", ".join(written))
    sys.stdout.flush()
