"""Reading one axial slice of a DICOM CT series (a directory of files, one
slice each) or of a single CT file with pydicom, with the rescale to HU applied,
and refusing, with the file, what is wrong and what was expected, whatever it
cannot place or read: other modalities, tilted or non-axial images, uneven or
repeated slice positions, missing tags, truncated files, compressed pixel data
without a decoder."""
import os
import warnings

import numpy as np
import pydicom
from pydicom.errors import InvalidDicomError

from smx2d_post.result import InputError

from .axial_slice import AXIAL_TOLERANCE, AxialSlice, check_axial

CT_IMAGE_STORAGE = "1.2.840.10008.5.1.4.1.1.2"
# Tags every slice must carry (DICOM CT Image IOD, type 1), with what each is for.
REQUIRED = (
    ("Modality", "(0008,0060)", "the modality, CT"),
    ("FrameOfReferenceUID", "(0020,0052)", "the frame of reference the dose is placed in"),
    ("ImagePositionPatient", "(0020,0032)", "where the image lies in the patient"),
    ("ImageOrientationPatient", "(0020,0037)", "the directions of its rows and columns"),
    ("PixelSpacing", "(0028,0030)", "the pixel size"),
    ("Rows", "(0028,0010)", "the image size"),
    ("Columns", "(0028,0011)", "the image size"),
    ("RescaleSlope", "(0028,1053)", "the scale from stored values to HU"),
    ("RescaleIntercept", "(0028,1052)", "the offset from stored values to HU"),
    ("BitsAllocated", "(0028,0100)", "the pixel format"),
    ("PixelRepresentation", "(0028,0103)", "the pixel format"),
)
# Gantry/Detector Tilt (0018,1120) is a decimal string: a tilt of 0 may be
# written 0.0 or 1e-6; anything larger shears the slices against each other.
TILT_TOLERANCE_DEG = 0.01
# Slice positions are decimal text, which scanners round to 0.001 mm or finer:
# spacings that differ by more than 0.01 mm are really uneven (a missing slice,
# two series mixed, a helical reconstruction with varying increments).
SPACING_TOLERANCE_MM = 0.01
# A shift of the slices' x or y along the series beyond the positions'
# rounding: the mark of a tilted gantry reconstructed as axial images.
SHEAR_TOLERANCE_MM = 0.01


