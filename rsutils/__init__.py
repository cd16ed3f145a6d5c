"""rsutils: randomized-smoothing certification for PyTorch classifiers.

>>> from rsutils import Smooth, ABSTAIN, read_log, certified_accuracy
>>> from rsutils.noise import Gaussian
>>> smooth = Smooth(model, num_classes=10, noise=Gaussian(sigma=0.25))  # doctest: +SKIP
>>> cert = smooth.certify(x, n0=100, n=100_000, alpha=0.001, seed=0)    # doctest: +SKIP
"""

from rsutils.analysis import (
    average_certified_radius,
    certified_accuracy,
    certified_accuracy_lower_bound,
    read_log,
)
from rsutils.smooth import ABSTAIN, Certificate, Smooth

__version__ = "0.1.0"

__all__ = [
    "ABSTAIN",
    "Certificate",
    "Smooth",
    "__version__",
    "average_certified_radius",
    "certified_accuracy",
    "certified_accuracy_lower_bound",
    "read_log",
]
