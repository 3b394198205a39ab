"""The simulator's CT input (docs/geometry.md, "A CT image"): /hu [nz][nx] on
the plan's grid with its grid attributes, plus, written by smx2d-import-ct,
where that grid lies in the patient and what it came from (root attributes,
docs/dicom.md lists them), which smx2d-export-dose reads back to place a dose."""
import hashlib
import time

import h5py
import numpy as np

from smx2d_post.result import InputError, text

WRITER = "smx2d-import-ct"
# What the exporter needs to place a plan point (z, x) in the patient.
PLACEMENT = ("grid_origin_mm", "beam_direction", "lateral_direction")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write(path, hu, dz, dx, frame, ct, outside_hu, n_outside):
    """Writes `hu` [nz][nx] (the plan's cells, HU) with the grid's attributes and
    the geometry: `frame` (a BeamFrame), `ct` (the AxialSlice sampled)."""
    nz, nx = hu.shape
    with h5py.File(path, "w") as f:
        d = f.create_dataset("hu", data=np.asarray(hu, dtype=np.float32))
        d.attrs["units"] = "HU"
        d.attrs["description"] = "CT number at each plan cell's centre, [nz][nx]: depth along the beam, then lateral"
        a = f.attrs
        a["description"] = ("smx2d-sim CT input from %s (%s), slice at z = %g mm, beam at %g deg through the "
                            "isocentre" % (ct.source, ct.source_format, ct.z_mm, frame.angle_deg))
        a["written_by"] = WRITER
        a["utc_written"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        # The plan's grid (the simulator reads these four).
        a["dz_mm"], a["dx_mm"] = float(dz), float(dx)
        a["z0_mm"], a["x0_mm"] = 0.0, -0.5 * nx * dx
        # Where it lies in the patient (DICOM patient coordinates, mm): plan point
        # (z, x) is grid_origin_mm + z * beam_direction + x * lateral_direction.
        a["grid_origin_mm"] = frame.origin
        a["beam_direction"] = frame.depth_dir
        a["lateral_direction"] = frame.lateral_dir
        a["beam_angle_deg"] = frame.angle_deg
        a["patient_position"] = frame.patient_position
        a["isocentre_mm"] = frame.isocentre
        a["isocentre_depth_mm"] = frame.isocentre_depth_mm
        # The slice it came from.
        a["source_file"] = ct.source
        a["source_sha256"] = sha256(ct.source)
        a["source_format"] = ct.source_format
        a["slice_position_mm"] = ct.z_mm
        a["slice_index"] = ct.slice_index
        a["n_slices"] = ct.n_slices
        a["slice_thickness_mm"] = ct.slice_thickness_mm
        a["pixel_spacing_mm"] = np.array([ct.row_spacing, ct.col_spacing])
        a["image_position_mm"] = ct.position
        a["image_orientation"] = np.concatenate([ct.row_dir, ct.col_dir])
        a["image_size"] = np.array(ct.hu.shape, dtype=np.int32)
        a["rescale_slope"], a["rescale_intercept"] = float(ct.rescale[0]), float(ct.rescale[1])
        a["resampling"] = ("bilinear in HU between the four pixel centres around each cell centre; %g HU "
                           "outside the image and next to padding" % outside_hu)
        a["outside_hu"] = float(outside_hu)
        a["cells_outside"] = int(n_outside)
        a["frame_of_reference_uid"] = ct.dicom.get("FrameOfReferenceUID", "")
        for k, v in ct.dicom.items():
            if k != "FrameOfReferenceUID":
                a["dicom_" + k] = v


def read_geometry(path):
    """The attributes of a CT input written by smx2d-import-ct, as a dict (strings
    decoded, arrays as numpy), checked for what placing a dose needs."""
    try:
        f = h5py.File(path, "r")
    except FileNotFoundError:
        raise InputError("%s: no such file" % path)
    except OSError as e:
        raise InputError("%s: cannot be read as HDF5 (%s)" % (path, e))
    with f:
        g = {k: (text(v) if isinstance(v, (bytes, str, np.bytes_)) else v) for k, v in f.attrs.items()}
        shape = f["hu"].shape if "hu" in f else None
    missing = [k for k in PLACEMENT if k not in g]
    if missing:
        raise InputError("%s: no %s attribute%s: not a CT input written by %s, which records where the plan's grid "
                         "lies in the patient; expected one it wrote" % (path, ", ".join(missing),
                                                                         "s" if len(missing) > 1 else "", WRITER))
    for k in PLACEMENT:
        g[k] = np.asarray(g[k], dtype=float)
        if g[k].shape != (3,) or not np.all(np.isfinite(g[k])):
            raise InputError("%s: attribute %s is %s; expected 3 numbers" % (path, k, g[k]))
    g["hu_shape"] = shape
    return g
