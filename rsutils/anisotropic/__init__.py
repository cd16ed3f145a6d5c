"""UCAN (anisotropic smoothing): the noise ``mu + sigma ⊙ eps`` over any isotropic
family, its certified regions, spatial patterns of ``sigma``, the noise parameter
generators that learn ``mu`` and ``sigma`` (and their training), certification through
a generator, and the tools that check what such certificates are worth: the mu-swap
probe, the soundness audit of input-dependent noise, the certificate memory of
super-ellipsoid regions that makes such noise sound, and a radius sound for the deployed
classifier when sigma is constant (a Lipschitz bound on the offset ``mu``)."""
