"""The command line: Cohen et al.'s arguments, resumable logs, clear errors."""

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest
import torch

from rsutils import read_log
from rsutils.ddrs.runs import DS_COLUMNS
from rsutils.logs.runner import CERTIFY_COLUMNS
from rsutils.memory import CertificateMemory
from rsutils.models.architectures import build_model
from rsutils.models.checkpoints import save_checkpoint


@pytest.fixture
def checkpoint(tmp_path):
    torch.manual_seed(0)
    path = tmp_path / "model.pt"
    save_checkpoint(
        build_model("small_cnn", "fashion-mnist"), path, arch="small_cnn", dataset="fashion-mnist"
    )
    return path


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "rsutils", *args]


def certify_args(data, checkpoint, out) -> list[str]:
    return cli(
        "certify",
        "fashion-mnist",
        str(checkpoint),
        "0.5",
        str(out),
        "--N0",
        "20",
        "--N",
        "1000",
        "--batch",
        "400",
        "--max",
        "30",
        "--data-root",
        str(data),
        "--quiet",
    )


def run_here(args: list[str], capsys) -> tuple[int, str]:
    """``args`` (a ``python -m rsutils`` command) run by its main function in this process:
    its exit status and standard error. The process boundary is not what these tests
    check; the kill/resume tests and the one below on bad input run real processes."""
    from rsutils.cli import main

    try:
        status = main(args[3:])
    except SystemExit as stop:
        status = int(stop.code or 0)
    return status, capsys.readouterr().err


def rows(path) -> int:
    return max(0, len(path.read_text().splitlines()) - 1) if path.exists() else 0


def kill_part_way(args: list[str], log) -> None:
    """Start the command, SIGKILL it once its log holds 5 of its 30 rows."""
    process = subprocess.Popen(args)
    deadline = time.monotonic() + 120
    while rows(log) < 5 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert 5 <= rows(log) < 30, "the run should have been killed part-way"


@pytest.mark.slow  # a subprocess per command
def test_killed_and_restarted_run_equals_an_uninterrupted_one(
    fake_fashion_mnist, checkpoint, tmp_path
) -> None:
    whole, resumed = tmp_path / "whole.tsv", tmp_path / "resumed.tsv"
    subprocess.run(certify_args(fake_fashion_mnist, checkpoint, whole), check=True)

    kill_part_way(certify_args(fake_fashion_mnist, checkpoint, resumed), resumed)

    subprocess.run(certify_args(fake_fashion_mnist, checkpoint, resumed), check=True)
    expected, actual = read_log(whole), read_log(resumed)
    assert list(actual.columns) == CERTIFY_COLUMNS
    assert len(actual) == 30
    pd.testing.assert_frame_equal(actual.drop(columns="time"), expected.drop(columns="time"))


@pytest.mark.slow  # a subprocess per command
def test_killed_data_dependent_run_resumes_with_the_same_memory(
    fake_fashion_mnist, checkpoint, tmp_path
) -> None:
    ds = ["--ascent-steps", "3", "--ascent-draws", "2"]
    whole, resumed = tmp_path / "whole.tsv", tmp_path / "resumed.tsv"
    subprocess.run([*certify_args(fake_fashion_mnist, checkpoint, whole), *ds], check=True)
    kill_part_way([*certify_args(fake_fashion_mnist, checkpoint, resumed), *ds], resumed)
    subprocess.run([*certify_args(fake_fashion_mnist, checkpoint, resumed), *ds], check=True)
    expected, actual = read_log(whole), read_log(resumed)
    assert list(actual.columns) == DS_COLUMNS and len(actual) == 30
    pd.testing.assert_frame_equal(actual.drop(columns="time"), expected.drop(columns="time"))
    with CertificateMemory(f"{resumed}.memory.sqlite") as memory:
        assert len(memory) == 30 and memory.violations() == []


def test_predict_command_writes_cohens_columns_first(
    fake_fashion_mnist, checkpoint, tmp_path, capsys
):
    out = tmp_path / "predict.tsv"
    args = cli(
        "predict",
        "fashion-mnist",
        str(checkpoint),
        "0.25",
        str(out),
        "--N",
        "200",
        "--skip",
        "10",
        "--data-root",
        str(fake_fashion_mnist),
        "--quiet",
    )
    assert run_here(args, capsys)[0] == 0
    log = read_log(out)
    assert list(log.columns[:5]) == ["idx", "label", "predict", "correct", "time"]
    assert list(log["idx"]) == [0, 10, 20, 30]


