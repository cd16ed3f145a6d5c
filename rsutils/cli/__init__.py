"""The command line, ``python -m rsutils certify|predict|train|bench``, and the
benchmark of the Monte Carlo loop against the model's raw throughput."""

from rsutils.cli.main import main

__all__ = ["main"]
