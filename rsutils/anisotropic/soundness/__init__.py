"""What UCAN's certificates are worth: the book's critique of input-dependent noise.

The method is :mod:`rsutils.anisotropic`'s; this subpackage checks it, and nothing in
the method imports it: the soundness audit of certificates made with input-dependent
noise (:mod:`~rsutils.anisotropic.soundness.audit`), the classifier that is actually
deployed and its certificates through a memory of super-ellipsoid regions
(:mod:`~rsutils.anisotropic.soundness.deployed`), what the offset ``mu`` leaks of the
input (:mod:`~rsutils.anisotropic.soundness.leakage`), a Lipschitz bound on ``mu``
(:mod:`~rsutils.anisotropic.soundness.lipschitz`), the radius it makes sound for the
deployed classifier when sigma is constant (:mod:`~rsutils.anisotropic.soundness.sound`),
and the local radius an interval bound on the offset's move gives, with the ceiling of
that argument (:mod:`~rsutils.anisotropic.soundness.local`).
"""
