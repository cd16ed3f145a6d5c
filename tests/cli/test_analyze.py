"""``python -m rsutils analyze``: tables on this library's logs and Cohen et al.'s
released ones, the plot, and each mistake in one line with exit status 2."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rsutils.analysis.metrics import average_certified_radius, certified_accuracy
from rsutils.cli.main import main
from rsutils.logs.read import read_log


def write_log(path: Path, radius, correct, *, idx=None) -> Path:
    """A log in Cohen et al.'s columns (``time`` in seconds) from radii and answers."""
    correct = np.asarray(correct, dtype=int)
    idx = np.arange(len(correct)) if idx is None else idx
    pd.DataFrame(
        {
            "idx": idx, "label": 3, "predict": np.where(correct == 1, 3, -1), "radius": radius,
            "correct": correct, "time": 0.25,
        }
    ).to_csv(path, sep="\t", index=False)  # fmt: skip
    return path


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """Two logs of the same 30 images; the second certifies each at a larger radius."""
    rng = np.random.default_rng(1)
    small = rng.uniform(0.0, 0.3, 30)
    a = write_log(tmp_path / "a.tsv", small, np.ones(30))
    b = write_log(tmp_path / "b.tsv", small + rng.uniform(0.4, 0.6, 30), np.ones(30))
    return a, b


def analyze(*args: str | Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of ``python -m rsutils analyze args``."""
    try:
        status = main(["analyze", *map(str, args)])
    except SystemExit as stop:
        status = int(stop.code or 0)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return status, out, err


def cells(section: str) -> dict[str, list[str]]:
    """A plain table's rows by their first cell (columns are two or more spaces apart)."""
    rows = [re.split(r"\s{2,}", line.strip()) for line in section.splitlines()]
    return {row[0]: row[1:] for row in rows}


def test_one_log_gives_its_summary(pair, capsys) -> None:
    status, out, _ = analyze(pair[0], "--radii", "0.25", "0", capsys=capsys)
    assert status == 0 and "minus" not in out
    rows = cells(out)
    assert rows["measure"] == ["a.tsv"] and rows["inputs"] == ["30"]
    assert rows["abstained"] == ["0.000"]
    log = read_log(pair[0])
    assert rows["ACR"] == [f"{average_certified_radius(log):.3f}"]
    assert rows["accuracy at r = 0"] == ["1.000 [0.884, 1.000]"]
    accuracy = certified_accuracy(log, 0.25)[0]
    assert rows["accuracy at r = 0.25"][0].startswith(f"{accuracy:.3f} [")
    assert rows["time"] == ["7.5 s"] and rows["time per input"] == ["0.25 s"]


def test_two_logs_are_compared_and_the_better_rises(pair, capsys) -> None:
    status, out, _ = analyze(*pair, "--radii", "0", "0.5", "--format", "markdown", capsys=capsys)
    assert status == 0
    assert "b.tsv minus a.tsv, paired over their 30 images" in out
    assert "| ACR | +" in out and out.count("\n| --- |") == 2
    acr = next(line for line in out.splitlines() if line.startswith("| ACR | +"))
    assert acr.endswith("| rises |")


def test_the_latex_format_is_a_tabular(pair, capsys) -> None:
    status, out, _ = analyze(*pair, "--format", "latex", "--each", capsys=capsys)
    assert status == 0 and out.count(r"\begin{tabular}") == 2 and "each row alone" in out


def test_the_plot_is_drawn(pair, tmp_path, capsys) -> None:
    status, out, _ = analyze(*pair, "--plot", tmp_path / "curves.png", capsys=capsys)
    assert status == 0 and out
    assert (tmp_path / "curves.png").read_bytes().startswith(b"\x89PNG")


def test_logs_of_different_images_are_refused_and_nothing_is_written(pair, tmp_path, capsys):
    other = write_log(tmp_path / "other.tsv", np.full(30, 0.5), np.ones(30), idx=np.arange(30) + 5)
    plot = tmp_path / "curves.svg"
    status, out, err = analyze(pair[0], other, "--plot", plot, capsys=capsys)
    assert status == 2 and out == "" and not plot.exists()
    assert err.startswith("error: other.tsv and a.tsv hold different images (25 in common")
    assert "pass --common to compare them on the 25 images" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (None, "no log at '.*log.tsv'; check the path"),
        ("a\tb\n1\t2\n", "is not a certification log: it lacks the columns"),
        ("idx\tlabel\tpredict\tradius\tcorrect\n", "holds no rows"),
        ("folder", "Is a directory"),
    ],
    ids=["missing", "not-a-log", "empty", "folder"],
)
def test_a_bad_log_is_one_line_and_status_2(tmp_path, capsys, text, message) -> None:
    path = tmp_path / "log.tsv"
    if text == "folder":
        path.mkdir()
    elif text is not None:
        path.write_text(text)
    status, out, err = analyze(path, capsys=capsys)
    assert status == 2 and out == "" and re.search(message, err) and err.count("\n") == 1
    assert "RSUTILS_REFERENCE" not in err


def test_a_bad_plot_path_is_refused_before_the_logs_are_read(pair, tmp_path, capsys) -> None:
    for plot, message in [
        (tmp_path / "curves.jpg", "name a .png, .svg, .pdf file"),
        (tmp_path / "no" / "curves.png", "no folder"),
    ]:
        status, out, err = analyze(tmp_path / "missing.tsv", "--plot", plot, capsys=capsys)
        assert status == 2 and out == "" and message in err, err


