"""One settings object for a Monte Carlo run: checked once, recorded without batch size."""

import pytest

from rsutils import CertifySettings


def test_defaults_are_cohen_et_al_s() -> None:
    settings = CertifySettings()
    assert (settings.n0, settings.n, settings.alpha, settings.batch_size) == (
        100,
        100_000,
        0.001,
        1000,
    )


def test_identity_leaves_out_what_does_not_change_the_answers() -> None:
    settings = CertifySettings(n0=10, n=500, alpha=0.01, seed=7, batch_size=64)
    assert settings.identity() == {"n0": 10, "n": 500, "alpha": 0.01, "seed": 7}
    assert settings.identity("predict") == {"n": 500, "alpha": 0.01, "seed": 7}
    assert settings.replace(batch_size=1).identity() == settings.identity()
    with pytest.raises(ValueError, match=r"'certify' or 'predict'"):
        settings.identity("sample")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"n": 0}, r"n must be a positive integer"),
        ({"n0": 2.5}, r"n0 must be a positive integer"),
        ({"batch_size": True}, r"batch_size must be a positive integer"),
        ({"alpha": 1.0}, r"alpha must lie strictly between 0 and 1"),
        ({"seed": -1}, r"seed must be a non-negative integer"),
    ],
)
def test_bad_settings_name_the_fix(changes, message) -> None:
    with pytest.raises(ValueError, match=message):
        CertifySettings(**changes)
    with pytest.raises(ValueError, match=message):
        CertifySettings().replace(**changes)
