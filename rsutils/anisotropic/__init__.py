"""UCAN (anisotropic smoothing): the noise ``mu + sigma ⊙ eps`` over any isotropic
family, its certified regions, spatial patterns of ``sigma``, the noise parameter
generators that learn ``mu`` and ``sigma`` (and their training), certification through
a generator, and the tools that check what such certificates are worth: the mu-swap
probe, the soundness audit of input-dependent noise, and the certificate memory of
super-ellipsoid regions that makes such noise sound."""
