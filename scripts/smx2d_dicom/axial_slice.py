"""One axial CT slice in patient coordinates, as both readers (DICOM, MetaImage)
give it, and its CT numbers sampled at any points of its plane."""
from dataclasses import dataclass, field

import numpy as np

# How far from the patient's z axis a slice's row and column directions may
# point and still count as axial: the z component of a direction cosine. DICOM
# writes cosines as decimal text, usually to 6 digits (rounding 5e-7); 1e-4
# tilts a 300 mm image's edge by 0.03 mm, a twentieth of a pixel.
AXIAL_TOLERANCE = 1e-4


@dataclass
class AxialSlice:
    """hu[r][c]: the CT number (after the rescale) of pixel row r, column c,
    whose centre is position + c * col_spacing * row_dir + r * row_spacing * col_dir
    (DICOM's Image Position and Orientation (Patient) and Pixel Spacing)."""
    hu: np.ndarray            # float64 [rows][cols]
    outside: np.ndarray       # bool [rows][cols]: padding (no data), sampled as the outside value
    position: np.ndarray      # patient mm of pixel (0, 0)'s centre
    row_dir: np.ndarray       # unit vector along a row (increasing column)
    col_dir: np.ndarray       # unit vector along a column (increasing row)
    row_spacing: float        # mm between rows (DICOM Pixel Spacing[0])
    col_spacing: float        # mm between columns (Pixel Spacing[1])
    source: str               # the file the pixels came from
    source_format: str        # "DICOM CT" or "MetaImage"
    slice_index: int = 0      # index in its series or volume, sorted by z
    n_slices: int = 1
    slice_thickness_mm: float = float("nan")
    rescale: tuple = (1.0, 0.0)   # slope, intercept applied to the stored values
    patient_position: str = ""    # DICOM Patient Position, "" when the input does not say
    # DICOM identity carried to the RT Dose (frame of reference, patient, study); empty for MetaImage.
    dicom: dict = field(default_factory=dict)

    @property
    def z_mm(self):
        return float(self.position[2])

    def sample(self, points, outside_hu):
        """CT numbers at patient points [..., 3] of this plane: bilinear between
        the four nearest pixel centres; `outside_hu` beyond the image (its pixels'
        outer edges) and where a neighbour is padding. Returns (values, outside mask)."""
        rel = np.asarray(points, dtype=float) - self.position
        c = rel @ self.row_dir / self.col_spacing
        r = rel @ self.col_dir / self.row_spacing
        rows, cols = self.hu.shape
        out = (r < -0.5) | (r > rows - 0.5) | (c < -0.5) | (c > cols - 0.5)
        # Between the outer pixel centres and the image's edges the nearest
        # centre's value holds (clamped): the image says nothing finer there.
        rc = np.clip(r, 0.0, rows - 1.0)
        cc = np.clip(c, 0.0, cols - 1.0)
        r0 = np.minimum(np.floor(rc).astype(int), max(rows - 2, 0))
        c0 = np.minimum(np.floor(cc).astype(int), max(cols - 2, 0))
        r1, c1 = np.minimum(r0 + 1, rows - 1), np.minimum(c0 + 1, cols - 1)
        fr, fc = rc - r0, cc - c0
        v = ((1 - fr) * (1 - fc) * self.hu[r0, c0] + (1 - fr) * fc * self.hu[r0, c1]
             + fr * (1 - fc) * self.hu[r1, c0] + fr * fc * self.hu[r1, c1])
        pad = self.outside[r0, c0] | self.outside[r0, c1] | self.outside[r1, c0] | self.outside[r1, c1]
        out = out | pad
        return np.where(out, float(outside_hu), v), out


def check_axial(source, row_dir, col_dir):
    """None when the slice is axial (both directions in the patient's xy plane);
    else what is wrong, for an error message."""
    if abs(row_dir[2]) > AXIAL_TOLERANCE or abs(col_dir[2]) > AXIAL_TOLERANCE:
        return ("%s: the image is not axial: its rows point along (%.6g, %.6g, %.6g) and its columns along "
                "(%.6g, %.6g, %.6g) in the patient; expected both in the patient's xy plane (z components "
                "within %g): oblique, sagittal and coronal images are not handled"
                % ((source,) + tuple(row_dir) + tuple(col_dir) + (AXIAL_TOLERANCE,)))
    if abs(float(np.dot(row_dir, col_dir))) > AXIAL_TOLERANCE:
        return "%s: the image's row and column directions are not perpendicular" % source
    return None
