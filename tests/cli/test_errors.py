"""A command-line user's mistake is one line naming the file or value and the fix.

No traceback, exit status 2, and nothing left on disk: a rejected command must not
leave a log, sidecar or memory behind that would then refuse the corrected command.
"""

from __future__ import annotations

import argparse
import os
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest
import torch

from rsutils.anisotropic.patterns import spatial_pattern
from rsutils.cli.main import build_parser
from rsutils.models.architectures import build_model
from rsutils.models.checkpoints import save_checkpoint
from rsutils.sequential.procedure import TESTS


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    torch.manual_seed(0)
    path = tmp_path / "inputs" / "model.pt"
    path.parent.mkdir()
    save_checkpoint(
        build_model("small_cnn", "fashion-mnist"), path, arch="small_cnn", dataset="fashion-mnist"
    )
    return path


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """An empty folder for the command's outputs."""
    folder = tmp_path / "out"
    folder.mkdir()
    return folder


def certify(data: Path, model: Path, out: Path, *extra: str) -> list[str]:
    return [
        *("certify", "fashion-mnist", str(model), "0.25", str(out / "log.tsv")),
        *("--N0", "10", "--N", "50", "--max", "2", "--data-root", str(data), "--quiet"),
        *extra,
    ]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _random_bytes(path: Path) -> Path:
    return _write(path, np.random.default_rng(0).bytes(4096))


