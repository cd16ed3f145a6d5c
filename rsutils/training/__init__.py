"""How base classifiers are trained: the objectives (noise augmentation, SmoothAdv,
MACER), the training loop, which takes each batch's per-sample sigmas from a
:class:`~rsutils.training.train.BatchSigmas` (data-dependent training's are
:mod:`rsutils.ddrs.training`), and the cost of a training step. The models themselves
are :mod:`rsutils.models`."""
