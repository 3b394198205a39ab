"""The spots of one beam of a DICOM RT Ion Plan (pencil-beam scanning): each
spot's nominal energy, its position in IEC beam-limiting-device coordinates at
the isocentre and its meterset weight, with the beam's gantry angle, couch and
collimator angles, isocentre and patient position, read with pydicom and
checked for what the simulator's plane can take."""
import warnings
from dataclasses import dataclass

import numpy as np
import pydicom
from pydicom.errors import InvalidDicomError

from smx2d_post.result import InputError

RT_ION_PLAN_STORAGE = "1.2.840.10008.5.1.4.1.1.481.8"
# Angles are decimal text: 0.01 deg apart are the same angle written twice.
ANGLE_TOLERANCE_DEG = 0.01


@dataclass
class Spot:
    energy_MeV: float
    x_mm: float          # IEC beam-limiting-device X at the isocentre
    y_mm: float          # IEC beam-limiting-device Y (along the gantry's axis)
    meterset: float      # the spot's meterset weight
    fwhm_x_mm: float     # Scanning Spot Size's X (NaN when the plan gives none)


@dataclass
class IonBeam:
    source: str
    number: int
    name: str
    gantry_deg: float
    isocentre: np.ndarray
    patient_position: str
    frame: str
    spots: list
    mu_per_meterset: float   # BeamMeterset / FinalCumulativeMetersetWeight; NaN when the plan has no meterset


