"""The device check runs its CPU part anywhere and says what it skipped without CUDA."""

from __future__ import annotations

import pytest
import torch

from rsutils.cli import device_check as check


@pytest.mark.slow  # timed rounds in four modes
def test_the_cpu_part_runs_and_the_gpu_part_is_named_when_skipped(monkeypatch) -> None:
    """The check's every CPU line, on the small CNN with a tenth of its draws (what is
    tested is that each part runs and says what it measured, not the timings)."""
    monkeypatch.setattr(check, "MODELS", {"small CNN": check.MODELS["small CNN"]})
    monkeypatch.setattr(check, "CPU_CERTIFY_DRAWS", 1000)
    monkeypatch.setattr(check, "BATCH_CHECK_DRAWS", 100)
    lines: list[str] = []
    skipped = check.device_check(lines.append)
    text = "\n".join(lines)
    for mode in ("fp32", "channels_last", "bf16", "bf16_channels_last"):
        assert f"small CNN   batch    200  {mode}" in text
        assert f"small CNN n = 1,000, {mode}" in text
        assert f"{mode:<19} own shape: flips" in text
    assert text.count("fixed rows bitwise invariant: True") == 4
    if torch.cuda.is_available():
        assert skipped == [] and "certificates equal on cuda" in text
    else:
        assert skipped and "no CUDA GPU here: skipped GPU throughput" in text


def test_the_help_says_what_the_check_runs_and_skips() -> None:
    text = " ".join(check.DESCRIPTION.split())
    for model in check.MODELS:
        assert model in text
    assert "Without CUDA it runs the CPU part and says what it skipped" in text
    assert "whether a draw's class depends on its batch" in text


def test_device_check_help_prints_the_description(capsys) -> None:
    from rsutils.cli.main import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["device-check", "--help"])
    # refilled to the terminal's width: the same words, in the same order
    assert " ".join(check.DESCRIPTION.split()) in " ".join(capsys.readouterr().out.split())
