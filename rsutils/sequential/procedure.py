"""The protocol every fewer-draws procedure follows, its registry, and how one runs.

A procedure is one frozen object, its settings, that answers one input from its draws
(:class:`~rsutils.sequential.draws.Draws`): :meth:`Procedure.settle` reads the
selection counts and the prefixes of the estimation stream it needs, and returns an
:class:`Answer`. It states what it may read (``n_max`` estimation draws, selection
draws only if it ``selects``), its failure probability ``alpha``, what a log records of
it (:meth:`~Procedure.identity`), and its log's columns and rows. Everything else is
written once, for every procedure:

- :func:`settle` runs it live on one input (the base model runs only as far as the
  procedure reads) and :func:`replay` on recorded draws
  (:class:`~rsutils.sequential.record.DrawRecord`): the same answer, draw for draw;
- :func:`~rsutils.sequential.runs.run_procedure` runs it over a dataset into a
  resumable log, :func:`~rsutils.sequential.runs.replay_log` over a record log;
- :func:`~rsutils.sequential.coverage.false_rate` counts its false certificates on
  draws whose answer is known;
- the book's cached experiments and the command line (``certify --procedure NAME``)
  find it in :data:`PROCEDURES` by its ``name``.

Adding a procedure is one module with one such class, registered with
:func:`register`, and its tests; the command-line options it takes are declared on the
class (its ``options``, each an :class:`Option`), from which ``certify`` builds its flags.

A :class:`Test` is the part of a decision procedure
(:class:`~rsutils.sequential.decisions.Decide`) that says when it looks and what it
tests there: spending ``alpha`` over looks, a confidence sequence, a published design,
Wald's sequential probability ratio test. Each owns its decisions (``settle``) and its
exact rule (:meth:`Test.rules`, a :class:`~rsutils.sequential.rules.LookRule` per
``p0``, from which :mod:`rsutils.sequential.coverage` computes its level and its cost
when every draw is in the class). Tests have a registry of their own, the one table
that names them (:data:`TESTS`): each entry (:class:`RegisteredTest`, added with
:func:`register_test` in the test's module) gives the name the command line takes
(``certify --procedure decide --test NAME``), the label the book shows, a one-line
description (the command line's help) and how the test is built from the most draws
and the level. Adding a test is one module with its class and its entry, imported by
:mod:`rsutils.sequential`, and its tests: the exact coverage check, the command line
and the book's tables of tests read it from the registry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

import torch

from rsutils.core.smooth import Smooth
from rsutils.core.streams import draw_seed
from rsutils.sequential.draws import Draws, live_draws
from rsutils.sequential.record import DrawRecord
from rsutils.sequential.rules import Rules

__all__ = [
    "PROCEDURES",
    "TESTS",
    "Answer",
    "Option",
    "Procedure",
    "RegisteredTest",
    "Test",
    "labelled_tests",
    "register",
    "register_test",
    "replay",
    "settle",
]


class Answer(Protocol):
    """What every procedure's answer states: the class it certifies
    (:data:`~rsutils.core.smooth.ABSTAIN` if none) and the largest radius it certifies
    that class at (0.0 if none), from which a false certificate is judged."""

    @property
    def prediction(self) -> int: ...

    @property
    def radius(self) -> float: ...


@dataclass(frozen=True)
class Option:
    """One command-line option of a procedure (``certify --procedure NAME``).

    ``name`` is the keyword of the procedure's ``from_options``, the flag ``--name``
    with dashes. ``takes`` says what the flag takes: ``"number"`` (a finite number
    >= 0), ``"numbers"`` (one or more of them), ``"switch"`` (nothing: given or not) or
    ``"name"`` (a key of ``choices``, a registry whose entries' ``description`` the help
    lists). ``help`` says what it does, ``metavar`` names its value there.
    """

    name: str
    help: str
    takes: Literal["number", "numbers", "switch", "name"] = "number"
    metavar: str | None = None
    choices: Mapping[str, Any] | None = None

    @property
    def flag(self) -> str:
        """The command line's flag, ``--`` and the name with dashes."""
        return "--" + self.name.replace("_", "-")


class Procedure(Protocol):
    """A fewer-draws procedure, its settings as one frozen object (see the module)."""

    name: ClassVar[str]
    #: The command-line options its ``from_options(n_max, alpha, **options)`` takes.
    options: ClassVar[tuple[Option, ...]]

    @property
    def n_max(self) -> int:
        """The most estimation draws it may read."""
        ...

    @property
    def alpha(self) -> float:
        """The failure probability, the level of every certificate it gives."""
        ...

    @property
    def selects(self) -> bool:
        """Whether it reads CERTIFY's ``n0`` selection draws (False: it tests a given
        label, for evaluation only)."""
        ...

    def settle(self, smooth: Smooth, draws: Draws) -> Any:
        """The answer for one input, from ``draws``."""
        ...

    def identity(self) -> dict[str, Any]:
        """What determines its answers besides the classifier, the input and the seed:
        what a log records and checks on resume, and a cache key holds."""
        ...

    def columns(self) -> list[str]:
        """The columns of its dataset log (``idx`` and ``time`` among them)."""
        ...

    def row(self, answer: Any, label: int) -> dict[str, Any]:
        """The log row of ``answer`` for an input of true ``label`` (but ``idx``,
        ``time`` and ``scale``)."""
        ...


