"""Post-processing of smx2d-sim result files: reading them, their figures,
plots (smx2d-plot) and the gamma comparison of two dose maps (smx2d-compare).

Needs Python 3 with numpy, h5py and matplotlib (Debian: python3-numpy,
python3-h5py, python3-matplotlib). docs/postprocessing.md is the user guide.
"""