def _read(path, pixels):
    """A dataset, or InputError naming the file."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pydicom.dcmread(path, stop_before_pixels=not pixels)
    except InvalidDicomError:
        raise InputError("%s: not a DICOM file (no 'DICM' file meta header); expected a DICOM CT image "
                         "file (DICOM Part 10)" % path)
    except (OSError, EOFError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise InputError("%s: cannot be read as DICOM, truncated or corrupt (%s: %s)"
                         % (path, type(e).__name__, e))


def _floats(ds, name, n, path):
    try:
        v = [float(x) for x in (ds.get(name) if n > 1 else [ds.get(name)])]
    except (TypeError, ValueError):
        v = []
    if len(v) != n or not all(np.isfinite(v)):
        raise InputError("%s: %s is %r; expected %d number%s" % (path, name, ds.get(name), n, "s" if n > 1 else ""))
    return np.array(v)


def _header(path, ds):
    """The geometry of one slice from its header, checked: a dict."""
    if ds.get("Modality") not in (None, "CT"):
        raise InputError("%s: modality %s (SOP class %s); expected CT (Modality (0008,0060) = CT)"
                         % (path, ds.Modality or "(empty)", _sop_name(ds)))
    for name, tag, why in REQUIRED:
        if ds.get(name) in (None, ""):
            raise InputError("%s: missing tag %s %s (%s); expected a CT image that has it%s"
                             % (path, name, tag, why, _truncated(path)))
    sop = str(ds.get("SOPClassUID", ""))
    if sop and sop != CT_IMAGE_STORAGE:
        raise InputError("%s: SOP class %s; expected CT Image Storage (%s): enhanced (multi-frame) CT "
                         "is not handled" % (path, _sop_name(ds), CT_IMAGE_STORAGE))
    if int(ds.get("NumberOfFrames", 1) or 1) != 1:
        raise InputError("%s: %s frames; expected one image per file" % (path, ds.NumberOfFrames))
    tilt = ds.get("GantryDetectorTilt")
    if tilt not in (None, "") and abs(float(tilt)) > TILT_TOLERANCE_DEG:
        raise InputError("%s: gantry tilt %s deg (Gantry/Detector Tilt (0018,1120)); expected 0: a tilted "
                         "acquisition's slices are sheared, which the importer does not undo" % (path, tilt))
    iop = _floats(ds, "ImageOrientationPatient", 6, path)
    row_dir, col_dir = iop[:3], iop[3:]
    # Cosines written to 6 digits make unit vectors within 1e-5: 1e-3 only
    # catches vectors that are not directions at all.
    if not (abs(np.linalg.norm(row_dir) - 1) < 1e-3 and abs(np.linalg.norm(col_dir) - 1) < 1e-3):
        raise InputError("%s: ImageOrientationPatient %s is not two unit vectors" % (path, list(iop)))
    why = check_axial(path, row_dir, col_dir)
    if why:
        raise InputError(why)
    spacing = _floats(ds, "PixelSpacing", 2, path)
    if not np.all(spacing > 0):
        raise InputError("%s: PixelSpacing %s; expected two positive sizes in mm" % (path, list(spacing)))
    slope, intercept = _floats(ds, "RescaleSlope", 1, path)[0], _floats(ds, "RescaleIntercept", 1, path)[0]
    rtype = str(ds.get("RescaleType", "") or "")
    if rtype not in ("", "HU"):
        raise InputError("%s: Rescale Type (0028,1054) is '%s'; expected HU (or none): the calibration "
                         "turns HU into densities" % (path, rtype))
    return {"position": _floats(ds, "ImagePositionPatient", 3, path), "row_dir": row_dir / np.linalg.norm(row_dir),
            "col_dir": col_dir / np.linalg.norm(col_dir), "spacing": spacing, "rescale": (slope, intercept),
            "shape": (int(ds.Rows), int(ds.Columns)), "frame": str(ds.FrameOfReferenceUID)}


def _truncated(path):
    """A note for a missing tag's message when the file ends before its pixel
    data: pydicom stops quietly at the end of a file, so a cut file reads as one
    that lacks whatever came after the cut."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            whole = pydicom.dcmread(path)
    except Exception:  # any failure here is reported by the caller's message
        return ""
    return "" if "PixelData" in whole else "; the file ends before its pixel data: truncated?"


def _sop_name(ds):
    uid = ds.get("SOPClassUID")
    if uid is None:
        return "not given"
    return "%s, %s" % (getattr(uid, "name", uid), uid)


