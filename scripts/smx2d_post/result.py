"""Reading smx2d-sim result files (layout: schemas/output.md) and plain 2-D dose
arrays (HDF5 or CSV with their grid), into one shape: a Dose2D on a rectilinear
grid of cell centres, depth z (rows) by lateral x (columns), in mm."""
import csv
import math
from dataclasses import dataclass, field

import h5py
import numpy as np

FILETYPE = "smx2d-sim result"
# The /dose datasets a result file holds, with what their values are.
QUANTITIES = {
    "dose_Gy": "absorbed dose",
    "dose_Gy_per_proton": "absorbed dose per proton",
    "energy_deposit_MeV": "energy deposit per proton",
}
# Where a material map is looked for: the simulator writes /geometry (schemas/output.md); the
# other forms are for maps added by hand (docs/postprocessing.md).
MATERIAL_PATHS = ("geometry", "material", "media")
MATERIAL_DATASETS = ("material_index", "index", "id", "map", "density_g_cm3")


class InputError(Exception):
    """Bad input. The message names the file (and the dataset, line or column) and
    what was expected."""


def text(value):
    """An HDF5 string attribute or dataset as str (h5py gives fixed-length strings as bytes)."""
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value[()]
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", "replace")
    return str(value)


def edges_from_centres(c):
    """Cell edges around ascending centres: midpoints, and half a spacing beyond the ends."""
    if len(c) == 1:
        return np.array([c[0] - 0.5, c[0] + 0.5])
    mid = 0.5 * (c[1:] + c[:-1])
    return np.concatenate(([c[0] - (mid[0] - c[0])], mid, [c[-1] + (c[-1] - mid[-1])]))


@dataclass
class Dose2D:
    """values[iz][ix] at depth z[iz] and lateral position x[ix] (cell centres, mm, ascending)."""
    values: np.ndarray
    z: np.ndarray
    x: np.ndarray
    units: str              # UDUNITS-style, "" when the source does not say
    quantity: str           # e.g. dose_Gy, or the dataset's name for a plain array
    source: str             # file, or file:/dataset
    z_edges: np.ndarray = None
    x_edges: np.ndarray = None
    # What the values stand for beyond their name, put before the units in a
    # label: " of 1 proton in a 1 mm slab" (a 2-D dose is per slab of y).
    context: str = ""

    def __post_init__(self):
        if self.z_edges is None:
            self.z_edges = edges_from_centres(self.z)
        if self.x_edges is None:
            self.x_edges = edges_from_centres(self.x)

    @property
    def shape(self):
        return self.values.shape

    def label(self):
        """What the values are, with units, for an axis: 'absorbed dose (Gy)'."""
        name = QUANTITIES.get(self.quantity, self.quantity.replace("_", " ")) + self.context
        return "%s (%s)" % (name, self.units) if self.units else name


@dataclass
class Material:
    """A material map on the dose grid: integer indices (with names) or a continuous value."""
    values: np.ndarray
    source: str
    units: str = ""
    names: list = field(default_factory=list)

    @property
    def categorical(self):
        return np.issubdtype(self.values.dtype, np.integer)


@dataclass
class Result:
    path: str
    dose: Dose2D
    attrs: dict             # root attributes, strings decoded
    summary: dict           # /summary figures (float, NaN where undefined); empty if absent
    material: Material = None
    # The dose (Gy) the figures are of (/dose/dose_Gy): `dose` itself unless another
    # quantity was asked for; an energy per cell is not a dose where densities differ.
    figure_dose: Dose2D = None
    warnings: list = field(default_factory=list)  # /summary's attribute warnings, one per line
    plan_resolved: str = ""
    protons: float = math.nan  # the beam's protons (attribute of /dose/dose_Gy)
    # output.let: the primaries' dose-averaged and track-averaged LET maps (/let), else None
    let_d: Dose2D = None
    let_t: Dose2D = None

    @property
    def complete(self):
        return int(self.attrs.get("complete", 0)) == 1


def _open(path):
    try:
        return h5py.File(path, "r")
    except FileNotFoundError:
        raise InputError("%s: no such file" % path)
    except OSError as e:
        raise InputError("%s: cannot be read as HDF5 (%s)" % (path, e))


def _check_axis(path, name, c):
    if c.ndim != 1 or len(c) < 1:
        raise InputError("%s: %s: expected a 1-D list of coordinates, got shape %s" % (path, name, c.shape))
    if not np.all(np.isfinite(c)):
        raise InputError("%s: %s: coordinates must be finite numbers" % (path, name))
    if len(c) > 1 and not (np.all(np.diff(c) > 0) or np.all(np.diff(c) < 0)):
        raise InputError("%s: %s: coordinates must be strictly increasing or decreasing" % (path, name))


