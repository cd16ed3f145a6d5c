"""Every procedure behind the protocol (rsutils.sequential.procedure): the registry, the
replay that is the live procedure, and the level on draws whose answer is known.

The procedures are taken from the registries, so a procedure added to
:data:`~rsutils.sequential.procedure.PROCEDURES` (or a test to
:data:`~rsutils.sequential.procedure.TESTS`) is checked here without a line more."""

from __future__ import annotations

import json

import pytest
import torch

import rsutils as rs
from rsutils.sequential import Decide, replay, settle
from rsutils.sequential.coverage import (
    CoverageSetting,
    false_rate,
    live_false_rate,
    radius_beyond,
)
from rsutils.sequential.procedure import (
    PROCEDURES,
    TESTS,
    build,
    labelled_tests,
    register,
    register_test,
)

N0, N, ALPHA, SEED = 30, 1200, 0.01, 5
RADII = (0.0, 0.1, 0.25, 0.6)


def every_procedure(n_max: int, alpha: float, radii: tuple[float, ...]) -> dict[str, object]:
    """One instance of every registered procedure, each test of Decide both ways."""
    procedures: dict[str, object] = {}
    for name, cls in sorted(PROCEDURES.items()):
        if name == "decide":
            for test in sorted(TESTS):
                for true_label in (False, True):
                    options = {"radii": radii, "test": test, "true_label": true_label}
                    key = f"decide {test}{' label' * true_label}"
                    procedures[key] = cls.from_options(n_max, alpha, **options)
        elif "radius_loss" in [option.name for option in cls.options]:
            procedures[name] = cls.from_options(n_max, alpha, radius_loss=0.05)
        else:
            procedures[name] = cls.from_options(n_max, alpha)
    return procedures


PROCEDURE_NAMES = list(every_procedure(N, ALPHA, RADII))


def test_the_registries_hold_every_procedure_and_test() -> None:
    """The procedures; the tests in the order the book shows them (more may follow),
    each built by its entry under its name, with a label and a description of its own."""
    assert set(PROCEDURES) == {"certify", "decide", "planned", "radius-looks"}
    assert list(TESTS)[:6] == [
        "spending", "randomised", "sequence",
        "horvath-staged", "voracek-betting", "voracek-union-bound",
    ]  # fmt: skip
    for name, entry in TESTS.items():
        assert entry.name == name and entry(300, 0.05).name == name
    for field in ("label", "description"):
        texts = [getattr(entry, field) for entry in TESTS.values()]
        assert all(texts) and len(set(texts)) == len(texts), field
    assert list(labelled_tests(300, 0.05))[:3] == ["spending", "randomised", "confidence sequence"]
    with pytest.raises(ValueError, match="registered already"):
        register(type("Other", (), {"name": "planned"}))
    with pytest.raises(ValueError, match="a test named 'sequence' is registered already"):
        register_test("sequence", label="new", description="new", make=TESTS["sequence"].make)
    with pytest.raises(ValueError, match="labelled 'spending' is registered already"):
        register_test("new", label="spending", description="new", make=TESTS["sequence"].make)
    with pytest.raises(ValueError, match="unknown procedure 'nope'; known: certify"):
        build("nope", {})
    with pytest.raises(ValueError, match="unknown test"):
        Decide.from_options(100, 0.01, radii=(0.1,), test="nope")


@pytest.mark.parametrize("name", PROCEDURE_NAMES)
def test_each_procedure_states_what_it_reads_and_what_its_log_records(name) -> None:
    procedure = every_procedure(N, ALPHA, RADII)[name]
    assert procedure.n_max == N and procedure.alpha == pytest.approx(ALPHA)
    assert procedure.selects == (" label" not in name)
    json.dumps(procedure.identity())  # a log's settings and a cache key hold it
    assert {"idx", "time", "label", "seed"} <= set(procedure.columns())
    assert build(procedure.name, {"n_max": N, "alpha": ALPHA, **_options(procedure)}) == procedure


def _options(procedure) -> dict[str, object]:
    if isinstance(procedure, Decide):
        return {"radii": procedure.radii, "test": procedure.test.name,
                "true_label": procedure.true_label}  # fmt: skip
    return {option.name: getattr(procedure, option.name) for option in procedure.options}


@pytest.mark.parametrize("name", PROCEDURE_NAMES)
def test_the_replay_is_the_live_procedure(cnn, name) -> None:
    """On CERTIFY's recorded draws every procedure answers what it answers live, on
    the model, whatever the batch size."""
    procedure = every_procedure(N, ALPHA, RADII)[name]
    smooth = rs.Smooth(cnn, 10, rs.Gaussian(0.25))
    for index in (3, 4):
        x = torch.rand(1, 28, 28, generator=torch.Generator().manual_seed(index))
        record = rs.record_draws(smooth, x, N0, N, batch_size=97, seed=SEED, index=index)
        label = (record.selected + index) % 10
        live = settle(procedure, smooth, x, n0=N0, batch_size=64, seed=SEED, index=index,
                      label=label)  # fmt: skip
        assert replay(procedure, smooth, record, label=label) == live
        row = procedure.row(live, label)
        assert set(row) | {"idx", "time", "scale"} >= set(procedure.columns())


@pytest.mark.parametrize("name", PROCEDURE_NAMES)
def test_each_procedure_holds_its_level_at_the_worst_case(name) -> None:
    """pA = 0.9 at a point of exact radius d, radii just beyond d: no procedure certifies
    falsely more often than alpha + 3 s.e. over 1,000 runs at alpha = 0.05 on recorded
    Bernoulli draws, and a few runs with the classifier live agree."""
    procedure = every_procedure(600, 0.05, (0.0, radius_beyond()))[name]
    assert false_rate(procedure, 1000, CoverageSetting(seed=31)).holds
    assert live_false_rate(procedure, 8, CoverageSetting(seed=32)).holds


def test_the_live_and_recorded_checks_count_the_same_false_answers() -> None:
    """The live check and the recorded one count with one rule: a Certify at level 0.5
    on the classifier (pA = 0.9 so CERTIFY's radius at 1/2 is about d) certifies falsely
    in a share of runs both checks see; with 200 runs the two rates agree within their
    binomial spread."""
    procedure = PROCEDURES["certify"](200, 0.5)
    recorded = false_rate(procedure, 200, CoverageSetting(seed=33))
    live = live_false_rate(procedure, 200, CoverageSetting(seed=34))
    assert recorded.false > 0 and live.false > 0
    spread = 4 * (0.25 / 200) ** 0.5
    assert abs(recorded.rate - live.rate) < spread
