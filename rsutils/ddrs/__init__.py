"""Data-dependent smoothing (Alfarra et al., 2022): sigma ascent, the per-sample sigma
of training, the smoothed classifier with a noise level per input, and the certificate
memory that keeps its answers sound."""
