"""smx2d-import-spots: the spots of a DICOM RT Ion Plan beam that lie in the
plane of a CT input written by smx2d-import-ct, as a spot map (beam.spots_file)."""
import argparse
import math
import os
import sys

import numpy as np

from smx2d_post import cli
from smx2d_post.result import InputError

from . import ct_input, ion_plan

TOOL = "smx2d-import-spots"
# A spot's size is given as a full width at half maximum; the plan's beam.sigma_x_mm is a sigma.
FWHM_PER_SIGMA = 2.0 * math.sqrt(2.0 * math.log(2.0))
# The plan's isocentre against the CT input's, both decimal text of a DICOM file or a command line.
POSITION_TOLERANCE_MM = 0.01

EPILOG = """\
The beam must be the one the CT input was imported for: the same gantry angle,
isocentre (x, y), patient position and frame of reference; the couch and
collimator at 0. A spot lies in the plane when its position along the gantry's
axis (IEC beam-limiting-device Y at the isocentre) puts it within
--plane-tolerance of the slice. Its x is the plan's lateral x; its weight the
beam's meterset share in MU times --protons-per-mu.

exit codes: 0 ok, 1 bad command line, 2 bad input (or an output that exists
without --overwrite), 3 missing Python modules. docs/dicom.md."""


def parser():
    p = cli.Parser(prog=TOOL, description="An RT Ion Plan beam's spots in a CT input's plane as a spot map.",
                   epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("plan", metavar="RTPLAN.dcm", help="a DICOM RT Ion Plan")
    p.add_argument("--ct", metavar="CT.h5", required=True, help="the CT input written by smx2d-import-ct")
    p.add_argument("--out", "-o", metavar="SPOTS.csv", required=True, help="the spot map to write")
    p.add_argument("--beam", metavar="NUMBER|NAME", help="the beam (default: the plan's one treatment beam)")
    p.add_argument("--plane-tolerance", metavar="MM", type=cli.number("--plane-tolerance", minimum=0.0),
                   help="how far from the slice a spot may lie (default: half the CT's slice thickness)")
    p.add_argument("--protons-per-mu", metavar="N", type=cli.number("--protons-per-mu", positive=True),
                   default=1.0, help="the machine's protons per MU (default 1: weights in MU)")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output file")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")
    return p


def _check(beam, geo, ct_path):
    label = "%s: beam %d" % (beam.source, beam.number)
    if beam.patient_position != geo.get("patient_position"):
        raise InputError("%s: patient position %s, the CT input %s was imported %s; expected the same"
                         % (label, beam.patient_position, ct_path, geo.get("patient_position")))
    diff = (beam.gantry_deg - float(geo["beam_angle_deg"]) + 180.0) % 360.0 - 180.0
    if abs(diff) > ion_plan.ANGLE_TOLERANCE_DEG:
        raise InputError("%s: gantry %g deg, the CT input %s was imported at %g deg; expected the same "
                         "(smx2d-import-ct --angle %g)" % (label, beam.gantry_deg, ct_path,
                                                           float(geo["beam_angle_deg"]), beam.gantry_deg))
    iso = np.asarray(geo["isocentre_mm"], dtype=float)
    if np.max(np.abs(beam.isocentre[:2] - iso[:2])) > POSITION_TOLERANCE_MM:
        raise InputError("%s: isocentre (%g, %g, %g) mm, the CT input %s's (%g, %g, %g) mm; expected the same x, y "
                         "(smx2d-import-ct --isocentre=%g,%g,%g)" % ((label,) + tuple(beam.isocentre) + (ct_path,)
                                                                     + tuple(iso) + tuple(beam.isocentre)))
    frame = geo.get("frame_of_reference_uid", "")
    if frame and beam.frame and frame != beam.frame:
        raise InputError("%s: frame of reference %s, the CT input %s's %s; expected the same"
                         % (label, beam.frame, ct_path, frame))


