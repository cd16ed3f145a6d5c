"""The chapter helper: scale and run-at table."""

import pytest
import torch

from rsutils.book.chapter import Chapter, run_at_table
from rsutils.book.profiles import PROFILES, get_profile

ENVIRONMENT_ROWS = ["device", "CPU threads (torch)", "torch"]


def test_run_at_table_states_the_scale() -> None:
    table = run_at_table(PROFILES["cpu"], torch.device("cpu"), {"dataset": "Fashion-MNIST"})
    assert table.loc["n (estimation draws)", "value"] == "10,000"
    assert table.loc["dataset", "value"] == "Fashion-MNIST"
    assert table.loc["device", "value"].startswith("cpu: ")
    assert table.loc["CPU threads (torch)", "value"] == str(torch.get_num_threads())
    assert table.loc["torch", "value"] == torch.__version__
    assert list(table.index)[:2] == ["profile", "dataset"]
    assert list(table.index)[-3:] == ENVIRONMENT_ROWS
    assert table.index.name is None  # no second header row when rendered


def test_run_at_table_only_adds_the_rows_asked_for() -> None:
    rows = {"draws per check": "1,000"}
    table = run_at_table(PROFILES["smoke"], torch.device("cpu"), rows, standard=("n0", "alpha"))
    assert list(table.index) == [
        "profile",
        "draws per check",
        "n0 (selection draws)",
        "alpha",
        "noise sampler",
        *ENVIRONMENT_ROWS,
    ]
    with pytest.raises(ValueError, match=r"unknown standard rows \['N'\]"):
        run_at_table(PROFILES["smoke"], torch.device("cpu"), standard=("N",))


def test_every_run_at_table_states_the_sampler_the_book_uses() -> None:
    from pathlib import Path

    import rsutils.book

    for standard in ((), ("n0", "alpha"), None):
        kwargs = {} if standard is None else {"standard": standard}
        table = run_at_table(PROFILES["smoke"], torch.device("cpu"), **kwargs)
        assert table.loc["noise sampler", "value"].startswith("plain: ")
    # The row is true because no book run chooses another sampler than Smooth's default.
    for path in Path(rsutils.book.__file__).parent.rglob("*.py"):
        assert "sampler=" not in path.read_text(), path


def test_a_chapter_shares_the_profiles_images_settings_and_models(fake_fashion_mnist, monkeypatch):
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    chapter = Chapter.open("smoke", seed=3, progress=False)
    smoke = get_profile("smoke")  # the profile as it runs on this machine
    assert chapter.profile == smoke
    assert chapter.main.indices == smoke.indices(40) == [0]  # the fake test split has 40
    assert chapter.main.settings == smoke.certify_settings(3)
    assert chapter.secondary.settings == smoke.certify_settings(3, secondary=True)
    assert chapter.base_models == smoke.base_models(3)
    assert chapter.run_at().loc["profile", "value"] == "smoke"
    assert chapter.base_model_rows() == {
        "dataset": "Fashion-MNIST (test split)",
        "model": "small_cnn",
        "sigmas": "0.25, 0.5, 1.0",
    }


def test_the_book_style_shows_table_text_whole_and_four_decimals() -> None:
    import pandas as pd

    from rsutils.book.plots import setup_style

    with pd.option_context("display.max_colwidth", 50, "display.precision", 6):
        setup_style()
        frame = pd.DataFrame({"note": ["x" * 80], "value": [1 / 3]})
        html = frame.to_html()
        assert "x" * 80 in html and "0.3333<" in html and "0.333333" not in html


def test_the_first_replicate_is_the_main_run_on_the_replicate_images(
    fake_fashion_mnist, monkeypatch
) -> None:
    """replicate_runs calls the main experiments for the chapter's own seed (keeping
    the replicate images' rows) and the replicate experiments for the other seeds."""
    import pandas as pd

    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    chapter = Chapter.open("smoke", seed=3, progress=False)
    calls = []

    def run(experiments, seed):
        calls.append((experiments.indices, seed))
        return pd.DataFrame({"idx": experiments.indices, "seed": seed})

    logs = chapter.replicate_runs(run)
    seeds = PROFILES["smoke"].replicate_seeds(3)
    assert [s for _, s in calls] == list(seeds)
    assert calls[0][0] == chapter.main.indices
    assert all(i == chapter.replicated.indices for i, _ in calls[1:])
    assert all(list(log["idx"]) == chapter.replicated.indices for log in logs)
    assert chapter.replicated.settings == chapter.main.settings
    calls.clear()
    chapter.replicate_runs(run, from_main=False)  # every replicate on the replicate images
    assert all(i == chapter.replicated.indices for i, _ in calls)


def test_the_replicate_rows_state_models_and_images(fake_fashion_mnist, monkeypatch) -> None:
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    rows = Chapter.open("cpu", progress=False).replicate_rows()
    assert rows["replicate models"].startswith("5 per setting")
    assert rows["replicate test images"].startswith("1 of the main ones")  # 40 fake images
