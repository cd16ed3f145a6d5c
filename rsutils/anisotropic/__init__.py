"""UCAN (anisotropic smoothing): the noise ``mu + sigma ⊙ eps`` over any isotropic
family, its certified regions, spatial patterns of ``sigma``, the noise parameter
generators that learn ``mu`` and ``sigma`` (and their training), certification through
a generator, and UCAN's released generators.

The book's critique of the method (the soundness audit, the deployed classifier, the
offset's leakage and a radius sound for the deployed classifier) is
:mod:`rsutils.anisotropic.soundness`, which the method does not import."""