def _ascending(d):
    """The same map with both axes ascending (a plain array may list them descending)."""
    if len(d.z) > 1 and d.z[0] > d.z[-1]:
        d.values, d.z, d.z_edges = d.values[::-1], d.z[::-1], None
    if len(d.x) > 1 and d.x[0] > d.x[-1]:
        d.values, d.x, d.x_edges = d.values[:, ::-1], d.x[::-1], None
    d.values = np.ascontiguousarray(d.values, dtype=float)
    d.__post_init__()
    return d


def is_result(f):
    return text(f.attrs.get("filetype", b"")) == FILETYPE


def _find_material(f, path, shape):
    for base in MATERIAL_PATHS:
        if base not in f:
            continue
        obj = f[base]
        # The simulator's /geometry of a run in one medium: nothing to draw.
        if base == "geometry" and isinstance(obj, h5py.Group) and int(obj.attrs.get("n_media", 2)) <= 1:
            continue
        if isinstance(obj, h5py.Dataset):
            ds, group = obj, None
        else:
            group = obj
            names = [n for n in MATERIAL_DATASETS if n in group] + sorted(group)
            cands = [group[n] for n in names if isinstance(group[n], h5py.Dataset) and group[n].shape == shape]
            if not cands:
                continue
            ds = cands[0]
        if ds.shape != shape:
            raise InputError("%s: %s: a material map must have the dose's shape %s, got %s"
                             % (path, ds.name, shape, ds.shape))
        names = ""
        for holder in (ds, group):
            if holder is not None and "names" in holder.attrs:
                names = text(holder.attrs["names"])
                break
        if not names and group is not None and "names" in group and isinstance(group["names"], h5py.Dataset):
            names = ",".join(text(n) for n in group["names"][()])
        return Material(values=ds[()], source="%s:%s" % (path, ds.name),
                        units=text(ds.attrs.get("units", b"")),
                        names=[n.strip() for n in names.split(",")] if names else [])
    return None


def dose_context(quantity, protons, slab_mm):
    """How many protons a /dose dataset's values are of, and the slab of y its
    mass is taken over: " of 1 proton in a 1 mm slab"."""
    slab = " in a %g mm slab" % slab_mm if math.isfinite(slab_mm) else ""
    if quantity == "dose_Gy" and math.isfinite(protons):
        return " of %s%s" % (protons_text(protons), slab)
    if quantity == "dose_Gy_per_proton":
        return slab
    return ""


def protons_text(n):
    return "1 proton" if n == 1 else "%.4g protons" % n