def test_without_matplotlib_the_plot_says_how_to_install_it(pair, tmp_path, capsys, monkeypatch):
    for name in [m for m in sys.modules if m.split(".")[0] == "matplotlib"]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    status, out, err = analyze(*pair, "--plot", tmp_path / "c.png", capsys=capsys)
    assert status == 2 and out == "" and not (tmp_path / "c.png").exists()
    assert "plotting needs matplotlib" in err and "pip install matplotlib" in err
    status, out, _ = analyze(*pair, capsys=capsys)  # the tables need no matplotlib
    assert status == 0 and "rises" in out


def test_the_help_is_plain_text(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["analyze", "--help"])
    out = capsys.readouterr().out
    assert "--radii" in out and "--plot FILE" in out and "(default: 0.95)" in out
    assert not any(markup in out for markup in ("``", ":func:", ":mod:"))


def cohen_cifar(reference: Path, trained: str, sigma: str) -> Path:
    return reference / f"cohen2019/certify/cifar10/resnet110/noise_{trained}/test/sigma_{sigma}"


def test_a_released_log_is_analysed_end_to_end(reference, tmp_path, capsys) -> None:
    """Cohen et al.'s CIFAR-10 logs: σ = 0.50 against σ = 0.25 on the same 500 images."""
    first, second = cohen_cifar(reference, "0.25", "0.25"), cohen_cifar(reference, "0.50", "0.50")
    plot = tmp_path / "cohen.svg"
    status, out, _ = analyze(first, second, "--radii", "0", "1", "--plot", plot, capsys=capsys)
    assert status == 0 and b"<svg" in plot.read_bytes()
    summary, comparison = (cells(section) for section in out.strip().split("\n\n"))
    logs = [read_log(first), read_log(second)]
    assert summary["measure"] == ["sigma_0.25", "sigma_0.50"]
    assert summary["inputs"] == ["500", "500"]
    assert summary["ACR"] == [f"{average_certified_radius(log):.3f}" for log in logs]
    assert summary["accuracy at r = 1"][0] == "0.000 [0.000, 0.007]"
    assert float(summary["time per input"][1].removesuffix(" s")) > 10  # Cohen's seconds
    gain = average_certified_radius(logs[1]) - average_certified_radius(logs[0])
    assert comparison["ACR"][0] == f"{gain:+.3f}" and comparison["ACR"][-1] == "rises"
    assert comparison["accuracy at r = 1"][-1] == "rises"


def test_released_logs_of_other_images_are_compared_on_those_they_share(reference, capsys):
    """Cohen et al.'s ImageNet log at σ = 0.25 stops after 427 of the 500 images: the
    advice is one that a released log can follow."""
    imagenet = reference / "cohen2019/certify/imagenet/resnet50"
    logs = [imagenet / "noise_0.25/test/sigma_0.25", imagenet / "noise_0.25/test/sigma_0.50"]
    status, out, err = analyze(*logs, capsys=capsys)
    assert status == 2 and out == "" and "hold different images (427 in common" in err
    assert "(sigma_0.25 holds only some of sigma_0.50's: a run that stopped?)" in err
    assert "pass --common to compare them on the 427 images they share" in err
    status, out, err = analyze(*logs, "--common", "--radii", "0", capsys=capsys)
    assert status == 0 and "paired over their 427 images" in out
    assert (
        err == "notice: --common: the 427 images all the logs hold are analysed, without "
        "the others (sigma_0.50 73)\n"
    )


def test_a_log_cut_by_a_stopped_run_is_read_without_its_cut_line(tmp_path, capsys) -> None:
    """The issue's log cut inside ``radius``: its complete rows, and a notice."""
    path = write_log(tmp_path / "log.tsv", [0.5, 0.25, 0.75], [1, 1, 1])
    text = path.read_text()
    path.write_text(text[: text.rindex("0.75")] + "0.")  # inside the last row's radius
    status, out, err = analyze(path, "--radii", "0", capsys=capsys)
    assert status == 0 and cells(out)["inputs"] == ["2"]
    assert err.startswith("notice: ") and "line 4 is cut (4 of 6 fields, no newline)" in err
    assert "run the command that wrote it again" in err and err.count("\n") == 1


def test_a_decision_log_is_summarised_at_its_radii(
    fake_fashion_mnist, tmp_path, capsys, run_cli
) -> None:
    from rsutils.models.architectures import build_model
    from rsutils.models.checkpoints import save_checkpoint

    model = tmp_path / "model.pt"
    save_checkpoint(build_model("small_cnn", "fashion-mnist"), model, arch="small_cnn",
                    dataset="fashion-mnist")  # fmt: skip
    decide = ["certify", "fashion-mnist", str(model), "0.25", str(tmp_path / "decide.tsv")]
    decide += ["--N0", "10", "--N", "64", "--max", "4", "--data-root", str(fake_fashion_mnist)]
    assert run_cli([*decide, "--quiet", "--procedure", "decide", "--radii", "0", "0.1"])[0] == 0
    status, out, err = analyze(tmp_path / "decide.tsv", capsys=capsys)
    assert status == 0 and err == "" and out.startswith("Decision logs")
    rows = cells(out.split("\n\n")[-1])
    assert rows["inputs"] == ["4"] and "accuracy at r = 0.1" in rows
    assert 10 <= float(rows["draws per input"][0]) <= 74
    status, out, err = analyze(tmp_path / "decide.tsv", "--plot", tmp_path / "c.png", capsys=capsys)
    assert status == 2 and "decision logs have none: drop --plot" in err
    assert not (tmp_path / "c.png").exists()


@pytest.mark.slow  # a subprocess imports torch
def test_the_command_runs_in_a_terminal(pair) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "rsutils", "analyze", *map(str, pair), "--radii", "0.5"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "b.tsv minus a.tsv" in result.stdout and "rises" in result.stdout
