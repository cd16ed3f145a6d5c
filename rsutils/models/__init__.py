"""Base classifiers and where they come from: the architectures rsutils trains
(:mod:`~rsutils.models.architectures`), its checkpoints and Cohen et al.'s
(:mod:`~rsutils.models.checkpoints`), the models users bring (torchvision names,
exported programs, TorchScript, pickled modules: :mod:`~rsutils.models.sources`, told
apart by :mod:`~rsutils.models.source_kinds`), and
whether a model fits a dataset (:mod:`~rsutils.models.dataset_fit`). Training them is
:mod:`rsutils.training`."""