def read_result(path, quantity="dose_Gy"):
    """A result file's dose map (the /dose dataset `quantity`), root attributes,
    /summary figures and, where the file has one, its material map."""
    if quantity not in QUANTITIES:
        raise InputError("quantity '%s': expected one of %s" % (quantity, ", ".join(QUANTITIES)))
    with _open(path) as f:
        if not is_result(f):
            raise InputError("%s: not an smx2d-sim result (root attribute filetype is '%s', expected '%s')"
                             % (path, text(f.attrs.get("filetype", b"missing")), FILETYPE))
        version = text(f.attrs.get("format_version", b""))
        if version.split(".")[0] != "1":
            raise InputError("%s: format_version '%s': these tools read format 1.x" % (path, version))
        attrs = {k: (text(v) if isinstance(v, (bytes, np.bytes_)) else
                     (v.item() if isinstance(v, np.generic) else v)) for k, v in f.attrs.items()}
        name = "dose/" + quantity
        if name not in f:
            why = " (complete = 0: the run stopped before the dose was written)" if attrs.get("complete") == 0 else ""
            raise InputError("%s: no /%s%s" % (path, name, why))
        for a in ("z_centres_mm", "x_centres_mm", "z_edges_mm", "x_edges_mm"):
            if "axes/" + a not in f:
                raise InputError("%s: no /axes/%s" % (path, a))
        z = f["axes/z_centres_mm"][()]
        x = f["axes/x_centres_mm"][()]
        ds = f[name]
        values = ds[()]
        if values.shape != (len(z), len(x)):
            raise InputError("%s: /%s has shape %s, the axes say (%d, %d)" % (path, name, values.shape, len(z), len(x)))
        dose = Dose2D(values=np.asarray(values, dtype=float), z=z, x=x,
                      units=text(ds.attrs.get("units", b"")), quantity=quantity,
                      source="%s:/%s" % (path, name),
                      z_edges=f["axes/z_edges_mm"][()], x_edges=f["axes/x_edges_mm"][()])
        summary, warned = {}, []
        if "summary" in f:
            for k, v in f["summary"].items():
                if isinstance(v, h5py.Dataset) and v.shape == ():
                    summary[k] = float(v[()])
            w = text(f["summary"].attrs.get("warnings", b"none"))
            warned = [] if w == "none" else [l for l in w.split("\n") if l]
        figure_dose = dose
        if quantity != "dose_Gy" and "dose/dose_Gy" in f:
            figure_dose = Dose2D(values=np.asarray(f["dose/dose_Gy"][()], dtype=float), z=z, x=x, units="Gy",
                                 quantity="dose_Gy", source="%s:/dose/dose_Gy" % path, z_edges=dose.z_edges,
                                 x_edges=dose.x_edges)
        material = _find_material(f, path, values.shape)
        resolved = text(f["plan/resolved"][()]) if "plan/resolved" in f else ""
        protons = float(f["dose/dose_Gy"].attrs.get("protons", math.nan)) if "dose/dose_Gy" in f else math.nan
        slab = float(f["dose/dose_Gy"].attrs.get("slab_thickness_mm", math.nan)) if "dose/dose_Gy" in f else math.nan
        dose.context = dose_context(quantity, protons, slab)
        let = {}
        for key, name in (("d", "dose_averaged_keV_um"), ("t", "track_averaged_keV_um")):
            if "let/" + name in f:
                v = f["let/" + name][()]
                if v.shape != values.shape:
                    raise InputError("%s: /let/%s has shape %s, the dose %s" % (path, name, v.shape, values.shape))
                let[key] = Dose2D(values=np.asarray(v, dtype=float), z=z, x=x, units="keV/um",
                                  quantity="LET" + key, source="%s:/let/%s" % (path, name),
                                  z_edges=dose.z_edges, x_edges=dose.x_edges)
    return Result(path=path, dose=dose, attrs=attrs, summary=summary, material=material,
                  plan_resolved=resolved, protons=protons, figure_dose=figure_dose, warnings=warned,
                  let_d=let.get("d"), let_t=let.get("t"))


# The values' encodings of a per-spot group (its attribute `encoding`; schemas/output.md).
PER_SPOT_UINT16 = "uint16 per-row scale"
PER_SPOT_FLOAT32 = "float32"


def read_per_spot(group, dtype=np.float64):
    """A per-spot group of a result file (/dose/per_spot, /let/per_spot_let_dose,
    /scenarios/NNN/per_spot; an open h5py group) as a scipy.sparse.csr_matrix, one
    row per spot and one column per dose cell, in the group's units (Gy per proton,
    or Gy keV/um per proton): under the encoding "uint16 per-row scale" the value is
    data * scale[row], under "float32" data itself. A group without the attribute
    (written before there was a choice) holds float32 values."""
    import scipy.sparse as sp  # only this reader needs SciPy
    where = "%s:%s" % (group.file.filename, group.name)
    encoding = text(group.attrs.get("encoding", PER_SPOT_FLOAT32))
    for name in ("data", "indices", "indptr", "shape") + (("scale",) if encoding == PER_SPOT_UINT16 else ()):
        if name not in group:
            raise InputError("%s: no dataset %s (encoding '%s')" % (where, name, encoding))
    indptr = group["indptr"][()]
    data = group["data"][()]
    if encoding == PER_SPOT_UINT16:
        data = data * np.repeat(group["scale"][()], np.diff(indptr))
    elif encoding != PER_SPOT_FLOAT32:
        raise InputError("%s: encoding '%s': expected '%s' or '%s'"
                         % (where, encoding, PER_SPOT_UINT16, PER_SPOT_FLOAT32))
    shape = tuple(int(n) for n in group["shape"][()])
    return sp.csr_matrix((data.astype(dtype, copy=False), group["indices"][()], indptr), shape=shape)


def _coordinate_scale(ds, dim):
    scales = ds.dims[dim]
    return scales[0][()] if len(scales) else None


