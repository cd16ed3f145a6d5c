"""Fewer draws for the same guarantee: every procedure that stops before CERTIFY's ``n``.

A procedure (:class:`~rsutils.sequential.procedure.Procedure`) is one frozen object, its
settings, whose ``settle`` answers one input from its draws
(:class:`~rsutils.sequential.draws.Draws`, live or recorded); each is written once:

- :class:`~rsutils.sequential.decisions.Decide`: is the input certified at each of
  some radii? Its test is one of :data:`~rsutils.sequential.procedure.TESTS`: a
  :class:`~rsutils.sequential.spending.LookSchedule` (alpha spent over a few looks,
  optionally randomised), an :class:`~rsutils.sequential.sequence.AnytimeSchedule` (a
  confidence sequence tested after every batch), a published design
  (:class:`~rsutils.sequential.published.PublishedTest`: Horváth et al.'s staged test,
  Voráček's betting and union-bound sequences) or Wald's sequential probability ratio
  test (:class:`~rsutils.sequential.sprt.WaldSPRT`). With ``true_label`` it tests the
  input's label instead of selecting a class: evaluation on a labelled test set;
- :class:`~rsutils.sequential.planned.PlannedDraws`: CERTIFY with a number of draws
  planned per input from its selection draws (Chen et al.);
- :class:`~rsutils.sequential.radius_looks.RadiusLooks`: CERTIFY with sequential looks
  at the radius itself;
- :class:`~rsutils.sequential.certify.Certify`: CERTIFY itself, to be replayed beside
  them.

Written once for all of them: :func:`~rsutils.sequential.procedure.settle` (live, one
input), :func:`~rsutils.sequential.procedure.replay` (recorded draws,
:mod:`rsutils.sequential.record`), :func:`~rsutils.sequential.runs.run_procedure` and
:func:`~rsutils.sequential.runs.replay_log` (a dataset),
:func:`~rsutils.sequential.coverage.false_rate` (the check of the level), the book's
cached experiment and the command line's ``certify --procedure NAME``, which find a
procedure by name in :data:`~rsutils.sequential.procedure.PROCEDURES`.

Each test owns its decisions, its exact rule
(:class:`~rsutils.sequential.rules.LookRule`, from which
:mod:`~rsutils.sequential.coverage` computes its level exactly and its draws at ``pA =
1``) and its entry of the registry (name, label, description, how it is built), so
adding a test is one module, imported below, and its tests: the exact coverage check,
the command line (``certify --procedure decide --test NAME``) and the book's tables of
tests find it in the registry. The modules of the tests are imported first, in the
order the book shows them (the registry keeps it).

This layer sits above :mod:`rsutils.core` (CERTIFY, the noise, the confidence bounds),
:mod:`rsutils.checks` (the classifier of the coverage check) and :mod:`rsutils.logs`
(the resumable dataset loop); nothing in those imports it.
"""

# isort: off
# The tests first, in the order they register: the registry's order, the book's.
from rsutils.sequential.spending import LookSchedule
from rsutils.sequential.sequence import AnytimeSchedule
from rsutils.sequential.horvath import HorvathStaged
from rsutils.sequential.voracek import VoracekBetting, VoracekUnionBound
from rsutils.sequential.sprt import WaldSPRT
from rsutils.sequential.published import PublishedTest

# isort: on
from rsutils.sequential.certify import Certify
from rsutils.sequential.coverage import CoverageRun, CoverageSetting, false_rate
from rsutils.sequential.decisions import Decide, Decision, Decisions, decisions_long
from rsutils.sequential.draws import Draws
from rsutils.sequential.planned import PlannedDraws
from rsutils.sequential.procedure import PROCEDURES, TESTS, Procedure, replay, settle
from rsutils.sequential.radius_looks import RadiusLooks, StoppedCertificate
from rsutils.sequential.record import DrawRecord, record_draws
from rsutils.sequential.runs import record_dataset, replay_log, run_procedure

__all__ = [
    "PROCEDURES",
    "TESTS",
    "AnytimeSchedule",
    "Certify",
    "CoverageRun",
    "CoverageSetting",
    "Decide",
    "Decision",
    "Decisions",
    "DrawRecord",
    "Draws",
    "HorvathStaged",
    "LookSchedule",
    "PlannedDraws",
    "Procedure",
    "PublishedTest",
    "RadiusLooks",
    "StoppedCertificate",
    "VoracekBetting",
    "VoracekUnionBound",
    "WaldSPRT",
    "decisions_long",
    "false_rate",
    "record_dataset",
    "record_draws",
    "replay",
    "replay_log",
    "run_procedure",
    "settle",
]
