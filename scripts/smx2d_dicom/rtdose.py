"""A dose plane as a DICOM RT Dose: one frame of unsigned integers times Dose
Grid Scaling, in Gy, in the CT's frame of reference and placed where the plane
lies in the patient (Image Position and Orientation (Patient))."""
import datetime
import math

import numpy as np
import pydicom
from pydicom.dataset import FileDataset, FileMetaDataset
from pydicom.tag import Tag
from pydicom.uid import ExplicitVRLittleEndian, PYDICOM_IMPLEMENTATION_UID, generate_uid

RT_DOSE_STORAGE = "1.2.840.10008.5.1.4.1.1.481.2"
# DICOM's decimal strings (DS) hold at most 16 characters.
DS_MAX = 16


def ds_text(v):
    """A number as a DS of at most 16 characters, with as many digits as fit."""
    v = float(v)
    if v == 0.0:
        return "0"
    for digits in range(15, 0, -1):
        s = "%.*g" % (digits, v)
        if len(s) <= DS_MAX:
            return s
    raise ValueError("%r cannot be written as a DICOM decimal string" % v)


def dose_grid_scaling(dmax, bits):
    """(text, value) of the scaling s that Dose Grid Scaling (a DS) holds: the
    exact dmax / (2^bits - 1) rounded up to the most decimal digits a DS fits
    (11), so that the largest dose takes the largest integer and every value
    is within s / 2 of its dose after rounding."""
    top = 2.0 ** bits - 1.0
    if not dmax > 0:
        return "1", 1.0
    s = dmax / top
    for digits in range(11, 0, -1):
        e = math.floor(math.log10(s))
        unit = 10.0 ** (digits - 1)
        m = math.ceil(s / 10.0 ** e * unit)
        while True:
            text = "%.*fe%d" % (digits - 1, m / unit, e)
            if dmax / float(text) <= top:
                break
            m += 1  # the division above rounded the mantissa down
        if len(text) <= DS_MAX:
            return text, float(text)
    raise ValueError("a Dose Grid Scaling of %r cannot be written as a decimal string" % s)


def quantise(dose, bits):
    """(stored integers, scaling text, scaling): dose ~ stored * scaling."""
    if np.any(dose < 0) or not np.all(np.isfinite(dose)):
        raise ValueError("the dose has negative or non-finite values; an RT Dose holds doses >= 0")
    text, s = dose_grid_scaling(float(np.max(dose)), bits)
    stored = np.rint(dose / s).astype(np.uint32 if bits == 32 else np.uint16)
    return stored, text, s


def build(dose, position, row_dir, col_dir, row_spacing, col_spacing, identity, bits=32, slab_mm=1.0,
          comment="", description="", software=""):
    """An RT Dose dataset of dose[r][c] (Gy, >= 0), pixel (r, c) at
    position + c * col_spacing * row_dir + r * row_spacing * col_dir; `identity`
    carries the CT's FrameOfReferenceUID, patient and study (new UIDs where empty)."""
    stored, scaling_text, _ = quantise(np.asarray(dose, dtype=float), bits)
    sop_uid = generate_uid()
    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = RT_DOSE_STORAGE
    meta.MediaStorageSOPInstanceUID = sop_uid
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    meta.ImplementationClassUID = PYDICOM_IMPLEMENTATION_UID
    ds = FileDataset(None, {}, file_meta=meta, preamble=b"\0" * 128)
    now = datetime.datetime.now()
    date, time = now.strftime("%Y%m%d"), now.strftime("%H%M%S")
    ds.SpecificCharacterSet = "ISO_IR 192"  # UTF-8: whatever the CT's names hold
    ds.SOPClassUID, ds.SOPInstanceUID = RT_DOSE_STORAGE, sop_uid
    ds.InstanceCreationDate, ds.InstanceCreationTime = date, time
    ds.ContentDate, ds.ContentTime = date, time
    ds.Modality = "RTDOSE"
    ds.Manufacturer = "smx2d-sim"
    ds.SoftwareVersions = software[:64]
    # Patient and study: the CT's, so that a planning system files the dose with its images.
    for k in ("PatientName", "PatientID", "PatientBirthDate", "PatientSex", "StudyDate", "StudyTime",
              "ReferringPhysicianName", "StudyID", "AccessionNumber"):
        setattr(ds, k, identity.get(k, ""))
    ds.StudyInstanceUID = identity.get("StudyInstanceUID") or generate_uid()
    ds.SeriesInstanceUID = generate_uid()
    ds.SeriesNumber = ""
    ds.SeriesDescription = description[:64]
    ds.FrameOfReferenceUID = identity.get("FrameOfReferenceUID") or generate_uid()
    ds.PositionReferenceIndicator = identity.get("PositionReferenceIndicator", "")
    ds.InstanceNumber = 1
    # The plane: rows are depth, columns lateral; the 2-D model's slab is its thickness.
    ds.ImagePositionPatient = [ds_text(v) for v in position]
    ds.ImageOrientationPatient = [ds_text(v) for v in list(row_dir) + list(col_dir)]
    ds.PixelSpacing = [ds_text(row_spacing), ds_text(col_spacing)]
    ds.SliceThickness = ds_text(slab_mm)
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.Rows, ds.Columns = stored.shape
    ds.BitsAllocated = ds.BitsStored = bits
    ds.HighBit = bits - 1
    ds.PixelRepresentation = 0
    ds.NumberOfFrames = 1
    ds.FrameIncrementPointer = Tag(0x3004, 0x000C)  # Grid Frame Offset Vector
    ds.GridFrameOffsetVector = ["0"]
    ds.DoseUnits = "GY"
    ds.DoseType = "PHYSICAL"
    ds.DoseSummationType = "PLAN"
    ds.TissueHeterogeneityCorrection = ["IMAGE"]
    ds.DoseGridScaling = scaling_text
    ds.DoseComment = comment[:64]
    ds.PixelData = stored.astype(stored.dtype.newbyteorder("<")).tobytes()
    return ds


def save(ds, path):
    """Writes a DICOM Part 10 file (preamble, file meta, explicit VR little endian)."""
    if int(pydicom.__version__.split(".")[0]) >= 3:
        ds.save_as(path, enforce_file_format=True)
    else:
        ds.is_little_endian, ds.is_implicit_VR = True, False
        ds.save_as(path, write_like_original=False)


def read_dose(path):
    """(dose [rows][cols] in Gy, dataset) of an RT Dose file: the stored values times Dose Grid Scaling."""
    ds = pydicom.dcmread(path)
    return ds.pixel_array.astype(np.float64) * float(ds.DoseGridScaling), ds