def _read_plain_hdf5(path, dataset):
    with _open(path) as f:
        if dataset is None:
            cands = []
            f.visititems(lambda n, o: cands.append(n) if isinstance(o, h5py.Dataset) and o.ndim == 2 else None)
            if "dose" in cands:
                dataset = "dose"
            elif len(cands) == 1:
                dataset = cands[0]
            else:
                raise InputError("%s: %s; name it as %s:/path/to/dataset"
                                 % (path, "no 2-D dataset" if not cands else
                                    "several 2-D datasets (%s)" % ", ".join("/" + c for c in cands), path))
        dataset = dataset.lstrip("/")
        if dataset not in f or not isinstance(f[dataset], h5py.Dataset):
            raise InputError("%s: no dataset /%s" % (path, dataset))
        ds = f[dataset]
        if ds.ndim != 2:
            raise InputError("%s:/%s: expected a 2-D dose array [nz][nx], got shape %s" % (path, dataset, ds.shape))
        group = ds.parent
        coords = []
        for dim, names in ((0, ("z_mm", "z_centres_mm")), (1, ("x_mm", "x_centres_mm"))):
            c = _coordinate_scale(ds, dim)
            if c is None:
                found = [n for n in names if n in group]
                if not found:
                    raise InputError("%s:/%s: no coordinates for dimension %d: attach a dimension scale, "
                                     "or put a 1-D dataset %s (cell centres, mm) beside it"
                                     % (path, dataset, dim, " or ".join(names)))
                c = group[found[0]][()]
            c = np.asarray(c, dtype=float)
            _check_axis(path, "/%s dimension %d" % (dataset, dim), c)
            if len(c) != ds.shape[dim]:
                raise InputError("%s:/%s: dimension %d has %d values but %d coordinates"
                                 % (path, dataset, dim, ds.shape[dim], len(c)))
            coords.append(c)
        values = np.asarray(ds[()], dtype=float)
        units = text(ds.attrs.get("units", b""))
    return Dose2D(values=values, z=coords[0], x=coords[1], units=units,
                  quantity=dataset.rsplit("/", 1)[-1], source="%s:/%s" % (path, dataset))


def _number(path, line, col, s, what):
    try:
        v = float(s)
    except ValueError:
        raise InputError("%s:%d:%d: %s '%s' is not a number" % (path, line, col, what, s.strip()))
    if not math.isfinite(v):
        raise InputError("%s:%d:%d: %s '%s' is not finite" % (path, line, col, what, s.strip()))
    return v


def read_csv(path):
    """A dose matrix in CSV: '#' lines are comments; the first row holds a label
    and then the x centres (mm); each further row a z centre (mm) and then the
    doses along x. Columns are numbered from 1 in messages."""
    try:
        with open(path, newline="") as fh:
            lines = list(enumerate(fh, start=1))
    except OSError as e:
        raise InputError("%s: cannot be read (%s)" % (path, e.strerror or e))
    rows = [(n, next(csv.reader([l]))) for n, l in lines if l.strip() and not l.lstrip().startswith("#")]
    if len(rows) < 2:
        raise InputError("%s: expected a header row (label, x centres in mm) and at least one row of doses" % path)
    hn, header = rows[0]
    if len(header) < 2:
        raise InputError("%s:%d: the header needs a label and at least one x centre (mm)" % (path, hn))
    x = np.array([_number(path, hn, i + 1, s, "x centre") for i, s in enumerate(header) if i > 0])
    z, values = [], []
    for n, r in rows[1:]:
        if len(r) != len(header):
            raise InputError("%s:%d: %d columns, the header has %d" % (path, n, len(r), len(header)))
        z.append(_number(path, n, 1, r[0], "z centre"))
        values.append([_number(path, n, i + 1, s, "dose") for i, s in enumerate(r) if i > 0])
    z = np.array(z)
    _check_axis(path, "first column (z centres)", z)
    _check_axis(path, "header (x centres)", x)
    return Dose2D(values=np.array(values), z=z, x=x, units="", quantity="dose", source=path)


def split_spec(spec):
    """'file.h5:/group/ds' -> ('file.h5', 'group/ds'); a plain path -> (path, None)."""
    head, sep, tail = spec.rpartition(":")
    if sep and tail.startswith("/") and head:
        return head, tail
    return spec, None


def load_dose(spec, quantity="dose_Gy"):
    """Any 2-D dose map these tools compare: a result file (its /dose/QUANTITY),
    an HDF5 file's 2-D dataset with its coordinates (FILE.h5 or FILE.h5:/path),
    or a CSV matrix (FILE.csv)."""
    path, dataset = split_spec(spec)
    if path.lower().endswith(".csv"):
        if dataset is not None:
            raise InputError("%s: a CSV file has no datasets (drop ':%s')" % (spec, dataset))
        return _ascending(read_csv(path))
    with _open(path) as f:
        result = is_result(f)
    if result and (dataset is None or dataset.strip("/") == "dose/" + quantity):
        return read_result(path, quantity).dose
    return _ascending(_read_plain_hdf5(path, dataset))