class Test(Protocol):
    """When a decision procedure looks and what it tests there (see the module)."""

    @property
    def name(self) -> str:
        """Its name in :data:`TESTS`."""
        ...

    @property
    def n_max(self) -> int: ...

    @property
    def alpha(self) -> float: ...

    @property
    def randomized(self) -> bool:
        """Whether its decisions hold at a randomisation ``u`` (logged)."""
        ...

    def settle(self, smooth: Smooth, draws: Draws, tested: int, radii: Sequence[float]) -> list:
        """The :class:`~rsutils.sequential.decisions.Decision` at each of ``radii`` for
        class ``tested``, from one pass over ``draws``' estimation prefixes."""
        ...

    def rules(self, p0: float) -> Rules:
        """Its decision of ``pA > p0`` (``0 < p0 < 1``) as thresholds on the count at
        each look (:class:`~rsutils.sequential.rules.LookRule`), read off the decision
        functions its ``settle`` uses: one rule of weight 1, or for a randomised test
        one per interval of its ``u`` on which they are fixed, weighted by its length.
        The thresholds must be monotone in the count (more hits never stop it where
        fewer read on, nor leave it reading where fewer certify)."""
        ...

    def identity(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class RegisteredTest:
    """A test of :data:`TESTS`: its ``name`` (the command line's ``--test NAME``), the
    ``label`` the book shows it by, a one-line ``description`` (the command line's
    help) and ``make(n_max, alpha)``, the test with at most ``n_max`` draws at level
    ``alpha``. Calling the entry builds the test."""

    name: str
    label: str
    description: str
    make: Callable[[int, float], Test]

    def __call__(self, n_max: int, alpha: float) -> Test:
        """The test with at most ``n_max`` draws at level ``alpha``."""
        return self.make(n_max, alpha)


#: Every procedure, by name (:func:`register`).
PROCEDURES: dict[str, type] = {}
#: Every test of a decision procedure, by name (:func:`register_test`), in the order
#: :mod:`rsutils.sequential` imports their modules (the order the book shows them).
TESTS: dict[str, RegisteredTest] = {}


def register(cls: type) -> type:
    """Add a procedure class to :data:`PROCEDURES` under its ``name`` (a decorator)."""
    name = cls.name  # type: ignore[attr-defined]
    if name in PROCEDURES and PROCEDURES[name] is not cls:
        raise ValueError(f"a procedure named {name!r} is registered already")
    PROCEDURES[name] = cls
    return cls


def register_test(
    name: str, *, label: str, description: str, make: Callable[[int, float], Test]
) -> None:
    """Add a test of decision procedures to :data:`TESTS` (a :class:`RegisteredTest`)."""
    if name in TESTS:
        raise ValueError(f"a test named {name!r} is registered already")
    if any(entry.label == label for entry in TESTS.values()):
        raise ValueError(f"a test labelled {label!r} is registered already")
    TESTS[name] = RegisteredTest(name, label, description, make)


def labelled_tests(n_max: int, alpha: float) -> dict[str, Test]:
    """Every test of :data:`TESTS` with at most ``n_max`` draws at level ``alpha``, by
    its label, in the registry's order."""
    return {entry.label: entry(n_max, alpha) for entry in TESTS.values()}


def settle(
    procedure: Procedure,
    smooth: Smooth,
    x: torch.Tensor,
    *,
    n0: int = 100,
    batch_size: int = 1000,
    seed: int | None = None,
    index: int = 0,
    label: int | None = None,
) -> Any:
    """``procedure``'s answer for ``x``, live: CERTIFY's ``n0`` selection draws (if it
    selects) and the prefixes of its estimation stream for ``seed`` and ``index``
    that the procedure reads. ``label`` is ``x``'s true label, which an evaluation
    procedure tests. The guarantee is the procedure's (its class's text)."""
    seed = draw_seed() if seed is None else seed
    draws = live_draws(
        smooth, x, n0=n0 if procedure.selects else 0, n_max=procedure.n_max,
        batch_size=batch_size, seed=seed, index=index, label=label,
    )  # fmt: skip
    return procedure.settle(smooth, draws)


def replay(
    procedure: Procedure, smooth: Smooth, record: DrawRecord, *, label: int | None = None
) -> Any:
    """``procedure``'s answer on recorded draws: what :func:`settle` gives with the
    record's ``n0``, ``seed`` and ``index`` (the record must hold ``n_max`` draws)."""
    if procedure.n_max > record.n:
        raise ValueError(
            f"the procedure may read {procedure.n_max} draws but the record holds "
            f"{record.n}; record at least the draws the procedure may read "
            "(record_draws(..., n=n_max))"
        )
    return procedure.settle(smooth, record.draws(selects=procedure.selects, label=label))


def procedure_identity(procedure: Procedure) -> dict[str, Any]:
    """The procedure's name and :meth:`~Procedure.identity`, as logs and caches record it."""
    return {"procedure": procedure.name, **procedure.identity()}


def build(name: str, options: Mapping[str, Any]) -> Procedure:
    """The procedure ``name`` of :data:`PROCEDURES` from ``options`` (its
    ``from_options``), or a ``ValueError`` naming the known ones."""
    if name not in PROCEDURES:
        raise ValueError(f"unknown procedure {name!r}; known: {', '.join(sorted(PROCEDURES))}")
    return PROCEDURES[name].from_options(**options)  # type: ignore[attr-defined]
