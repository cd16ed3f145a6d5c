"""The tables of ``python -m rsutils analyze``: numbers counted by hand, formats, the
paired comparison, refused logs, and the plot."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import beta, binomtest
from scipy.stats import t as student

from rsutils.analysis.plot import (
    MISSING_MATPLOTLIB,
    check_plot_path,
    plot_certified_accuracy,
    require_matplotlib,
)
from rsutils.analysis.report import (
    DEFAULT_MARGINS,
    comparison_table,
    default_radii,
    log_names,
    read_certification_log,
    read_logs,
    render,
    report,
    shown_summary,
    summary_table,
)
from rsutils.analysis.verdicts import Direction, Verdict
from rsutils.logs.resumable import ResumableLog
from rsutils.logs.runner import CERTIFY_COLUMNS

#: Five inputs in Cohen et al.'s columns: correct at radii 0.5, 0.1 and 0.3, one
#: abstention, one wrong answer at radius 0.9; 15 seconds in all.
TINY = """idx\tlabel\tpredict\tradius\tcorrect\ttime
0\t1\t1\t0.5\t1\t2.0
1\t2\t2\t0.1\t1\t3.0
2\t3\t-1\t0.0\t0\t1.0
3\t4\t5\t0.9\t0\t4.0
4\t5\t5\t0.3\t1\t5.0
"""


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def cohen_log(idx, radius, correct, *, label=0) -> pd.DataFrame:
    """A log in Cohen et al.'s columns from its radii and answers."""
    correct = np.asarray(correct, dtype=int)
    return pd.DataFrame(
        {
            "idx": idx, "label": label, "predict": np.where(correct == 1, label, label + 1),
            "radius": radius, "correct": correct, "time": 1.0,
        }
    )  # fmt: skip


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    return write(tmp_path / "tiny.tsv", TINY)


def test_the_summary_matches_counts_by_hand(tiny: Path) -> None:
    radii = [0.0, 0.25, 0.5, 1.0]
    table = summary_table({"tiny": read_certification_log(tiny)}, radii)
    row = table.loc["tiny"]
    assert row["inputs"] == 5 and row["abstained"] == pytest.approx(0.2)
    assert row["ACR"] == pytest.approx((0.5 + 0.1 + 0.3) / 5)
    expected = {0.0: 3, 0.25: 2, 0.5: 1, 1.0: 0}  # correct with radius >= r
    for r, count in expected.items():
        assert row[f"accuracy at {r:g}"] == pytest.approx(count / 5)
        interval = binomtest(count, 5).proportion_ci(0.95, method="exact")
        assert row[f"low at {r:g}"] == pytest.approx(interval.low)
        assert row[f"high at {r:g}"] == pytest.approx(interval.high)
    assert row["time (s)"] == pytest.approx(15.0)
    assert row["time per input (s)"] == pytest.approx(3.0)


def test_the_intervals_are_clopper_pearson_at_the_level_asked(tiny: Path) -> None:
    table = summary_table({"tiny": read_certification_log(tiny)}, [0.25], confidence=0.8)
    k, n, alpha = 2, 5, 0.2
    assert table.loc["tiny", "low at 0.25"] == pytest.approx(beta.ppf(alpha / 2, k, n - k + 1))
    assert table.loc["tiny", "high at 0.25"] == pytest.approx(beta.ppf(1 - alpha / 2, k + 1, n - k))


def test_the_libraries_own_logs_are_read_and_cohens_times_are_seconds(tmp_path: Path) -> None:
    ours = tmp_path / "ours.tsv"
    settings = {"alpha": 0.001, "n": 100}
    with ResumableLog(ours, CERTIFY_COLUMNS, settings) as log:
        for i, (radius, correct) in enumerate([(0.4, 1), (0.0, 0), (0.2, 1)]):
            row = {"idx": 10 * i, "label": 1, "predict": 1 if correct else -1, "radius": radius}
            row |= {"correct": correct, "time": 0.5, "selected": 1, "count": 90, "n0": 10}
            row |= {"n": 100, "alpha": 0.001, "pA_lower": 0.8, "scale": 0.25, "seed": 0}
            log.append(row)
    cohen = write(
        tmp_path / "cohen",
        "idx\tlabel\tpredict\tradius\tcorrect\ttime\n"
        "0\t0\t0\t0.165\t1\t0:02:31.238689\n100\t2\t2\t0.978\t1\t0:02:28.472100\n",
    )
    table = summary_table(read_logs([ours, cohen]), [0.0, 0.3])
    assert table.loc["ours.tsv", "accuracy at 0.3"] == pytest.approx(1 / 3)
    assert table.loc["ours.tsv", "time (s)"] == pytest.approx(1.5)
    assert table.loc["ours.tsv", "abstained"] == pytest.approx(1 / 3)
    assert table.loc["cohen", "time (s)"] == pytest.approx(151.238689 + 148.4721)