def test_cli_reports_bad_input_without_a_traceback(fake_fashion_mnist, checkpoint, tmp_path):
    args = certify_args(fake_fashion_mnist, checkpoint, tmp_path / "x.tsv")
    args[args.index("0.5")] = "-1"
    result = subprocess.run(args, capture_output=True, text=True)
    assert result.returncode == 2
    assert "error: argument sigma: must be a finite number > 0, got '-1'" in result.stderr
    assert "Traceback" not in result.stderr


def test_cli_refuses_a_checkpoint_of_another_dataset(tmp_path, capsys) -> None:
    path = tmp_path / "cifar.pt"
    save_checkpoint(
        build_model("cifar_resnet20", "cifar10"), path, arch="cifar_resnet20", dataset="cifar10"
    )
    args = cli("certify", "fashion-mnist", str(path), "0.25", str(tmp_path / "o.tsv"), "--quiet")
    status, err = run_here(args, capsys)
    assert status == 2 and "was trained on cifar10, not fashion-mnist" in err


def test_train_command_with_macer_and_data_dependent_sigma(fake_fashion_mnist, tmp_path) -> None:
    from rsutils.cli import main
    from rsutils.models.checkpoints import load_checkpoint

    out = tmp_path / "macer.pt"
    argv = ["train", "fashion-mnist", "small_cnn", str(out), "--noise-sd", "0.25"]
    argv += ["--epochs", "1", "--batch", "32", "--method", "macer", "--draws", "2"]
    argv += ["--ds-steps", "1", "--data-root", str(fake_fashion_mnist), "--quiet"]
    assert main(argv) == 0
    _, info = load_checkpoint(out)
    config = info["meta"]["train_config"]
    assert config["method"] == "macer" and config["objective"]["draws"] == 2
    assert config["ds"]["iterations"] == 1 and config["ds"]["draws"] == 1


def test_train_command_on_a_subset_records_it(fake_fashion_mnist, tmp_path) -> None:
    from rsutils.cli import main
    from rsutils.models.checkpoints import load_checkpoint

    out = tmp_path / "subset.pt"
    argv = ["train", "fashion-mnist", "small_cnn", str(out), "--noise-sd", "0.25"]
    argv += ["--epochs", "1", "--batch", "8", "--train-subset", "16"]
    assert main([*argv, "--data-root", str(fake_fashion_mnist), "--quiet"]) == 0
    _, info = load_checkpoint(out)
    assert info["meta"]["train_config"]["train_subset"] == 16


def test_certify_command_with_an_anisotropic_sigma_map(
    fake_fashion_mnist, checkpoint, tmp_path, capsys
):
    from rsutils.anisotropic.patterns import spatial_pattern
    from rsutils.logs.runner import ANISOTROPIC_COLUMNS

    sigma_path = tmp_path / "sigma.pt"
    torch.save(spatial_pattern(28, 28).float(), sigma_path)
    out = tmp_path / "aniso.tsv"
    args = certify_args(fake_fashion_mnist, checkpoint, out)
    args[args.index("--max") + 1] = "4"
    assert run_here([*args, "--sigma-map", str(sigma_path)], capsys)[0] == 0
    log = read_log(out)
    assert list(log.columns) == ANISOTROPIC_COLUMNS and len(log) == 4
    # A different map is a different noise: resuming the log with it is refused.
    torch.save(2 * spatial_pattern(28, 28).float(), sigma_path)
    status, err = run_here([*args, "--sigma-map", str(sigma_path)], capsys)
    assert status == 2 and "different settings (noise)" in err


def test_power_law_noise_needs_its_exponent_on_the_command_line(
    fake_fashion_mnist, checkpoint, tmp_path, capsys
):
    args = [
        *certify_args(fake_fashion_mnist, checkpoint, tmp_path / "p.tsv"),
        "--noise",
        "power_law",
    ]
    status, err = run_here(args, capsys)
    assert status == 2 and "needs its exponent" in err


def test_help_fits_the_terminal_width(monkeypatch, capsys) -> None:
    """Descriptions are refilled and long choice lists named by a metavar, so that
    every line of every command's help fits a 75-column terminal (the manual pages
    show them at that width)."""
    from rsutils.cli.main import build_parser

    monkeypatch.setenv("COLUMNS", "75")
    for command in ([], ["certify"], ["predict"], ["train"], ["bench"], ["device-check"]):
        with pytest.raises(SystemExit):
            build_parser().parse_args([*command, "--help"])
        too_long = [line for line in capsys.readouterr().out.splitlines() if len(line) > 75]
        assert too_long == [], command