def in_plane(beam, geo, tolerance):
    """The spots whose patient z lies within `tolerance` of the CT input's slice.
    IEC Y points to the gantry: towards the head (+z) head first, the feet feet first."""
    sign = 1.0 if beam.patient_position.startswith("HF") else -1.0
    z = np.array([beam.isocentre[2] + sign * s.y_mm for s in beam.spots])
    keep = np.abs(z - float(geo["slice_position_mm"])) <= tolerance + 1e-9  # 1e-9: on the edge, after rounding
    return [s for s, k in zip(beam.spots, keep) if k], z


def main(argv):
    args = parser().parse_args(argv)
    try:
        if os.path.exists(args.out) and not args.overwrite:
            raise InputError("%s: exists; --overwrite replaces it" % args.out)
        geo = ct_input.read_geometry(args.ct)
        beam = ion_plan.read_beam(args.plan, args.beam)
        _check(beam, geo, args.ct)
        tol = args.plane_tolerance
        if tol is None:
            thick = float(geo.get("slice_thickness_mm", float("nan")))
            if not thick > 0:
                raise InputError("%s: no slice thickness recorded; expected one, or --plane-tolerance" % args.ct)
            tol = 0.5 * thick
        spots, z = in_plane(beam, geo, tol)
        if not spots:
            raise InputError("%s: beam %d: none of its %d spots lies within %g mm of the slice at z = %g mm (its spots "
                             "lie at z = %s mm); expected some in the plane" % (
                                 args.plan, beam.number, len(beam.spots), tol, float(geo["slice_position_mm"]),
                                 ", ".join("%g" % v for v in sorted(set(np.round(z, 3))))))
        scale = (beam.mu_per_meterset if math.isfinite(beam.mu_per_meterset) else 1.0) * args.protons_per_mu
        with cli.Outputs(os.path.dirname(os.path.abspath(args.out))) as out:
            write(out.path(os.path.basename(args.out)), args, beam, spots, scale, tol, geo)
            out.commit()
    except InputError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, str(e))
    except OSError as e:
        return cli.fail(TOOL, cli.EXIT_INPUT, "%s: %s" % (args.out, e))
    if not args.quiet:
        energies = sorted({s.energy_MeV for s in spots})
        print("beam       %d '%s' of %s: gantry %g deg, %s, %d spots" % (beam.number, beam.name, args.plan,
                                                                        beam.gantry_deg, beam.patient_position,
                                                                        len(beam.spots)))
        print("plane      %d spots within %g mm of z = %g mm, %d energies from %g to %g MeV"
              % (len(spots), tol, float(geo["slice_position_mm"]), len(energies), energies[0], energies[-1]))
        print("weights    %s" % _weight_unit(beam, args.protons_per_mu))
        print("wrote      %s (beam.spots_file)" % args.out)
        sys.stdout.flush()
    return 0


def _weight_unit(beam, per_mu):
    if not math.isfinite(beam.mu_per_meterset):
        return "the plan's meterset weights x %g (the plan gives no Beam Meterset)" % per_mu
    return "MU x %g protons per MU" % per_mu


def write(path, args, beam, spots, scale, tol, geo):
    sized = all(math.isfinite(s.fwhm_x_mm) for s in spots)
    with open(path, "w") as f:
        f.write("# smx2d-import-spots: beam %d '%s' of %s, gantry %g deg, the spots within %g mm of the slice at "
                "z = %g mm\n" % (beam.number, beam.name, os.path.abspath(args.plan), beam.gantry_deg, tol,
                                 float(geo["slice_position_mm"])))
        f.write("# x_mm: IEC beam-limiting-device X at the isocentre; weight: %s%s\n"
                % (_weight_unit(beam, args.protons_per_mu),
                   "; sigma_x_mm: Scanning Spot Size X / 2.3548" if sized else ""))
        f.write("energy_MeV, x_mm, weight%s\n" % (", sigma_x_mm" if sized else ""))
        for s in spots:
            row = ["%.10g" % s.energy_MeV, "%.10g" % s.x_mm, "%.10g" % (s.meterset * scale)]
            if sized:
                row.append("%.10g" % (s.fwhm_x_mm / FWHM_PER_SIGMA))
            f.write(", ".join(row) + "\n")
