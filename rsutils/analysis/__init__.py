"""What certification logs say: the papers' curves and tables, and verdicts over replicates.

Reading a log is :func:`~rsutils.logs.read.read_log`'s; this layer turns logs into
measures and comparisons, apart from running them (:mod:`rsutils.logs`):
:mod:`~rsutils.analysis.metrics` (certified accuracy, ACR, their intervals and paired
differences, recertification at another level), :mod:`~rsutils.analysis.ceilings` (the
largest radius ``n`` draws can certify, and which inputs sit at it),
:mod:`~rsutils.analysis.printed` (tables as the papers print them),
:mod:`~rsutils.analysis.components` (the variance components of a models × images
design), :mod:`~rsutils.analysis.differences` (differences over images and retrained
models),
:mod:`~rsutils.analysis.power` (which effects a design of models × images can detect),
:mod:`~rsutils.analysis.verdicts` (the verdict rule, verdicts as values),
:mod:`~rsutils.analysis.margins` (the margin of each kind of measure),
:mod:`~rsutils.analysis.multiplicity` (Holm's correction within a family),
:mod:`~rsutils.analysis.grouped_differences` (a difference split by groups of images,
and against the best of several controls),
:mod:`~rsutils.analysis.report` (the tables of ``python -m rsutils analyze``),
:mod:`~rsutils.analysis.decision_logs` (what the logs of ``certify --procedure decide``
say, for those tables),
:mod:`~rsutils.analysis.pipe_table` (every Markdown table's writer) and
:mod:`~rsutils.analysis.plot` (its curves, drawn with matplotlib when asked).
"""