def _pixels(path, ds):
    """The stored values as a 2-D array, refusing truncated or undecodable data."""
    if "PixelData" not in ds:
        raise InputError("%s: no pixel data (7FE0,0010): the file is truncated before its image or holds none; "
                         "expected a CT image" % path)
    ts = ds.file_meta.get("TransferSyntaxUID") if getattr(ds, "file_meta", None) is not None else None
    if ts is None:
        raise InputError("%s: no Transfer Syntax UID (0002,0010) in the file meta header: truncated or corrupt" % path)
    if int(ds.get("SamplesPerPixel", 1)) != 1 or str(ds.get("PhotometricInterpretation", "MONOCHROME2")) not in (
            "MONOCHROME1", "MONOCHROME2"):
        raise InputError("%s: %s samples per pixel, %s; expected one grey value per pixel (MONOCHROME2)"
                         % (path, ds.get("SamplesPerPixel"), ds.get("PhotometricInterpretation")))
    if not ts.is_compressed:
        want = int(ds.Rows) * int(ds.Columns) * (int(ds.BitsAllocated) // 8)
        if len(ds.PixelData) < want:
            raise InputError("%s: truncated: its pixel data has %d bytes, expected %d (%d x %d pixels of %d bits)"
                             % (path, len(ds.PixelData), want, ds.Rows, ds.Columns, ds.BitsAllocated))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = ds.pixel_array
    except Exception as e:  # pydicom's handlers raise many kinds; each is a refusal here
        if ts.is_compressed:
            raise InputError("%s: compressed pixel data (transfer syntax %s, %s) that this pydicom cannot decode "
                             "(%s: %s); expected uncompressed data, or a decoder installed for it (e.g. Debian's "
                             "python3-gdcm, or pylibjpeg), or the series converted first (dcmdjpeg, gdcmconv --raw)"
                             % (path, ts.name, ts, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))
        raise InputError("%s: its pixel data cannot be read (%s: %s)" % (path, type(e).__name__, e))
    if a.shape != (int(ds.Rows), int(ds.Columns)):
        raise InputError("%s: pixel data of shape %s; expected %d x %d" % (path, a.shape, ds.Rows, ds.Columns))
    return a


def _padding(ds, stored):
    """Pixels marked as padding (Pixel Padding Value and Range Limit): no data there."""
    pv = ds.get("PixelPaddingValue")
    if pv is None:
        return np.zeros(stored.shape, dtype=bool)
    lim = ds.get("PixelPaddingRangeLimit")
    if lim is None:
        return stored == pv
    lo, hi = min(pv, lim), max(pv, lim)
    return (stored >= lo) & (stored <= hi)


def _identity(ds):
    """What the RT Dose carries over from the CT: the frame of reference, patient and study."""
    keys = ("FrameOfReferenceUID", "StudyInstanceUID", "SeriesInstanceUID", "SOPInstanceUID", "PatientName",
            "PatientID", "PatientBirthDate", "PatientSex", "StudyID", "StudyDate", "StudyTime",
            "AccessionNumber", "ReferringPhysicianName", "PositionReferenceIndicator")
    return {k: str(ds.get(k, "") or "") for k in keys}


def list_files(directory):
    """The regular files of a directory (not its subdirectories), sorted."""
    try:
        names = sorted(os.listdir(directory))
    except OSError as e:
        raise InputError("%s: cannot be listed (%s)" % (directory, e.strerror or e))
    return [os.path.join(directory, n) for n in names if os.path.isfile(os.path.join(directory, n))]


def _series(directory, series_uid):
    """The headers of the CT series in a directory: [(path, dataset)]; skips files
    that are not DICOM and DICOM objects without an image (DICOMDIR, structures)."""
    found, skipped, others = {}, 0, {}
    for path in list_files(directory):
        try:
            ds = _read(path, pixels=False)
        except InputError:
            skipped += 1
            continue
        if "Rows" not in ds:  # no image: DICOMDIR, RT Structure Set, RT Plan ...
            skipped += 1
            continue
        uid = str(ds.get("SeriesInstanceUID", ""))
        if ds.get("Modality") != "CT":
            others.setdefault(uid, (ds.get("Modality"), []))[1].append(path)
            continue
        found.setdefault(uid, []).append((path, ds))
    if series_uid:
        if series_uid not in found:
            raise InputError("%s: no CT series with Series Instance UID %s; its CT series: %s"
                             % (directory, series_uid, ", ".join(found) or "none"))
        return found[series_uid]
    if not found:
        what = "; ".join("%d %s image%s" % (len(p), m, "s" if len(p) > 1 else "") for m, p in others.values())
        raise InputError("%s: no CT image among its files (%s%s); expected a CT series"
                         % (directory, what or "none with an image",
                            ", %d other files" % skipped if skipped else ""))
    if len(found) > 1:
        raise InputError("%s: %d CT series (%s); expected one: choose with --series UID"
                         % (directory, len(found), ", ".join("%s: %d slices" % (u, len(v)) for u, v in found.items())))
    return next(iter(found.values()))


def _choose(directory, slices, z):
    """The slice nearest z, after checking that the series is one stack of axial
    slices at even spacing: (index, path, header, spacing, number of slices)."""
    heads = [(p, ds, _header(p, ds)) for p, ds in slices]
    p0, _, h0 = heads[0]
    for p, _, h in heads[1:]:
        for key, what in (("frame", "frame of reference"), ("shape", "image size"), ("spacing", "pixel spacing")):
            if not np.all(np.asarray(h[key]) == np.asarray(h0[key])):
                raise InputError("%s: %s %s differs from %s's %s; expected one series on one grid"
                                 % (p, what, h[key], p0, h0[key]))
        # The same orientation written twice differs by its cosines' rounding (AXIAL_TOLERANCE's).
        if (np.max(np.abs(h["row_dir"] - h0["row_dir"])) > AXIAL_TOLERANCE
                or np.max(np.abs(h["col_dir"] - h0["col_dir"])) > AXIAL_TOLERANCE):
            raise InputError("%s: image orientation differs from %s's; expected one series" % (p, p0))
    heads.sort(key=lambda t: t[2]["position"][2])
    zs = np.array([h["position"][2] for _, _, h in heads])
    if len(heads) > 1:
        steps = np.diff(zs)
        if np.min(steps) <= SPACING_TOLERANCE_MM:
            i = int(np.argmin(steps))
            raise InputError("%s and %s: two slices at z = %g mm; expected one slice per position"
                             % (heads[i][0], heads[i + 1][0], zs[i]))
        if np.max(steps) - np.min(steps) > SPACING_TOLERANCE_MM:
            i = int(np.argmax(np.abs(steps - np.median(steps))))
            raise InputError("%s: non-uniform slice spacing: %g mm between z = %g and %g (%s and %s), %g mm "
                             "elsewhere; expected even spacing (within %g mm): a slice may be missing"
                             % (directory, steps[i], zs[i], zs[i + 1], os.path.basename(heads[i][0]),
                                os.path.basename(heads[i + 1][0]), np.median(steps), SPACING_TOLERANCE_MM))
        xy = np.array([h["position"][:2] for _, _, h in heads])
        shift = np.max(np.abs(xy - xy[0]))
        if shift > SHEAR_TOLERANCE_MM:
            raise InputError("%s: the slices' x, y positions move by up to %.3g mm along the series; expected one "
                             "straight stack: a gantry tilt reconstructed as axial images is not handled"
                             % (directory, shift))
        spacing = float(np.median(steps))
    else:
        spacing = float("nan")
    i = int(np.argmin(np.abs(zs - z)))
    reach = 0.5 * spacing if len(heads) > 1 else max(0.5 * _thickness(heads[0][1]), SPACING_TOLERANCE_MM)
    if not abs(zs[i] - z) <= reach + 1e-9:  # 1e-9: an isocentre exactly half-way, after the subtraction's rounding
        where = ("z = %g mm" % zs[0]) if len(zs) == 1 else ("z = %g .. %g mm, every %g mm" % (zs[0], zs[-1], spacing))
        raise InputError("%s: no slice at z = %g mm: the %s at %s; expected the isocentre's z within %g mm "
                         "of a slice" % (directory, z, "slice is" if len(zs) == 1 else "slices are", where, reach))
    return i, heads[i][0], heads[i][2], spacing, len(heads)


def _thickness(ds):
    t = ds.get("SliceThickness")
    try:
        return float(t) if t not in (None, "") else 0.0
    except (TypeError, ValueError):
        return 0.0


def read_slice(source, z, series_uid=None):
    """The axial slice nearest patient z (mm) of a DICOM CT file or directory
    (a series), as an AxialSlice with HU."""
    if os.path.isdir(source):
        slices = _series(source, series_uid)
        directory = source
    else:
        ds = _read(source, pixels=False)
        slices, directory = [(source, ds)], source
    i, path, head, spacing, n = _choose(directory, slices, z)
    ds = _read(path, pixels=True)
    _header(path, ds)  # the file may have changed since; and a header read alone may have been cut
    stored = _pixels(path, ds)
    slope, intercept = head["rescale"]
    hu = stored.astype(np.float64) * slope + intercept
    pos = str(ds.get("PatientPosition", "") or "")
    return AxialSlice(hu=hu, outside=_padding(ds, stored), position=head["position"], row_dir=head["row_dir"],
                      col_dir=head["col_dir"], row_spacing=float(head["spacing"][0]),
                      col_spacing=float(head["spacing"][1]), source=os.path.abspath(path), source_format="DICOM CT",
                      slice_index=i, n_slices=n, slice_thickness_mm=_thickness(ds) or spacing,
                      rescale=(slope, intercept), patient_position=pos, dicom=_identity(ds))
