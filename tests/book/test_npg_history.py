"""The history of sigma over an NPG training, kept beside the cached model."""

import pandas as pd
import pytest
import torch

from rsutils import NPGConfig, TrainConfig
from rsutils.anisotropic.training import HISTORY_COLUMNS
from rsutils.book.trained import npg_history, trained_npg
from rsutils.cache import cache_dir

CONFIG = NPGConfig(
    base=TrainConfig(scale=0.5, epochs=1, batch_size=32),
    method="dataset",
    steps=3,
    batch_size=16,
)


def test_the_history_is_written_with_the_model_and_rebuilt_when_missing(
    fake_fashion_mnist, monkeypatch
) -> None:
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    model, _ = trained_npg(CONFIG, device="cpu", progress=False)
    history = npg_history(CONFIG, device="cpu", progress=False)
    assert list(history.columns) == list(HISTORY_COLUMNS) and len(history) == CONFIG.steps
    assert history["step"].tolist() == [0, 1, 2]
    # A model cached before histories were kept: training runs again for the history,
    # with the same weights, and the cached model stays as it was.
    (path,) = (cache_dir() / "npg-history").glob("*.tsv")
    path.unlink()
    checkpoint = next((cache_dir() / "models").glob("*.pt"))
    before = checkpoint.stat().st_mtime_ns
    rebuilt = npg_history(CONFIG, device="cpu", progress=False)
    pd.testing.assert_frame_equal(rebuilt, history)
    assert checkpoint.stat().st_mtime_ns == before
    again, _ = trained_npg(CONFIG, device="cpu", progress=False)
    for a, b in zip(model.state_dict().values(), again.state_dict().values(), strict=True):
        assert torch.equal(a, b)


def test_no_history_without_training(fake_fashion_mnist, monkeypatch) -> None:
    """Asking for a history trains the model (and writes both) when neither exists."""
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    history = npg_history(CONFIG, device="cpu", progress=False)
    assert len(history) == CONFIG.steps
    assert len(list((cache_dir() / "models").glob("*.pt"))) == 2  # the base and the NPG
    with pytest.raises(ValueError, match="steps must be"):
        npg_history(NPGConfig(base=CONFIG.base, method="dataset", steps=0))