def _read(path):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ds = pydicom.dcmread(path)
    except InvalidDicomError:
        raise InputError("%s: not a DICOM file (no 'DICM' file meta header); expected a DICOM RT Ion Plan" % path)
    except (OSError, EOFError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise InputError("%s: cannot be read as DICOM, truncated or corrupt (%s: %s)" % (path, type(e).__name__, e))
    sop = str(ds.get("SOPClassUID", ""))
    if sop != RT_ION_PLAN_STORAGE:
        raise InputError("%s: SOP class %s (modality %s); expected an RT Ion Plan (%s)"
                         % (path, getattr(ds.get("SOPClassUID"), "name", sop or "not given"),
                            ds.get("Modality", "not given"), RT_ION_PLAN_STORAGE))
    return ds


def _choose(path, ds, which):
    beams = list(ds.get("IonBeamSequence", []))
    if not beams:
        raise InputError("%s: no Ion Beam Sequence (300A,03A2); expected at least one beam" % path)
    names = ", ".join("%s '%s'" % (b.get("BeamNumber"), b.get("BeamName", "")) for b in beams)
    if which is None:
        treat = [b for b in beams if b.get("TreatmentDeliveryType", "TREATMENT") == "TREATMENT"]
        if len(treat) != 1:
            raise InputError("%s: %d treatment beams (%s); expected one: choose with --beam NUMBER or NAME"
                             % (path, len(treat), names))
        return treat[0]
    for b in beams:
        if str(b.get("BeamNumber")) == which or str(b.get("BeamName", "")) == which:
            return b
    raise InputError("%s: no beam numbered or named '%s'; its beams: %s" % (path, which, names))


def _setup_position(ds, beam, path):
    num = beam.get("ReferencedPatientSetupNumber")
    for s in ds.get("PatientSetupSequence", []):
        if num is None or s.get("PatientSetupNumber") == num:
            pos = str(s.get("PatientPosition", "") or "")
            if pos:
                return pos
    raise InputError("%s: no Patient Position (0018,5100) in the Patient Setup Sequence for beam %s; expected one"
                     % (path, beam.get("BeamNumber")))


def _meterset(ds, beam):
    final = float(beam.get("FinalCumulativeMetersetWeight", 0) or 0)
    for fg in ds.get("FractionGroupSequence", []):
        for rb in fg.get("ReferencedBeamSequence", []):
            if rb.get("ReferencedBeamNumber") == beam.get("BeamNumber") and rb.get("BeamMeterset") is not None:
                if final > 0:
                    return float(rb.BeamMeterset) / final
    return float("nan")


def read_beam(path, which=None):
    """One beam of an RT Ion Plan file: an IonBeam with every spot of nonzero weight."""
    ds = _read(path)
    beam = _choose(path, ds, which)
    label = "%s: beam %s" % (path, beam.get("BeamNumber"))
    if str(beam.get("RadiationType", "")) != "PROTON":
        raise InputError("%s: radiation type %s; expected PROTON" % (label, beam.get("RadiationType", "not given")))
    if str(beam.get("ScanMode", "")) != "MODULATED":
        raise InputError("%s: scan mode %s; expected MODULATED (pencil-beam scanning): passive scattering and "
                         "uniform scanning have no spots" % (label, beam.get("ScanMode", "not given")))
    if int(beam.get("NumberOfRangeShifters", 0) or 0) > 0:
        raise InputError("%s: %s range shifter(s); expected none: a range shifter is not modelled"
                         % (label, beam.NumberOfRangeShifters))
    cps = list(beam.get("IonControlPointSequence", []))
    if not cps:
        raise InputError("%s: no Ion Control Point Sequence (300A,03A8); expected the beam's control points" % label)
    first = cps[0]
    for key, tag in (("GantryAngle", "(300A,011E)"), ("IsocenterPosition", "(300A,012C)"),
                     ("NominalBeamEnergy", "(300A,0114)")):
        if first.get(key) in (None, ""):
            raise InputError("%s: missing tag %s %s in the first control point; expected it" % (label, key, tag))
    state = {"GantryAngle": float(first.GantryAngle), "PatientSupportAngle": 0.0, "BeamLimitingDeviceAngle": 0.0,
             "NominalBeamEnergy": float(first.NominalBeamEnergy), "ScanningSpotSize": None}
    spots = []
    for i, cp in enumerate(cps):
        for key in state:
            if cp.get(key) not in (None, ""):
                state[key] = [float(v) for v in cp.get(key)] if key == "ScanningSpotSize" else float(cp.get(key))
        if abs(state["GantryAngle"] - float(first.GantryAngle)) > ANGLE_TOLERANCE_DEG:
            raise InputError("%s: the gantry turns (%g deg at control point 0, %g at %d); expected a fixed beam"
                             % (label, float(first.GantryAngle), state["GantryAngle"], i))
        for key, what in (("PatientSupportAngle", "couch (patient support) angle"),
                          ("BeamLimitingDeviceAngle", "collimator (beam limiting device) angle")):
            if abs(state[key]) > ANGLE_TOLERANCE_DEG:
                raise InputError("%s: %s %g deg at control point %d; expected 0: the plane is the gantry's"
                                 % (label, what, state[key], i))
        w = cp.get("ScanSpotMetersetWeights")
        if w is None:
            continue
        w = np.atleast_1d(np.array(w, dtype=float))
        pos = np.array(cp.get("ScanSpotPositionMap", []), dtype=float)
        if pos.size != 2 * w.size:
            raise InputError("%s: control point %d has %d spot weights and %d position values; expected two "
                             "values (x, y) per spot" % (label, i, w.size, pos.size))
        fwhm = state["ScanningSpotSize"][0] if state["ScanningSpotSize"] else float("nan")
        for (x, y), m in zip(pos.reshape(-1, 2), w):
            if m > 0:
                spots.append(Spot(state["NominalBeamEnergy"], float(x), float(y), float(m), fwhm))
    if not spots:
        raise InputError("%s: no spot with a meterset weight above 0; expected a scanned beam's spots" % label)
    return IonBeam(source=path, number=int(beam.get("BeamNumber", 0)), name=str(beam.get("BeamName", "")),
                   gantry_deg=float(first.GantryAngle), isocentre=np.array(first.IsocenterPosition, dtype=float),
                   patient_position=_setup_position(ds, beam, path), frame=str(ds.get("FrameOfReferenceUID", "")),
                   spots=spots, mu_per_meterset=_meterset(ds, beam))
