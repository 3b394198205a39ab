"""MetaImage (.mhd header with a .raw file, or one .mha file), ITK's plain
format: reading an axial slice of a CT volume in HU, and writing a dose plane
placed in the patient. Coordinates are ITK's, which are DICOM's patient
coordinates (LPS); TransformMatrix lists each axis's direction in turn."""
import os
import zlib

import numpy as np

from smx2d_post.result import InputError

from .axial_slice import AXIAL_TOLERANCE, AxialSlice, check_axial

# ElementType -> numpy type (MET_LONG is left out: 4 or 8 bytes, by the writer's platform).
TYPES = {"MET_CHAR": "i1", "MET_UCHAR": "u1", "MET_SHORT": "i2", "MET_USHORT": "u2", "MET_INT": "i4",
         "MET_UINT": "u4", "MET_LONG_LONG": "i8", "MET_ULONG_LONG": "u8", "MET_FLOAT": "f4", "MET_DOUBLE": "f8"}
# The other names MetaIO accepts for these keys.
ALIASES = {"Offset": ("Offset", "Position", "Origin"),
           "TransformMatrix": ("TransformMatrix", "Orientation", "Rotation")}


def _header(path):
    """The header's key = value lines up to ElementDataFile, and the byte offset
    where the header ends (the data of a .mha file begins there)."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as e:
        raise InputError("%s: cannot be read (%s)" % (path, e.strerror or e))
    h, pos = {}, 0
    while pos < len(blob):
        end = blob.find(b"\n", pos)
        end = len(blob) if end < 0 else end + 1
        line = blob[pos:end].decode("latin-1").strip()
        pos = end
        if not line:
            continue
        key, eq, value = line.partition("=")
        if not eq:
            raise InputError("%s: header line '%s' is not KEY = VALUE; expected a MetaImage header" % (path, line[:60]))
        h[key.strip()] = value.strip()
        if key.strip() == "ElementDataFile":
            return h, blob, pos
    raise InputError("%s: no ElementDataFile line; expected a MetaImage header (.mhd or .mha)" % path)


def _get(h, path, key, n=None, kind=float):
    for k in ALIASES.get(key, (key,)):
        if k in h:
            try:
                v = [kind(x) for x in h[k].split()]
            except ValueError:
                raise InputError("%s: %s = %s; expected numbers" % (path, k, h[k]))
            if n is not None and len(v) != n:
                raise InputError("%s: %s has %d values; expected %d" % (path, k, len(v), n))
            return v
    return None


def _true(h, key):
    return h.get(key, "False").lower() in ("true", "1")


def read_volume(path):
    """A MetaImage volume: (values [nk][nj][ni], offset, directions [3][3] (one
    axis each), spacing [3]), checked against its header."""
    h, blob, data_at = _header(path)
    if h.get("ObjectType", "Image") != "Image":
        raise InputError("%s: ObjectType %s; expected Image" % (path, h["ObjectType"]))
    ndims = _get(h, path, "NDims", 1, int)
    if ndims is None or ndims[0] != 3:
        raise InputError("%s: NDims %s; expected 3 (a CT volume, one slice or more)" % (path, h.get("NDims")))
    dims = _get(h, path, "DimSize", 3, int)
    spacing = _get(h, path, "ElementSpacing", 3) or _get(h, path, "ElementSize", 3)
    if dims is None or spacing is None:
        raise InputError("%s: missing %s; expected DimSize and ElementSpacing"
                         % (path, "DimSize" if dims is None else "ElementSpacing"))
    if min(dims) < 1 or not all(s > 0 for s in spacing):
        raise InputError("%s: DimSize %s, ElementSpacing %s; expected positive sizes" % (path, dims, spacing))
    offset = _get(h, path, "Offset", 3) or [0.0, 0.0, 0.0]
    matrix = _get(h, path, "TransformMatrix", 9) or [1, 0, 0, 0, 1, 0, 0, 0, 1]
    etype = h.get("ElementType", "")
    if etype not in TYPES:
        raise InputError("%s: ElementType %s; expected one of %s" % (path, etype or "(none)", ", ".join(TYPES)))
    if int((_get(h, path, "ElementNumberOfChannels", 1, int) or [1])[0]) != 1:
        raise InputError("%s: ElementNumberOfChannels %s; expected 1 (one CT number per voxel)"
                         % (path, h["ElementNumberOfChannels"]))
    msb = _true(h, "ElementByteOrderMSB") or _true(h, "BinaryDataByteOrderMSB")
    dtype = np.dtype(TYPES[etype]).newbyteorder(">" if msb else "<")
    n = dims[0] * dims[1] * dims[2]
    data = _data(path, h, blob, data_at, n * dtype.itemsize)
    values = np.frombuffer(data, dtype=dtype, count=n).reshape(dims[2], dims[1], dims[0]).astype(np.float64)
    dirs = np.array(matrix, dtype=float).reshape(3, 3)
    return values, np.array(offset, dtype=float), dirs, np.array(spacing, dtype=float)


def _data(path, h, blob, data_at, want):
    name = h["ElementDataFile"]
    if name == "LOCAL":
        raw, where = blob[data_at:], path
    elif name.upper() == "LIST" or "%" in name:
        raise InputError("%s: ElementDataFile %s; expected one data file (LOCAL or a file name)" % (path, name))
    else:
        where = os.path.join(os.path.dirname(path), name)
        try:
            with open(where, "rb") as f:
                raw = f.read()
        except OSError as e:
            raise InputError("%s: its data file %s cannot be read (%s)" % (path, where, e.strerror or e))
    what = path if where == path else "%s: its data file %s" % (path, where)
    if _true(h, "CompressedData"):
        try:
            raw = zlib.decompress(raw)
        except zlib.error as e:
            raise InputError("%s: compressed data that zlib cannot inflate (%s): truncated or corrupt" % (what, e))
    else:
        skip = int((_get(h, path, "HeaderSize", 1, int) or [0])[0])
        raw = raw[len(raw) - want:] if skip == -1 else raw[skip:]
    if len(raw) < want:
        raise InputError("%s: truncated: %d bytes of data, expected %d (DimSize %s of %s)"
                         % (what, len(raw), want, h["DimSize"], h["ElementType"]))
    return raw[:want]


def read_slice(path, z):
    """The axial slice of a MetaImage CT volume nearest patient z (mm); its
    values are taken as HU (MetaImage has no rescale)."""
    values, offset, dirs, spacing = read_volume(path)
    why = check_axial(path, dirs[0], dirs[1])
    if why:
        raise InputError(why)
    if abs(abs(dirs[2][2]) - 1.0) > AXIAL_TOLERANCE:
        raise InputError("%s: its slices follow (%.6g, %.6g, %.6g); expected the patient's z axis: a tilted "
                         "(sheared) or oblique stack is not handled" % ((path,) + tuple(dirs[2])))
    nk = values.shape[0]
    zs = offset[2] + np.arange(nk) * spacing[2] * dirs[2][2]
    k = int(np.argmin(np.abs(zs - z)))
    if not abs(zs[k] - z) <= 0.5 * spacing[2] + 1e-9:  # 1e-9: exactly half-way, after rounding
        raise InputError("%s: no slice at z = %g mm: its %d slices are at z = %g .. %g mm, every %g mm; expected the "
                         "isocentre's z within half a slice of one" % (path, z, nk, zs.min(), zs.max(), spacing[2]))
    order = np.argsort(zs)
    return AxialSlice(hu=values[k], outside=np.zeros(values[k].shape, dtype=bool),
                      position=offset + k * spacing[2] * dirs[2], row_dir=dirs[0], col_dir=dirs[1],
                      row_spacing=float(spacing[1]), col_spacing=float(spacing[0]), source=os.path.abspath(path),
                      source_format="MetaImage", slice_index=int(np.nonzero(order == k)[0][0]), n_slices=nk,
                      slice_thickness_mm=float(spacing[2]))


def num(values):
    """Numbers as a header writes them: every double exactly (17 digits)."""
    return " ".join("%.17g" % x for x in values)


def write(header_path, raw_path, raw_name, values, position, row_dir, col_dir, row_spacing, col_spacing,
          thickness_mm, comment=""):
    """A 2-D plane values[r][c] as a one-slice MetaImage volume (float64, exact):
    pixel (r, c) at position + c * col_spacing * row_dir + r * row_spacing * col_dir;
    the header names its data file `raw_name` (its final name, beside it)."""
    normal = np.cross(row_dir, col_dir)
    a = np.ascontiguousarray(values, dtype="<f8")
    with open(raw_path, "wb") as f:
        f.write(a.tobytes())
    lines = ["ObjectType = Image"] + (["Comment = %s" % comment.replace("\n", " ")] if comment else []) + [
             "NDims = 3", "BinaryData = True", "BinaryDataByteOrderMSB = False",
             "CompressedData = False",
             "TransformMatrix = %s" % num(list(row_dir) + list(col_dir) + list(normal)),
             "Offset = %s" % num(position), "CenterOfRotation = 0 0 0",
             "ElementSpacing = %s" % num((col_spacing, row_spacing, thickness_mm)),
             "DimSize = %d %d 1" % (a.shape[1], a.shape[0]), "ElementType = MET_DOUBLE",
             "ElementDataFile = %s" % raw_name]
    with open(header_path, "w") as f:
        f.write("\n".join(lines) + "\n")
