# Opens a result's XDMF sidecar in ParaView the way a user does (reader, Apply,
# default representation and camera), checks the mesh and values against the
# HDF5 file, and renders the default view to a PNG that must show the map.
#   pvpython tests/paraview_sidecar.py RESULT.xdmf RESULT.h5 READER OUT.png
# READER: xdmf2 (ParaView's "XDMF Reader") or xdmf3 ("Xdmf3 Reader S").
# Exit 0 when every check passes, 1 with a message otherwise; 77 when this
# pvpython cannot import h5py (the HDF5 file is then not checked: a skip).
import os
import sys


def finish(code):
    """Leaves without Python's teardown: pvpython's sys.exit() after a render
    window existed dies in X (GLXBadContext) and loses the exit status."""
    sys.stdout.flush()
    os._exit(code)


xdmf, h5, reader, png = sys.argv[1:5]
try:
    import h5py
    import numpy as np
except ImportError as e:
    print(f"SKIP: pvpython cannot import {e.name}")
    finish(77)

from paraview import servermanager
from paraview.simple import (GetActiveViewOrCreate, Render, ResetCamera, SaveScreenshot, Show,
                             XDMFReader, Xdmf3ReaderS)
from vtkmodules.util.numpy_support import vtk_to_numpy
from vtkmodules.vtkIOImage import vtkPNGReader

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


with h5py.File(h5, "r") as f:
    dose = f["/dose/dose_Gy"][...]
    xc = f["/axes/x_centres_mm"][...]
    zc = f["/axes/z_centres_mm"][...]
nz, nx = dose.shape

src = XDMFReader(FileNames=[xdmf]) if reader == "xdmf2" else Xdmf3ReaderS(FileName=[xdmf])
src.UpdatePipeline()
info = src.GetDataInformation()
check(info.GetNumberOfPoints() == nz * nx,
      f"{info.GetNumberOfPoints()} nodes, expected one per cell ({nz} x {nx})")

# x across, depth up, flat in VTK's z: the plane the default camera faces.
b = info.GetBounds()
tol = 1e-9 * max(1.0, abs(zc[-1]), abs(xc[0]), abs(xc[-1]))  # %.17g text round trip
want = (xc[0], xc[-1], zc[0], zc[-1], 0.0, 0.0)
check(all(abs(b[i] - want[i]) <= tol for i in range(6)),
      f"bounds {b}, expected x {want[0:2]}, y (depth) {want[2:4]}, z 0")

data = servermanager.Fetch(src)
arr = data.GetPointData().GetArray("dose_Gy")
check(arr is not None, "no point array dose_Gy")
if arr is not None:
    got = vtk_to_numpy(arr).reshape(nz, nx)  # VTK x fastest, as the HDF5 rows
    check(np.array_equal(got, dose), f"dose_Gy differs from the HDF5 file: max |diff| "
          f"{np.max(np.abs(got - dose)):.3g}")
    d = data.GetDimensions()
    check(tuple(d) == (nx, nz, 1), f"image dimensions {tuple(d)}, expected ({nx}, {nz}, 1)")

view = GetActiveViewOrCreate("RenderView")
view.ViewSize = [400, 400]
rep = Show(src, view)  # what Apply does: the reader's default representation
ResetCamera(view)
Render(view)
SaveScreenshot(png, view, ImageResolution=[400, 400])
check(rep.Representation in ("Slice", "Surface"),
      f"default representation {rep.Representation}: the map is not drawn")

r = vtkPNGReader()
r.SetFileName(png)
r.Update()
img = r.GetOutput()
w, h, _ = img.GetDimensions()
px = vtk_to_numpy(img.GetPointData().GetScalars()).reshape(h, w, -1)[:, :, :3]
background = px[0, 0]
covered = np.any(px != background, axis=2)
colours = {tuple(c) for c in px[covered]}
# The tiny plan's map is 21 x 24 cells with a pencil beam: it fills about a
# third of the view; an edge-on slab or an outline covers under 2 %.
print(f"{reader}: representation {rep.Representation}, {covered.mean():.1%} of the pixels "
      f"differ from the background, {len(colours)} colours")
check(covered.mean() > 0.15, f"only {covered.mean():.1%} of the pixels show data")
check(len(colours) >= 8, f"{len(colours)} colours: the map looks uniform")

for f in failures:
    print(f"FAIL ({reader}): {f}")
finish(1 if failures else 0)
