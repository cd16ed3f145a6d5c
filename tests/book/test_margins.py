"""The book's margins: one per kind of measure, each with a reason that stays true."""

from __future__ import annotations

from scipy.stats import binomtest

from rsutils.analysis.margins import Margins
from rsutils.book.margins import MARGIN_REASONS, MARGINS, margins_table
from rsutils.book.profiles import ANISOTROPIC_LAMBDA


def test_every_kind_of_measure_has_a_margin_and_a_reason() -> None:
    assert isinstance(MARGINS, Margins)
    assert set(MARGIN_REASONS) == {"acr", "accuracy"}
    table = margins_table()
    assert table.index.tolist() == ["ACR", "certified accuracy"]
    assert table["margin"].tolist() == [MARGINS.acr, MARGINS.accuracy]
    assert table["why"].str.len().min() > 80


def test_the_acr_margin_is_a_tenth_of_lambda_as_its_reason_says() -> None:
    assert "a tenth of the anisotropic chapters' λ = 0.5" in MARGIN_REASONS["acr"]
    assert ANISOTROPIC_LAMBDA == 0.5 and MARGINS.acr == ANISOTROPIC_LAMBDA / 10


def test_the_accuracy_margin_is_about_the_papers_own_resolution() -> None:
    """The reason: about the 95% Clopper–Pearson half-width of an accuracy near one
    half on 500 images (Cohen et al.'s released CIFAR-10 logs)."""
    interval = binomtest(250, 500).proportion_ci(0.95, method="exact")
    half_width = (interval.high - interval.low) / 2
    assert "500 test images" in MARGIN_REASONS["accuracy"]
    assert abs(MARGINS.accuracy - half_width) < 0.01  # 0.05 against 0.0445
