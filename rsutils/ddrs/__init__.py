"""Data-dependent smoothing (Alfarra et al., 2022): sigma ascent, data-dependent
training (each training sample's own sigma), the smoothed classifier with a noise level
per input, and the certificate memory that keeps its answers sound."""
