"""smx2d-import-ct: an axial slice of a DICOM CT series or a MetaImage volume,
resampled onto a plan's depth x lateral grid along a beam, as the simulator's
CT input (geometry.ct.file) with where that grid lies in the patient."""
import argparse
import os
import sys

import numpy as np

from smx2d_post import cli
from smx2d_post.result import InputError

from . import ct_input, dicom_ct, metaimage
from .beam_frame import POSITIONS, beam_frame

TOOL = "smx2d-import-ct"

EPILOG = """\
INPUT is a directory holding one DICOM CT series (one file per slice; other
files are skipped), one DICOM CT file, or a MetaImage volume (.mhd with its
data file, or .mha) in HU. The slice taken is the one nearest the isocentre's
z. The plan's grid: depth z from 0 to NZ x DZ along the beam, lateral x from
-NX x DX / 2 to +NX x DX / 2 along the gantry's X axis; the isocentre lies at
x = 0, depth --iso-depth. The angle is IEC 61217's gantry angle (couch at 0)
for the patient position the CT records (HFS, FFS, HFP, FFP).

exit codes: 0 ok, 1 bad command line, 2 bad input (or an output that exists
without --overwrite), 3 missing Python modules. docs/dicom.md has a worked
example and what the importer does not handle."""


def parser():
    p = cli.Parser(prog=TOOL, description="A CT slice along a beam as smx2d-sim's CT input.", epilog=EPILOG,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("input", metavar="INPUT", help="DICOM series directory, DICOM file, or .mhd/.mha")
    p.add_argument("--out", "-o", metavar="CT.h5", required=True, help="the CT input to write")
    p.add_argument("--isocentre", metavar="X,Y,Z", required=True, type=cli.numbers("--isocentre"),
                   help="isocentre in patient coordinates, mm (DICOM: x to the left, y posterior, z to the head)")
    p.add_argument("--angle", metavar="DEG", required=True, type=cli.number("--angle"),
                   help="gantry angle in degrees (IEC 61217)")
    p.add_argument("--nz", metavar="N", required=True, type=cli.number("--nz", positive=True),
                   help="the plan's grid.space.nz (cells along the beam)")
    p.add_argument("--nx", metavar="N", required=True, type=cli.number("--nx", positive=True),
                   help="the plan's grid.space.nx (lateral cells)")
    p.add_argument("--dz", metavar="MM", required=True, type=cli.number("--dz", positive=True),
                   help="the plan's grid.space.dz_mm")
    p.add_argument("--dx", metavar="MM", type=cli.number("--dx", positive=True),
                   help="the plan's grid.space.dx_mm (default: --dz)")
    p.add_argument("--iso-depth", metavar="MM", type=cli.number("--iso-depth"),
                   help="the isocentre's depth in the grid (default: half the grid's depth)")
    p.add_argument("--outside-hu", metavar="HU", type=cli.number("--outside-hu"), default=-1000.0,
                   help="CT number of cells outside the image or next to its padding (default -1000, air)")
    p.add_argument("--series", metavar="UID", help="the Series Instance UID to take when the directory holds several")
    p.add_argument("--patient-position", choices=sorted(POSITIONS),
                   help="HFS, FFS, HFP or FFP, where the input does not record it (MetaImage; default HFS there)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return p


def _count(args, name):
    v = getattr(args, name)
    if v != int(v):
        raise InputError("--%s %g: expected a whole number of cells" % (name, v))
    return int(v)


def read_ct(args, z):
    if os.path.isdir(args.input):
        return dicom_ct.read_slice(args.input, z, args.series)
    if not os.path.exists(args.input):
        raise InputError("%s: no such file or directory" % args.input)
    if args.input.lower().endswith((".mhd", ".mha")):
        return metaimage.read_slice(args.input, z)
    return dicom_ct.read_slice(args.input, z)


def patient_position(args, ct):
    if ct.patient_position:
        if args.patient_position and args.patient_position != ct.patient_position:
            raise InputError("%s: Patient Position (0018,5100) is %s, --patient-position says %s; expected them "
                             "to agree (or leave the option out)" % (ct.source, ct.patient_position,
                                                                     args.patient_position))
        return ct.patient_position
    if ct.source_format == "DICOM CT" and not args.patient_position:
        raise InputError("%s: missing tag PatientPosition (0018,5100), which says how the gantry angle turns in "
                         "the patient; expected it, or --patient-position" % ct.source)
    return args.patient_position or "HFS"


def main(argv):
    args = parser().parse_args(argv)
    try:
        if len(args.isocentre) != 3:
            raise InputError("--isocentre: %d numbers; expected X,Y,Z in mm" % len(args.isocentre))
        nz, nx = _count(args, "nz"), _count(args, "nx")
        dz = args.dz
        dx = args.dx if args.dx is not None else dz
        iso_depth = args.iso_depth if args.iso_depth is not None else 0.5 * nz * dz
        if os.path.exists(args.out) and not args.overwrite:
            raise InputError("%s: exists; --overwrite replaces it" % args.out)
        ct = read_ct(args, args.isocentre[2])
        # The grid lies in the slice's plane: the isocentre's z may be up to half
        # a slice from it, and is recorded as given.
        in_plane = [args.isocentre[0], args.isocentre[1], ct.z_mm]
        try:
            frame = beam_frame(args.angle, patient_position(args, ct), in_plane, iso_depth)
        except ValueError as e:
            raise InputError("%s: %s" % (ct.source, e))
        frame.isocentre = np.array(args.isocentre, dtype=float)
        z = (np.arange(nz) + 0.5) * dz
        x = -0.5 * nx * dx + (np.arange(nx) + 0.5) * dx
        zz, xx = np.meshgrid(z, x, indexing="ij")
        hu, outside = ct.sample(frame.to_patient(zz, xx), args.outside_hu)
        if outside.all():
            raise InputError("%s: the plan's grid does not meet the image (every cell centre lies outside it): "
                             "check --isocentre, --angle and --iso-depth" % ct.source)
        with cli.Outputs(os.path.dirname(os.path.abspath(args.out))) as out:
            tmp = out.path(os.path.basename(args.out))
            ct_input.write(tmp, hu, dz, dx, frame, ct, args.outside_hu, int(outside.sum()))
            out.commit()
    except InputError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, str(e))
    except OSError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, "%s: %s" % (args.out, e))
    if not args.quiet:
        report(args, ct, frame, hu, outside, nz, nx, dz, dx)
    return 0


