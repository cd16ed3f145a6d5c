"""The benchmark runs and reports consistent figures (no timing is asserted)."""

import math

import pytest
import torch

from rsutils.cli.bench import BenchSettings, benchmark, benchmark_modes, benchmark_variants
from rsutils.core.noise import Gaussian


def test_benchmark_reports_both_throughputs_and_their_ratio(cnn) -> None:
    result = benchmark(cnn, (1, 28, 28), Gaussian(0.25), BenchSettings(50, 2, 3), num_classes=10)
    assert result.inputs == 100
    assert result.raw_per_second > 0 and result.sampling_per_second > 0
    low, high = result.ratio_range
    assert low <= result.ratio <= high
    assert result.noise_per_second > 0 and 0 < result.noise_bound < 1
    assert result.best_raw_per_second >= result.raw_per_second
    assert result.best_sampling_per_second >= result.sampling_per_second
    assert math.isnan(result.best_prefetch_ratio), "the overlapped loop is timed only when asked"


def test_the_overlapped_loop_is_timed_in_the_same_rounds_when_asked(cnn) -> None:
    timing = BenchSettings(50, 2, 2, prefetch=True)
    result = benchmark(cnn, (1, 28, 28), Gaussian(0.25), timing, num_classes=10)
    assert result.best_prefetch_per_second > 0 and result.best_prefetch_ratio > 0


def test_every_mode_is_timed_against_fp32_first(cnn) -> None:
    results = benchmark_modes(
        cnn, (1, 28, 28), Gaussian(0.25), BenchSettings(20, 1, 2), num_classes=10,
        modes=["bf16", "channels_last"],
    )  # fmt: skip
    assert [r.inference for r in results] == ["fp32", "bf16", "channels_last"]
    assert all(r.raw_per_second > 0 and r.sampling_per_second > 0 for r in results)


def test_both_samplers_are_timed_per_mode_in_the_same_rounds(cnn) -> None:
    results = benchmark_modes(
        cnn, (1, 28, 28), Gaussian(0.25), BenchSettings(20, 1, 2), num_classes=10,
        modes=["fp32"], samplers=["plain", "sound"],
    )  # fmt: skip
    assert [(r.inference, r.sampler) for r in results] == [("fp32", "plain"), ("fp32", "sound")]
    assert all(r.noise_per_second > 0 and r.best_sampling_per_second > 0 for r in results)


def test_the_sound_sampler_refuses_an_input_off_the_grid(cnn) -> None:
    off_grid = torch.full((1, 28, 28), 0.5 / 255)
    with pytest.raises(ValueError, match="grid"):
        benchmark_variants(
            cnn, (1, 28, 28), Gaussian(0.25), [("fp32", "sound")], BenchSettings(20, 1, 1),
            num_classes=10, x=off_grid,
        )  # fmt: skip


def test_the_default_input_is_on_the_grid_so_every_sampler_takes_it(cnn) -> None:
    (result,) = benchmark_variants(
        cnn, (1, 28, 28), Gaussian(0.25), [("bf16", "sound")], BenchSettings(20, 1, 1),
        num_classes=10,
    )  # fmt: skip
    assert (result.inference, result.sampler) == ("bf16", "sound")


def bench_output(capsys, *options: str) -> str:
    """What ``python -m rsutils bench --batch 20 --batches 2 OPTIONS`` prints, its main
    function run here (the process boundary is not what these tests check)."""
    from rsutils.cli import main

    assert main(["bench", "--batch", "20", "--batches", "2", *options]) == 0
    return capsys.readouterr().out


def test_bench_command_names_the_sound_rows(capsys) -> None:
    output = bench_output(
        capsys, "--rounds", "2", "--inference", "fp32", "--sampler", "plain", "sound"
    )
    rows = [line.split()[0] for line in output.splitlines() if line.startswith("fp32")]
    assert rows == ["fp32", "fp32+sound"]


def test_bench_command_prints_the_ratio(capsys) -> None:
    output = bench_output(capsys, "--rounds", "2")
    for word in ("raw", "sampling", "ratio", "bound", "best", "median of 2 rounds"):
        assert word in output
    assert all(mode in output for mode in ("fp32", "channels_last", "bf16_channels_last"))


def test_bench_command_times_anisotropic_noise(capsys) -> None:
    output = bench_output(
        capsys, "--rounds", "2", "--inference", "fp32", "--anisotropic", "--noise", "exp_linf"
    )
    assert "ratio" in output


def test_bench_command_times_the_overlapped_loop_over_the_rounds_asked(capsys) -> None:
    output = bench_output(
        capsys, "--rounds", "3", "--prefetch", "--inference", "bf16_channels_last"
    )
    assert "median of 3 rounds" in output
    header = next(line for line in output.splitlines() if line.startswith("mode "))
    assert header.split()[-2:] == ["prefetch", "rounds"]
    rows = [line.split() for line in output.splitlines() if line.startswith(("fp32", "bf16"))]
    assert [row[0] for row in rows] == ["fp32", "bf16_channels_last"]
