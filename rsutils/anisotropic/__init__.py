"""UCAN (anisotropic smoothing): the noise ``mu + sigma ⊙ eps`` over any isotropic
family, its certified regions, and spatial patterns of ``sigma``."""