def _v(v):
    return "(%s)" % ", ".join("%.4g" % c for c in v)


def report(args, ct, frame, hu, outside, nz, nx, dz, dx):
    rows, cols = ct.hu.shape
    slope, intercept = ct.rescale
    print("source     %s (%s; slice %d of %d, at z = %g mm; %d x %d pixels of %g x %g mm; HU = %g x stored %+g)"
          % (ct.source, ct.source_format, ct.slice_index + 1, ct.n_slices, ct.z_mm, rows, cols, ct.row_spacing,
             ct.col_spacing, slope, intercept))
    if ct.dicom.get("FrameOfReferenceUID"):
        print("frame      %s" % ct.dicom["FrameOfReferenceUID"])
    print("beam       gantry %g deg, %s: along %s; plan x along %s" % (frame.angle_deg, frame.patient_position,
                                                                       _v(frame.depth_dir), _v(frame.lateral_dir)))
    print("isocentre  %s mm at depth %g mm, x = 0; the grid's entrance centre at %s mm"
          % (_v(frame.isocentre), frame.isocentre_depth_mm, _v(frame.origin)))
    print("grid       %d x %d cells of %g x %g mm (depth x lateral), bilinear in HU" % (nz, nx, dz, dx))
    print("HU         %g .. %g in the grid; %d cells outside the image, set to %g HU"
          % (hu.min(), hu.max(), int(outside.sum()), args.outside_hu))
    print("wrote      %s" % args.out)
    print("plan       grid.space: {nz: %d, nx: %d, dz_mm: %g, dx_mm: %g}" % (nz, nx, dz, dx))
    print("           geometry.ct: {file: %s, calibration: ct_schneider2000.csv}" % os.path.abspath(args.out))
    print("           (the shipped example calibration: calibrate your scanner for real work, docs/geometry.md)")
    sys.stdout.flush()