def test_names_keep_the_fewest_folders_that_tell_logs_apart() -> None:
    assert log_names(["a/noise/sigma_0.25", "b/noise/sigma_0.50"]) == ["sigma_0.25", "sigma_0.50"]
    assert log_names(["n_0.25/sigma_0.50", "n_1.00/sigma_0.50"]) == [
        "n_0.25/sigma_0.50", "n_1.00/sigma_0.50",
    ]  # fmt: skip
    assert log_names(["x/log.tsv", "x/log.tsv"]) == ["log.tsv", "log.tsv (2)"]
    assert log_names(["a/x", "b/x", "a/x"]) == ["a/x", "b/x", "a/x (2)"]


def test_the_default_radii_are_cohens_grid_up_to_the_largest_radius() -> None:
    def radii_of(top: float) -> list[float]:
        return default_radii({"a": cohen_log([0, 1], [top, 0.0], [1, 1])})

    assert radii_of(1.97) == [0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]
    assert radii_of(3.8) == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    assert radii_of(0.03) == pytest.approx([0.0, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03])
    assert default_radii({"a": cohen_log([0], [2.0], [0])}) == [0.0]  # only wrong answers


def test_each_format_looks_right(tiny: Path) -> None:
    logs = read_logs([tiny])
    shown = shown_summary(summary_table(logs, [0.0, 0.25]), [0.0, 0.25])
    assert shown.loc["accuracy at r = 0.25", "tiny.tsv"] == "0.400 [0.053, 0.853]"
    plain = render(shown, "plain", caption="A caption.").splitlines()
    assert plain[0] == "A caption." and plain[1].split() == ["measure", "tiny.tsv"]
    assert not {"|", "\\", "`", "*"} & set("".join(plain))
    assert len({line.index("tiny.tsv") for line in plain[1:2]}) == 1
    markdown = render(shown, "markdown").splitlines()
    assert markdown[0] == "| measure | tiny.tsv |" and markdown[1] == "| --- | ---: |"
    assert all(line.startswith("| ") and line.endswith(" |") for line in markdown)
    assert len(markdown) == 2 + len(shown)
    latex = render(shown.rename(columns={"tiny.tsv": "a_b"}), "latex", caption="50% & more")
    assert r"\begin{tabular}{lr}" in latex and r"\end{tabular}" in latex
    assert r"\caption{50\% \& more}" in latex and r"measure & a\_b \\" in latex
    with pytest.raises(ValueError, match="format must be one of plain, markdown, latex"):
        render(shown, "html")


def test_the_report_has_the_summary_then_each_comparison(tiny: Path) -> None:
    logs = read_logs([tiny, tiny])
    text = report(logs, [0.0, 0.5], fmt="markdown")
    assert text.count("\n| --- |") == 2 and "tiny.tsv (2) minus tiny.tsv" in text
    # the same log: every difference is 0; the ACR's spread is 0, the accuracies are
    # bounded by the share of 5 images that could disagree (none seen): undecided
    assert "equivalent within ±0.02" in text and "[-0.522, +0.522] | undecided" in text
    assert report(read_logs([tiny]), fmt="latex").count(r"\begin{tabular}") == 1


def dominating_pair(images: int = 40) -> dict[str, pd.DataFrame]:
    """Log b certifies every image of log a at a larger radius."""
    rng = np.random.default_rng(0)
    small = rng.uniform(0.05, 0.2, images)
    larger = small + rng.uniform(0.3, 0.5, images)
    idx = np.arange(images) * 10
    return {"a": cohen_log(idx, small, np.ones(images)), "b": cohen_log(idx, larger, 1)}


