"""The certification core (Cohen et al., 2019), for any noise family.

Noise families and their certified radii, confidence bounds, the seeded Monte Carlo
loop, and :class:`~rsutils.core.smooth.Smooth` with PREDICT and CERTIFY. Nothing here
imports another part of rsutils.
"""
