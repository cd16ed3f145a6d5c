"""Running CERTIFY or PREDICT over a dataset into resumable TSV logs (Cohen et al.'s
format), sharded across processes, and reading them back (:mod:`rsutils.logs.read`).
What the logs say is :mod:`rsutils.analysis`'s."""