def test_a_log_that_dominates_rises_with_the_one_sample_t_interval() -> None:
    logs = dominating_pair()
    table = comparison_table(logs, [0.0, 0.25])
    acr = table.loc[("b", "ACR")]
    d = logs["b"]["radius"].to_numpy() - logs["a"]["radius"].to_numpy()
    half = student.ppf(0.975, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    assert acr["difference"] == pytest.approx(d.mean())
    assert (acr["low"], acr["high"]) == pytest.approx((d.mean() - half, d.mean() + half))
    assert acr["verdict"] == Verdict(Direction.RISES)
    assert table.loc[("b", "accuracy at 0.25"), "verdict"].rises
    # every image certified by both at r = 0: 40 images bound the difference by
    # 1 − 0.025^(1/40) = 0.088, too wide for equivalence within ±0.01
    at_0 = table.loc[("b", "accuracy at 0")]
    assert str(at_0["verdict"]) == "undecided" and at_0["high"] == pytest.approx(0.088, abs=1e-3)
    assert set(table["tests"]) == {6}  # one family: 3 rows, a difference and a TOST each
    reversed_ = comparison_table({"b": logs["b"], "a": logs["a"]}, [0.25])
    assert reversed_.loc[("a", "ACR"), "verdict"].falls


def test_the_margin_decides_equivalence() -> None:
    logs = dominating_pair()
    wide = DEFAULT_MARGINS.scaled(50)  # an ACR margin of 1: the gain is within it
    table = comparison_table(logs, [0.25], margins=wide, family=False)
    assert str(table.loc[("b", "ACR"), "verdict"]) == "rises, within ±1"
    assert set(table["tests"]) == {2}


def test_logs_of_different_images_are_refused_with_the_fix() -> None:
    logs = dominating_pair()
    logs["b"] = logs["b"].assign(idx=logs["b"]["idx"] + 1)
    with pytest.raises(ValueError, match=r"^b and a hold different images \(0 in common") as e:
        report(logs, [0.0])
    assert "--skip" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a\tb\n1\t2\n", r"lacks the columns \['idx', 'label', 'predict', 'radius', 'correct'\]"),
        ("idx\tlabel\tpredict\tcorrect\ttime\n0\t1\t1\t1\t0.1\n", r"\['radius'\] \(a prediction"),
        ("idx\tlabel\tpredict\tradius\tcorrect\ttime\n", "holds no rows"),
        ("", "is not a certification log"),
        (TINY + "4\t5\t5\t0.3\t1\t5.0\n", "holds an idx twice"),
        (TINY.replace("0.5\t1", "big\t1"), "row 1: the column radius holds 'big', not a number"),
    ],
    ids=["not-a-log", "prediction-log", "empty", "empty-file", "twice", "not-numbers"],
)
def test_what_is_not_a_certification_log_is_refused_in_one_line(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path / "log.tsv", text)
    with pytest.raises(ValueError, match=message) as error:
        read_certification_log(path)
    assert "\n" not in str(error.value) and "log.tsv" in str(error.value)


def test_a_binary_file_is_not_a_log(tmp_path: Path) -> None:
    path = tmp_path / "model.pt"
    path.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(ValueError, match=r"model\.pt' is not a certification log"):
        read_certification_log(path)


def test_the_book_judges_with_the_default_margins() -> None:
    from rsutils.book.margins import MARGINS

    assert DEFAULT_MARGINS == MARGINS


@pytest.mark.parametrize(("suffix", "start"), [(".png", b"\x89PNG"), (".svg", b"<?xml")])
def test_the_plot_is_written(tmp_path: Path, suffix: str, start: bytes) -> None:
    path = plot_certified_accuracy(dominating_pair(), tmp_path / f"curves{suffix}", radii=[0, 0.5])
    data = path.read_bytes()
    assert data.startswith(start) and len(data) > 1000
    if suffix == ".svg":
        assert b"<svg" in data and b"<dc:date>" not in data  # the same logs, the same file
        again = plot_certified_accuracy(dominating_pair(), tmp_path / "again.svg", radii=[0, 0.5])
        assert again.read_bytes() == data


def test_the_plot_path_is_checked_first(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"name a \.png, \.svg, \.pdf file"):
        check_plot_path(tmp_path / "curves.jpg")
    with pytest.raises(ValueError, match="no folder"):
        check_plot_path(tmp_path / "missing" / "curves.png")
    (tmp_path / "folder.png").mkdir()
    with pytest.raises(ValueError, match="is a folder"):
        check_plot_path(tmp_path / "folder.png")
    assert check_plot_path(tmp_path / "curves.SVG") == tmp_path / "curves.SVG"


def test_without_matplotlib_the_plot_says_how_to_install_it(monkeypatch) -> None:
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ModuleNotFoundError, match=re.escape(MISSING_MATPLOTLIB)):
        require_matplotlib()
    assert "pip install matplotlib" in MISSING_MATPLOTLIB
