"""Where the plan's grid lies in the patient: the beam's direction and the
lateral axis in DICOM patient coordinates (LPS: x to the patient's left, y to
the posterior, z to the head), from a gantry angle and the patient position.

The angle is IEC 61217's gantry angle with the couch at 0: at 0 the beam comes
from the ceiling, and the gantry turns clockwise as seen from the foot of the
couch, looking towards the gantry. In IEC fixed coordinates (X to the right of
that viewer, Y towards the gantry, Z up) the beam travels along
-(sin a, 0, cos a), and the gantry's X axis, the plan's lateral x (the beam's
eye view's x with the collimator at 0), is (cos a, 0, -sin a). The patient
position (DICOM's Patient Position, 0018,5100) says where IEC X and Z point in
the patient."""
import math
from dataclasses import dataclass

import numpy as np

# Patient position -> (IEC X, IEC Z) as patient (x, y) directions. IEC Y points to
# the gantry: the head (+z) head first, the feet feet first; Z is up: anterior (-y)
# supine, posterior (+y) prone; X = Y x Z.
POSITIONS = {
    "HFS": ((1.0, 0.0), (0.0, -1.0)),
    "FFS": ((-1.0, 0.0), (0.0, -1.0)),
    "HFP": ((-1.0, 0.0), (0.0, 1.0)),
    "FFP": ((1.0, 0.0), (0.0, 1.0)),
}


def _clean(v):
    """A unit vector with the cosines of right angles (6e-17) made 0, so that
    the files say 0 where the geometry is exact."""
    v = np.asarray(v, dtype=float)
    return np.where(np.abs(v) < 1e-15, 0.0, v)


@dataclass
class BeamFrame:
    """The plan's (depth z, lateral x) in the patient: the point at plan (z, x)
    is origin + z * depth_dir + x * lateral_dir (mm, patient coordinates)."""
    origin: np.ndarray      # patient position of the plan's z = 0, x = 0 (the entrance plane's centre)
    depth_dir: np.ndarray   # unit vector along the beam
    lateral_dir: np.ndarray  # unit vector of the plan's +x
    angle_deg: float
    patient_position: str
    isocentre: np.ndarray
    isocentre_depth_mm: float

    def to_patient(self, z, x):
        """Patient coordinates [..., 3] of plan points (z, x), in mm, broadcast."""
        z = np.asarray(z, dtype=float)[..., None]
        x = np.asarray(x, dtype=float)[..., None]
        return self.origin + z * self.depth_dir + x * self.lateral_dir


def beam_frame(angle_deg, patient_position, isocentre, isocentre_depth_mm):
    """The frame of a beam at gantry angle `angle_deg` through `isocentre`
    (patient mm), which lies at depth `isocentre_depth_mm` on the plan's x = 0."""
    if patient_position not in POSITIONS:
        raise ValueError("patient position '%s': expected one of %s (decubitus and other positions "
                         "are not handled)" % (patient_position, ", ".join(POSITIONS)))
    (xx, xy), (zx, zy) = POSITIONS[patient_position]
    a = math.radians(angle_deg)
    s, c = math.sin(a), math.cos(a)
    depth = _clean((-s * xx - c * zx, -s * xy - c * zy, 0.0))
    lateral = _clean((c * xx - s * zx, c * xy - s * zy, 0.0))
    iso = np.asarray(isocentre, dtype=float)
    return BeamFrame(origin=iso - isocentre_depth_mm * depth, depth_dir=depth, lateral_dir=lateral,
                     angle_deg=float(angle_deg), patient_position=patient_position, isocentre=iso,
                     isocentre_depth_mm=float(isocentre_depth_mm))
