"""A patient's CT in and the dose out in clinical formats: smx2d-import-ct turns
an axial slice of a DICOM CT series (or a MetaImage volume) into the simulator's
CT input on the plan's depth x lateral grid, recording where that grid lies in
the patient; smx2d-export-dose writes a result's dose as a DICOM RT Dose and a
MetaImage placed back in the patient by those records.

Needs Python 3 with numpy, h5py and pydicom (Debian: python3-numpy,
python3-h5py, python3-pydicom). docs/dicom.md is the user guide.
"""
