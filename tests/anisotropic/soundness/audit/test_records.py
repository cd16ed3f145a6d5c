"""The records' summary (one row per image and search, an exact interval) and round trip."""

import numpy as np
import pytest
import torch
from scipy.stats import binomtest

from rsutils.anisotropic.soundness.audit import (
    POINT_COLUMNS,
    AuditSettings,
    DeployedClassifier,
    audit_certificate,
    frozen,
    record_from_dict,
    record_to_dict,
    summarize_audits,
)
from rsutils.checks.shifting import ShiftingParams, example_input, shifting_classifier

X = example_input()
SCALE = 1.0
SETTINGS = AuditSettings(alpha=0.001, n_verify=500, boundary=8, steps=20)


def audit(params, R, *, index=0, **changes):
    settings = SETTINGS.replace(**changes)
    deployed = DeployedClassifier(shifting_classifier(), params, SCALE, 2)
    return audit_certificate(deployed, X, 1, R, settings, index=index)


def test_the_summary_has_a_row_per_image_and_search_and_an_exact_interval(certificate) -> None:
    R = certificate.region_radius
    records = [
        audit(ShiftingParams(), R, index=0),
        audit(frozen(ShiftingParams(), X), R, index=1),
        audit(frozen(ShiftingParams(), X), R, index=2),
    ]
    summary = summarize_audits(records)
    table = summary.table
    assert list(zip(table["index"], table["search"], strict=True)) == [
        (0, "attack"), (0, "boundary"), (1, "attack"), (1, "boundary"), (2, "attack"),
        (2, "boundary"),
    ]  # fmt: skip
    assert table["points"].tolist() == [1, 8] * 3
    assert (table["contradictions"] + table["agrees"] + table["ambiguous"] == table["points"]).all()
    assert table.loc[table["index"] > 0, "contradictions"].sum() == 0
    assert (summary.images, summary.contradicted) == (3, 1)
    interval = binomtest(1, 3).proportion_ci(0.95, method="exact")
    assert (summary.low, summary.high) == (
        pytest.approx(interval.low),
        pytest.approx(interval.high),
    )
    assert summary.rate == pytest.approx(1 / 3)
    assert summary.row() == {
        "images": 3,
        "with a contradiction": 1,
        "rate": 0.333,
        "95% interval": f"[{interval.low:.2f}, {interval.high:.2f}]",
    }
    with pytest.raises(ValueError, match="at least one"):
        summarize_audits([])
    empty = summarize_audits([audit(ShiftingParams(), 0.0)])
    assert empty.table.empty and (empty.images, empty.contradicted) == (1, 0)


def test_a_records_rows_hold_its_settings_and_the_point_columns(certificate) -> None:
    record = audit(ShiftingParams(), certificate.region_radius, boundary=2, steps=3, seed=4)
    assert (record.alpha, record.n_verify, record.seed, record.scale) == (0.001, 500, 4, SCALE)
    assert record.point_alpha == pytest.approx(0.001 / 3)
    assert record.region == "ellipsoid" and record.input_range is None
    for row in record.rows():
        assert list(row) == ["index", "region", "certified", "R", *POINT_COLUMNS]
    with pytest.raises(ValueError, match="confidence must lie in"):
        summarize_audits([record], confidence=1.0)


@pytest.mark.parametrize("box", [None, (-50, 50)], ids=["region", "box"])
def test_a_record_survives_a_weights_only_round_trip(certificate, tmp_path, box) -> None:
    R = certificate.region_radius
    record = audit(ShiftingParams(), R, boundary=2, steps=3, n_verify=200, input_range=box)
    torch.save(record_to_dict(record), tmp_path / "r.pt")
    back = record_from_dict(torch.load(tmp_path / "r.pt", weights_only=True))
    assert back.rows() == record.rows() and back.contradicted == record.contradicted
    assert back.input_range == record.input_range == (None if box is None else (-50.0, 50.0))
    for a, b in zip(back.points, record.points, strict=True):
        assert np.array_equal(a.delta, b.delta) and a.verdict == b.verdict
