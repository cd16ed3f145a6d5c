"""What a person at a terminal reads: help without markup, notices that change data on
stderr as one line, and a log that is not resumed on another kind of device by accident."""

import json

import pytest
import torch

from rsutils.cli.arguments import plain_text
from rsutils.models.architectures import build_model
from rsutils.models.checkpoints import save_checkpoint

COMMANDS = ([], ["certify"], ["predict"], ["train"], ["bench"], ["device-check"])


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("``certify``", "certify"),
        (":func:`~rsutils.core.smooth.Smooth`", "Smooth"),
        (":mod:`rsutils.sequential`", "rsutils.sequential"),
        (":class:`the smoother <rsutils.core.smooth.Smooth>`", "the smoother"),
        ("**only** `this`", "only this"),
        ("a*b and 2**10", "a*b and 2**10"),
    ],
)
def test_docstring_markup_becomes_plain_text(text, plain) -> None:
    assert plain_text(text) == plain


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0] if c else "top")
def test_help_shows_no_restructuredtext(command, capsys) -> None:
    from rsutils.cli.main import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args([*command, "--help"])
    out = capsys.readouterr().out
    assert out.strip()
    for markup in ("``", ":func:", ":mod:", ":class:", ":meth:", ":data:"):
        assert markup not in out, (command, markup)


@pytest.fixture
def certify_command(tmp_path, fake_fashion_mnist):
    torch.manual_seed(0)
    checkpoint = tmp_path / "model.pt"
    model = build_model("small_cnn", "fashion-mnist")
    save_checkpoint(model, checkpoint, arch="small_cnn", dataset="fashion-mnist")
    log = tmp_path / "out" / "log.tsv"
    args = ["certify", "fashion-mnist", str(checkpoint), "0.5", str(log), "--N0", "10"]
    args += ["--N", "50", "--batch", "50", "--max", "3", "--device", "cpu"]
    return [*args, "--data-root", str(fake_fashion_mnist), "--quiet"], log


def test_a_cut_log_tail_is_one_notice_line_even_when_quiet(certify_command, run_cli) -> None:
    args, log = certify_command
    assert run_cli(args) == (0, "")
    with open(log, "ab") as handle:
        handle.write(b"7\t3\t")  # the torn last line of a killed run
    status, err = run_cli(args)
    err = err.splitlines()
    assert status == 0 and len(err) == 1, err
    assert err[0].startswith(f"notice: {log}: cut 4 bytes from line 5 on")
    assert "site-packages" not in err[0] and "Warning" not in err[0]


def test_resuming_on_another_device_needs_the_flag(certify_command, run_cli) -> None:
    """A log written elsewhere (here: its sidecar says CUDA) is refused in one line,
    untouched; with --allow-device-change it is resumed and says where it came from."""
    args, log = certify_command
    fewer = list(args)
    fewer[args.index("--max") + 1] = "2"
    assert run_cli(fewer) == (0, "")
    sidecar = log.with_name("log.tsv.json")
    recorded = json.loads(sidecar.read_text())
    assert (recorded["device"], recorded["rows"]) == ("cpu", 100)
    sidecar.write_text(json.dumps({**recorded, "device": "cuda", "rows": 1000}))
    before = log.read_bytes()

    status, err = run_cli(args)
    err = err.splitlines()
    assert status == 2 and len(err) == 1 and "--allow-device-change" in err[0]
    assert "written on cuda (1000 rows" in err[0] and log.read_bytes() == before

    assert run_cli([*args, "--allow-device-change"]) == (0, "")
    after = json.loads(sidecar.read_text())
    assert after["device"] == "cpu" and after["adopted_devices"] == [
        {"device": "cuda", "rows": 1000}
    ]
    assert len(log.read_text().splitlines()) == 1 + 3