def _truncated(checkpoint: Path) -> Path:
    data = checkpoint.read_bytes()
    return _write(checkpoint.with_name("half.pt"), data[: len(data) // 2])


def _foreign_sqlite(path: Path) -> Path:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (name TEXT)")
        db.execute("INSERT INTO users VALUES ('ada')")
    db.close()
    return path


def _text(path: Path, text: str) -> Path:
    path.write_text(text + "\n")
    return path


def _with_generator(path: Path, generator: object) -> Path:
    """A checkpoint whose generator entry is ``generator`` (damaged, say)."""
    model = build_model("small_cnn", "fashion-mnist")
    checkpoint = {"format": "rsutils", "arch": "small_cnn", "dataset": "fashion-mnist"}
    torch.save({**checkpoint, "state_dict": model.state_dict(), "generator": generator}, path)
    return path


def _saved(path: Path, value: object) -> Path:
    torch.save(value, path)
    return path


# Each case: how to build the bad argument from (tmp inputs folder, checkpoint), the
# extra arguments, and the phrase the one-line error must contain.
CASES = {
    "corrupt-checkpoint": (
        lambda d, c: ["--checkpoint-file", str(_random_bytes(d / "bad.pt"))],
        r"bad.pt' is not a readable PyTorch checkpoint.*train it again",
    ),
    "truncated-checkpoint": (
        lambda d, c: ["--checkpoint-file", str(_truncated(c))],
        r"half.pt' is a zip archive cut short or damaged",
    ),
    "checkpoint-is-a-url-in-a-text-file": (
        lambda d, c: ["--checkpoint-file", str(_text(d / "weights.txt", "https://x.org/w.pt"))],
        r"weights.txt' is not a PyTorch checkpoint \(it is text: 'https://x.org/w.pt'\); "
        r"download the file it names",
    ),
    "checkpoint-is-text-read-as-a-pickle": (  # 'j' reads as a pickle opcode
        lambda d, c: ["--checkpoint-file", str(_text(d / "notes.txt", "jq"))],
        r"notes.txt' is not a PyTorch checkpoint \(it is text: 'jq'\); pass the file",
    ),
    "checkpoint-is-a-folder": (
        lambda d, c: ["--checkpoint-file", str(d)],
        r"is a directory, not a checkpoint file",
    ),
    "sigma-map-random-bytes-pt": (
        lambda d, c: ["--sigma-map", str(_random_bytes(d / "map.pt"))],
        r"--sigma-map .*map.pt is not a readable .npy array or torch-saved tensor",
    ),
    "sigma-map-random-bytes-npy": (
        lambda d, c: ["--sigma-map", str(_random_bytes(d / "map.npy"))],
        r"--sigma-map .*map.npy is not a readable",
    ),
    "sigma-map-not-a-tensor": (
        lambda d, c: ["--sigma-map", str(_saved(d / "dict.pt", {"sigma": 1.0}))],
        r"--sigma-map .*dict.pt must hold one floating-point tensor",
    ),
    "sigma-map-wrong-shape": (
        lambda d, c: ["--sigma-map", str(_saved(d / "small.pt", spatial_pattern(14, 14)))],
        r"sigma has shape \(1, 14, 14\) but the input has shape \(1, 28, 28\)",
    ),
    "sigma-map-missing": (
        lambda d, c: ["--sigma-map", str(d / "nowhere.pt")],
        r"--sigma-map .*nowhere.pt: no such file",
    ),
    "power-law-exponent-too-small": (
        lambda d, c: ["--noise", "power_law", "--power-a", "10"],
        r"power_law|a > ",
    ),
    "memory-of-another-application": (
        lambda d, c: ["--ascent-steps", "1", "--memory", str(_foreign_sqlite(d / "app.db"))],
        r"app.db is an SQLite database of another application \(tables: users\)",
    ),
    "memory-is-a-folder": (
        lambda d, c: ["--ascent-steps", "1", "--memory", str(d)],
        r"inputs is a directory; pass a file",
    ),
    "generator-damaged": (
        lambda d, c: ["--generator", str(_with_generator(d / "gen.pt", {"kind": "fixed"}))],
        r"gen.pt' holds a noise parameter generator rsutils cannot read \(KeyError",
    ),
    "device-foo": (lambda d, c: ["--device", "foo"], r"unknown device 'foo'; use auto, cpu"),
    "device-meta": (lambda d, c: ["--device", "meta"], r"meta device holds no data"),
}
if not torch.cuda.is_available():
    CASES["device-cuda-without-gpu"] = (
        lambda d, c: ["--device", "cuda"],
        r"device 'cuda' is not available: torch sees 0 CUDA GPU\(s\)",
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_mistake_is_one_line_naming_the_file_and_the_fix(
    fake_fashion_mnist: Path,
    checkpoint: Path,
    out: Path,
    run_cli,
    case: str,
) -> None:
    build, message = CASES[case]
    extra = build(checkpoint.parent, checkpoint)
    model = checkpoint
    if extra[0] == "--checkpoint-file":  # the bad file is the checkpoint itself
        model, extra = Path(extra[1]), []
    status, err = run_cli(certify(fake_fashion_mnist, model, out, *extra))
    assert status == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert re.search(message, err), err
    assert list(out.iterdir()) == [], "a rejected command must not write anything"


def test_a_foreign_sqlite_file_is_left_untouched(
    fake_fashion_mnist: Path, checkpoint: Path, out: Path, run_cli
) -> None:
    app = _foreign_sqlite(checkpoint.parent / "app.db")
    before = app.read_bytes()
    argv = certify(fake_fashion_mnist, checkpoint, out, "--ascent-steps", "1", "--memory", str(app))
    assert run_cli(argv)[0] == 2
    assert app.read_bytes() == before


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--N", "0"], r"argument --N: must be an integer >= 1, got '0'"),
        (["--N0", "-3"], r"argument --N0: must be an integer >= 1"),
        (["--batch", "0"], r"argument --batch: must be an integer >= 1"),
        (["--alpha", "2"], r"argument --alpha: must be a number strictly between 0 and 1"),
        (["--alpha", "nan"], r"argument --alpha: must be a number strictly between 0 and 1"),
        (["--skip", "0"], r"argument --skip: must be an integer >= 1"),
        (["--seed", "-1"], r"argument --seed: must be an integer >= 0"),
        (["--power-a", "0", "--noise", "power_law"], r"argument --power-a: must be a finite"),
        (["--noise", "power_law"], r"power_law noise needs its exponent: pass --power-a"),
        (["--ascent-steps", "-1"], r"argument --ascent-steps: must be an integer >= 0"),
        (["--ascent-clamp", "1.5"], r"argument --ascent-clamp: must be a number strictly"),
        (["--norm", "l3"], r"argument --norm: invalid choice: 'l3'"),
        (["--radius-loss", "-0.1"], r"argument --radius-loss: must be a finite number >= 0"),
        (["--radii", "0.1", "inf"], r"argument --radii: must be a finite number >= 0"),
        (["--procedure", "nope"], r"argument --procedure: invalid choice: 'nope'"),
        (
            ["--procedure", "decide", "--radii", "0.1", "--radius-loss", "0.1"],
            r"--radius-loss is an option of --procedure planned or radius-looks, not of decide",
        ),
        (["--radii", "0.1", "--ascent-steps", "1"], r"drop --radii"),
        (["--procedure", "planned", "--ascent-steps", "1"], r"drop --procedure"),
        (["--true-label"], r"--true-label is an option of --procedure decide, not of certify"),
        (["--radius-loss", "0.1"], r"add --procedure planned or drop --radius-loss"),
        (["--test", "sequence"], r"--test is an option of --procedure decide"),
        (["--procedure", "decide"], r"--procedure decide needs --radii; add it"),
        (["--procedure", "planned"], r"--procedure planned needs --radius-loss; add it"),
        (["--procedure", "decide", "--radii", "0.1", "0.1"], r"the radii must differ"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else None,
)
def test_rejected_values_leave_nothing_and_the_corrected_command_runs(
    fake_fashion_mnist: Path,
    checkpoint: Path,
    out: Path,
    run_cli,
    argv: list[str],
    message: str,
) -> None:
    status, err = run_cli(certify(fake_fashion_mnist, checkpoint, out, *argv))
    assert status == 2 and re.search(message, err), err
    assert list(out.iterdir()) == []
    assert run_cli(certify(fake_fashion_mnist, checkpoint, out))[0] == 0


def test_the_sigma_of_the_positional_arguments_is_checked(
    fake_fashion_mnist: Path, checkpoint: Path, out: Path, run_cli
) -> None:
    argv = certify(fake_fashion_mnist, checkpoint, out)
    argv[3] = "0"
    status, err = run_cli(argv)
    assert status == 2 and "argument sigma: must be a finite number > 0, got '0'" in err


@pytest.mark.parametrize("extra", [(), ("--ascent-steps", "1")], ids=["certify", "ds"])
def test_an_outfile_that_is_a_directory_is_refused_before_writing(
    fake_fashion_mnist: Path,
    checkpoint: Path,
    out: Path,
    run_cli,
    extra: tuple[str, ...],
) -> None:
    argv = certify(fake_fashion_mnist, checkpoint, out, *extra)
    argv[4] = str(out)
    status, err = run_cli(argv)
    assert status == 2 and f"{out} is a directory; pass a file" in err
    assert list(out.iterdir()) == []
    assert not list(out.parent.glob("*.sqlite*")), "no memory left next to it"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train", "fashion-mnist", "small_cnn", "m.pt", "--noise-sd", "0"], "--noise-sd: must"),
        (["train", "fashion-mnist", "small_cnn", "m.pt", "--noise-sd", "-1"], "--noise-sd: must"),
        (["train", "fashion-mnist", "small_cnn", "m.pt", "--noise-sd", "inf"], "--noise-sd: must"),
        (["train", "fashion-mnist", "small_cnn", "m.pt"], "arguments are required: --noise-sd"),
        (["train", "fashion-mnist", "vgg", "m.pt", "--noise-sd", ".25"], "invalid choice: 'vgg'"),
        (["train", "svhn", "small_cnn", "m.pt", "--noise-sd", ".25"], "unknown dataset 'svhn'"),
        (["train", "fashion-mnist", "small_cnn", ".", "--noise-sd", ".25"], ". is a directory"),
        (
            ["train", "mnist", "small_cnn", "m.pt", "--noise-sd", "1", "--train-subset", "0"],
            "--train-subset: must be an integer >= 1",
        ),
        (["bench", "--batch", "0"], "argument --batch: must be an integer >= 1"),
        (["bench", "--batches", "0"], "argument --batches: must be an integer >= 1"),
        (["bench", "--sigma", "0"], "argument --sigma: must be a finite number > 0"),
        (["bench", "--device", "foo"], "unknown device 'foo'"),
    ],
    ids=lambda v: " ".join(v[:1] + v[-2:]) if isinstance(v, list) else None,
)
def test_train_and_bench_refuse_bad_values(run_cli, argv: list[str], message: str) -> None:
    status, err = run_cli(argv)
    assert status == 2 and message in err, err


def test_train_refuses_a_subset_larger_than_the_split(
    fake_fashion_mnist: Path, tmp_path: Path, run_cli
) -> None:
    out = tmp_path / "m.pt"
    argv = ["train", "fashion-mnist", "small_cnn", str(out), "--noise-sd", ".25"]
    argv += ["--train-subset", "65", "--data-root", str(fake_fashion_mnist)]
    status, err = run_cli(argv)
    assert status == 2 and "--train-subset 65 exceeds the 64 images" in err, err
    assert not out.exists()


def test_a_read_only_memory_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As root every file is writable, so the permission is simulated (see the next test)."""
    from rsutils import CertificateMemory
    from rsutils.memory import storage

    monkeypatch.setattr(storage.os, "access", lambda path, mode: False)
    with pytest.raises(ValueError, match=r"is read-only, and the certificate memory .* is written"):
        CertificateMemory(tmp_path / "m.sqlite")
    assert not (tmp_path / "m.sqlite").exists()


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root may write anywhere")
@pytest.mark.parametrize("what", ["file", "folder"])
def test_a_read_only_memory_file_or_folder_is_named(tmp_path: Path, what: str) -> None:
    from rsutils import CertificateMemory

    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "m.sqlite"
    CertificateMemory(path).close()
    (path if what == "file" else folder).chmod(0o500 if what == "folder" else 0o400)
    try:
        with pytest.raises(ValueError, match=r"read-only"):
            CertificateMemory(path)
    finally:
        folder.chmod(0o700)
        path.chmod(0o600)


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("command", ["certify", "predict", "train", "bench"])
def test_help_documents_every_option_with_its_default(command: str) -> None:
    parser = _subcommands()[command]
    text = parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{command} {action.dest} has no help text"
        shown = action.option_strings and action.default not in (None, False)
        if shown and not isinstance(action.default, bool):
            assert f"(default: {action.default})" in " ".join(text.split()), action.dest
    if command == "certify":
        assert "(default: 100000)" in text and "(default: 0.001)" in text


def test_a_refused_data_dependent_run_leaves_no_new_memory(
    fake_fashion_mnist: Path, checkpoint: Path, out: Path, run_cli
) -> None:
    ds = ("--ascent-steps", "1", "--ascent-draws", "2")
    assert run_cli(certify(fake_fashion_mnist, checkpoint, out, *ds))[0] == 0
    before = sorted(p.name for p in out.iterdir())
    other = certify(fake_fashion_mnist, checkpoint, out, *ds, "--N", "60")
    status, err = run_cli([*other, "--memory", str(out / "new.sqlite")])
    assert status == 2 and "different settings (memory, n)" in err, err
    assert sorted(p.name for p in out.iterdir()) == before


def test_a_log_records_its_inference_mode_and_refuses_another(
    fake_fashion_mnist: Path, checkpoint: Path, out: Path, run_cli
) -> None:
    import json

    argv = certify(fake_fashion_mnist, checkpoint, out, "--inference", "bf16_channels_last")
    assert run_cli(argv)[0] == 0
    recorded = json.loads((out / "log.tsv.json").read_text())
    assert recorded["inference"] == "bf16_channels_last"
    status, err = run_cli(certify(fake_fashion_mnist, checkpoint, out))  # fp32 now
    assert status == 2 and "inference" in err
    status, err = run_cli([*argv[:-2], "--inference", "fp16"])
    assert status == 2 and "invalid choice: 'fp16'" in err


def test_the_fewer_draw_options_write_their_logs(
    fake_fashion_mnist: Path, checkpoint: Path, out: Path, run_cli
) -> None:
    import pandas as pd

    planned = ("--procedure", "planned", "--radius-loss", "0.05")
    argv = certify(fake_fashion_mnist, checkpoint, out, *planned)
    assert run_cli(argv)[0] == 0
    planned = pd.read_csv(out / "log.tsv", sep="\t")
    assert len(planned) == 2 and (planned["n"] <= 50).all()
    looks = [*argv[:4], str(out / "looks.tsv"), *argv[5:-4], "--procedure", "radius-looks",
             "--radius-loss", "0.05"]  # fmt: skip
    assert run_cli(looks)[0] == 0
    looked = pd.read_csv(out / "looks.tsv", sep="\t")
    assert len(looked) == 2 and {"look", "alpha_spent"} <= set(looked.columns)
    argv = [*argv[:4], str(out / "decide.tsv"), *argv[5:-4], "--procedure", "decide",
            "--radii", "0", "0.1"]  # fmt: skip
    assert run_cli(argv)[0] == 0
    decided = pd.read_csv(out / "decide.tsv", sep="\t")
    assert {"certified@0", "draws@0.1"} <= set(decided.columns) and len(decided) == 2
    argv = [*argv[:4], str(out / "label.tsv"), *argv[5:], "--true-label"]
    assert run_cli(argv)[0] == 0
    labelled = pd.read_csv(out / "label.tsv", sep="\t")
    assert list(labelled.columns) == list(decided.columns) and (labelled["n0"] == 0).all()
    assert (labelled["selected"] == labelled["label"]).all()


def test_the_procedure_flags_come_from_the_procedures_options(monkeypatch) -> None:
    """Each flag is declared once by the procedures that take it, its help prefixed by
    them; two procedures declaring one option differently are refused."""
    from rsutils.cli.certify import procedure_options
    from rsutils.sequential.procedure import PROCEDURES, Option

    options = procedure_options()
    assert options["radius_loss"][1] == ["planned", "radius-looks"]
    assert {name: option.flag for name, (option, _) in options.items()} == {
        "radii": "--radii", "test": "--test", "true_label": "--true-label",
        "radius_loss": "--radius-loss",
    }  # fmt: skip
    text = " ".join(_subcommands()["certify"].format_help().split())
    assert "--radius-loss L planned, radius-looks: stop when more draws" in text
    other = type("Other", (), {"options": (Option("radius_loss", "something else"),)})
    monkeypatch.setitem(PROCEDURES, "other", other)
    with pytest.raises(ValueError, match="other and planned declare --radius-loss differently"):
        procedure_options()


@pytest.mark.parametrize("test", list(TESTS))
def test_every_registered_test_decides_from_the_command_line(
    fake_fashion_mnist: Path, checkpoint: Path, out: Path, run_cli, test: str
) -> None:
    """``--procedure decide --test NAME`` for every test of the registry (so a test
    added to it is run here without a line more): a log of both inputs, at most --N
    draws each, with the randomisation ``u`` exactly when the test is randomised; the
    help lists the test with its description."""
    import json

    import pandas as pd

    decide = ("--procedure", "decide", "--radii", "0", "0.1", "--test", test, "--N", "100")
    assert run_cli(certify(fake_fashion_mnist, checkpoint, out, *decide))[0] == 0
    log = pd.read_csv(out / "log.tsv", sep="\t")
    randomized = TESTS[test](100, 0.001).randomized
    assert len(log) == 2 and ("u" in log.columns) == randomized
    assert log[["draws@0", "draws@0.1"]].le(100).all().all()
    assert not randomized or log["u"].between(0, 1).all()
    recorded = json.loads((out / "log.tsv.json").read_text())
    identity = json.loads(json.dumps(TESTS[test](100, 0.001).identity()))
    assert identity.items() <= recorded.items()  # the log records the test it ran
    listed = "".join(f"{test}: {TESTS[test].description}".split())
    assert listed in "".join(_subcommands()["certify"].format_help().split())  # refilled


def test_data_dependent_certification_records_its_inference_mode(
    fake_fashion_mnist: Path, checkpoint: Path, out: Path, run_cli
) -> None:
    import json

    argv = certify(fake_fashion_mnist, checkpoint, out, "--ascent-steps", "1")
    assert run_cli([*argv, "--inference", "bf16_channels_last"])[0] == 0
    assert json.loads((out / "log.tsv.json").read_text())["inference"] == "bf16_channels_last"


def _map(folder: Path) -> str:
    path = folder / "sigma.pt"
    torch.save(spatial_pattern(28, 28).float(), path)
    return str(path)


# Each case: the extra arguments, given (inputs folder, checkpoint), and the message.
# The checkpoint has no generator: a --generator that got loaded would fail otherwise.
CONFLICTS = {
    "generator-and-sigma-map": (
        lambda d, c: ["--generator", str(c), "--sigma-map", _map(d)],
        r"--generator makes mu and sigma itself; drop --sigma-map/--mu-map",
    ),
    "mu-map-without-sigma-map": (
        lambda d, c: ["--mu-map", _map(d)],
        r"--mu-map needs --sigma-map",
    ),
    "generator-and-ascent": (
        lambda d, c: ["--generator", str(c), "--ascent-steps", "1"],
        r"--generator and --ascent-steps both choose the noise; pick one",
    ),
    "ascent-and-radius-loss": (
        lambda d, c: ["--ascent-steps", "1", "--radius-loss", "0.1"],
        r"sigma ascent certifies with all --N draws; drop --radius-loss",
    ),
    "ascent-and-sigma-map": (
        lambda d, c: ["--ascent-steps", "1", "--sigma-map", _map(d)],
        r"--ascent-steps tunes an isotropic sigma; drop --sigma-map",
    ),
    "ascent-and-another-norm": (
        lambda d, c: ["--ascent-steps", "1", "--norm", "linf"],
        r"gaussian sigma ascent certifies l2; drop --norm",
    ),
    "ascent-and-a-family-it-cannot-tune": (
        lambda d, c: ["--ascent-steps", "1", "--noise", "laplace"],
        r"sigma ascent supports the noise families \['gaussian', 'uniform'\], got 'laplace'",
    ),
    "radius-loss-and-sigma-map": (
        lambda d, c: ["--procedure", "planned", "--radius-loss", "0.1", "--sigma-map", _map(d)],
        r"--procedure planned takes isotropic noise; drop the maps",
    ),
    "decide-and-generator": (
        lambda d, c: ["--procedure", "decide", "--radii", "0.1", "--generator", str(c)],
        r"--procedure decide takes isotropic noise; drop the maps",
    ),
}


@pytest.mark.parametrize("case", sorted(CONFLICTS))
def test_every_conflict_between_certifys_modes_is_refused_before_writing(
    fake_fashion_mnist: Path,
    checkpoint: Path,
    out: Path,
    run_cli,
    case: str,
) -> None:
    build, message = CONFLICTS[case]
    argv = certify(fake_fashion_mnist, checkpoint, out, *build(checkpoint.parent, checkpoint))
    status, err = run_cli(argv)
    assert status == 2 and err.count("\n") == 1 and re.search(message, err), err
    assert list(out.iterdir()) == []


def test_data_dependent_certification_under_torchrun_is_refused_before_writing(
    fake_fashion_mnist: Path,
    checkpoint: Path,
    out: Path,
    run_cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in {"WORLD_SIZE": "2", "RANK": "0", "LOCAL_RANK": "0"}.items():
        monkeypatch.setenv(name, value)
    status, err = run_cli(certify(fake_fashion_mnist, checkpoint, out, "--ascent-steps", "1"))
    assert status == 2 and "run it in a single process (without torchrun)" in err, err
    assert list(out.iterdir()) == []


def test_predict_refuses_maps_with_a_generator(
    fake_fashion_mnist: Path, checkpoint: Path, out: Path, run_cli
) -> None:
    argv = ["predict", *certify(fake_fashion_mnist, checkpoint, out)[1:5], "--quiet"]
    argv += ["--data-root", str(fake_fashion_mnist), "--generator", str(checkpoint)]
    status, err = run_cli([*argv, "--sigma-map", _map(checkpoint.parent)])
    assert status == 2 and "--generator makes mu and sigma itself" in err, err
    assert list(out.iterdir()) == []


@pytest.mark.parametrize(
    ("extra", "mode"),
    [
        ((), "certify"),
        (("--procedure", "planned", "--radius-loss", "0.1"), "planned"),
        (("--procedure", "radius-looks", "--radius-loss", "0.1"), "radius-looks"),
        (("--procedure", "decide", "--radii", "0.1", "0.2"), "decide"),
        (("--procedure", "decide", "--radii", "0.1", "--true-label"), "decide"),
        (("--ascent-steps", "2", "--noise", "uniform"), "data-dependent"),
    ],
)
def test_the_options_choose_one_mode(extra: tuple[str, ...], mode: str) -> None:
    from rsutils.cli.certify import certify_mode

    args = build_parser().parse_args(["certify", "mnist", "m.pt", "0.5", "o.tsv", *extra])
    chosen = certify_mode(args)
    assert chosen.name == mode
    assert (chosen.ascent is not None) == (mode == "data-dependent")
    assert (chosen.procedure is not None) == (mode not in ("certify", "data-dependent"))
    if chosen.procedure is not None:
        assert chosen.procedure.n_max == 100_000 and chosen.procedure.name == mode
        assert getattr(chosen.procedure, "true_label", False) == ("--true-label" in extra)
    if chosen.ascent is not None:
        assert (chosen.ascent.family, chosen.ascent.iterations, chosen.ascent.norm) == (
            "uniform",
            2,
            "l1",
        )


def test_reference_draws_certify_the_fp32_model_from_bf16_counts(
    fake_fashion_mnist: Path, checkpoint: Path, out: Path, run_cli
) -> None:
    import json

    import pandas as pd

    fast = ("--inference", "bf16_channels_last")
    argv = certify(fake_fashion_mnist, checkpoint, out, *fast, "--reference-draws", "30")
    assert run_cli([*argv, "--fast-share", "0.7"])[0] == 0
    log = pd.read_csv(out / "log.tsv", sep="\t")
    assert len(log) == 2 and {"m", "disagreements", "d_upper", "fast_pA_lower"} <= set(log)
    recorded = json.loads((out / "log.tsv.json").read_text())
    assert (recorded["certifies"], recorded["reference_draws"], recorded["fast_share"]) == (
        "fp32",
        30,
        0.7,
    )
    plain = [*argv[:4], str(out / "fast.tsv"), *argv[5:-2]]
    assert run_cli([*plain, "--alpha", "0.0007"])[0] == 0
    fast_log = pd.read_csv(out / "fast.tsv", sep="\t")
    assert list(fast_log["count"]) == list(log["count"])
    assert list(fast_log["pA_lower"]) == pytest.approx(list(log["fast_pA_lower"]))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--reference-draws", "30"), "add --inference bf16_channels_last (or bf16)"),
        (("--inference", "bf16", "--reference-draws", "30", "--radius-loss", "0.1"), "drop --r"),
        (("--inference", "bf16", "--reference-draws", "30", "--radii", "0"), "drop --radii"),
        (
            ("--inference", "bf16", "--reference-draws", "30", "--procedure", "planned"),
            "drop --procedure",
        ),
        (("--inference", "bf16", "--fast-share", "0.3"), "splits the alpha of --reference-draws"),
        (
            ("--inference", "bf16", "--reference-draws", "3", "--fast-share", "1"),
            "strictly between 0 and 1",
        ),
        (("--inference", "bf16", "--reference-draws", "0"), "--reference-draws: must be"),
    ],
)
def test_reference_draws_refuse_what_they_cannot_go_with(
    fake_fashion_mnist: Path,
    checkpoint: Path,
    out: Path,
    run_cli,
    extra: tuple[str, ...],
    message: str,
) -> None:
    status, err = run_cli(certify(fake_fashion_mnist, checkpoint, out, *extra))
    assert status == 2 and message in err, err
    assert not (out / "log.tsv").exists()
