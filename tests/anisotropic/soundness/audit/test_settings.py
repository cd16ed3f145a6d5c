"""AuditSettings: checked when made, frozen, and an identity without the speed setting."""

import dataclasses

import numpy as np
import pytest

import rsutils
from rsutils.anisotropic.soundness.audit import AuditSettings


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"alpha": 0.0}, r"alpha must lie strictly between 0 and 1.*use alpha=0\.001"),
        ({"alpha": 1.0}, r"alpha must lie strictly between 0 and 1"),
        ({"alpha": float("nan")}, r"alpha must lie strictly between 0 and 1"),
        ({"alpha": "0.01"}, r"alpha must be a number in \(0, 1\), e\.g\. 0\.001"),
        ({"alpha": True}, r"alpha must be a number"),
        ({"n_verify": 0}, r"n_verify must be a positive integer, got 0"),
        ({"n_verify": 2.5}, r"n_verify must be a positive integer"),
        ({"draws": 0}, r"draws must be a positive integer"),
        ({"batch_size": 0}, r"batch_size must be a positive integer"),
        ({"batch_size": True}, r"batch_size must be a positive integer"),
        ({"boundary": -1}, r"boundary must be a non-negative integer, got -1"),
        ({"boundary": 1.0}, r"boundary must be a non-negative integer"),
        ({"steps": -1}, r"steps must be a non-negative integer"),
        ({"seed": -1}, r"seed must be a non-negative integer"),
        ({"seed": False}, r"seed must be a non-negative integer"),
        ({"boundary": 0, "steps": 0}, r"searches no point.*\(boundary=16\) or an attack"),
        ({"shrink": 1.0}, r"shrink must lie in \(0, 1\) to stay strictly inside"),
        ({"shrink": 0.0}, r"shrink must lie in \(0, 1\)"),
        ({"shrink": "x"}, r"shrink must be a number in \(0, 1\), e\.g\. 0\.99"),
        ({"ball": 1}, r"ball must be True \(the l2 ball inside the region\) or False"),
        ({"input_range": (1.0, 0.0)}, r"input_range must be finite with low < high"),
        ({"input_range": 1.0}, r"input_range must be a pair \(low, high\) or None"),
    ],
)
def test_every_bad_value_is_refused_with_what_to_pass(change, message) -> None:
    with pytest.raises(ValueError, match=message):
        AuditSettings(**change)
    with pytest.raises(ValueError, match=message):
        AuditSettings().replace(**change)


def test_the_defaults_and_accepted_values() -> None:
    settings = AuditSettings()
    assert (settings.alpha, settings.n_verify, settings.boundary, settings.steps) == (
        0.001,
        10_000,
        16,
        20,
    )
    assert (settings.draws, settings.seed, settings.shrink, settings.ball) == (8, 0, 0.99, False)
    assert settings.input_range is None and settings.batch_size == 1000
    AuditSettings(boundary=0, steps=1)  # an attack alone
    AuditSettings(boundary=1, steps=0)  # boundary points alone
    AuditSettings(n_verify=np.int64(5), seed=np.int64(2))


def test_the_input_range_is_stored_as_a_pair_of_floats() -> None:
    assert AuditSettings(input_range=[0, 1]).input_range == (0.0, 1.0)
    assert AuditSettings(input_range=(0, 255)).identity()["input_range"] == (0.0, 255.0)


def test_settings_are_frozen_and_replace_checks_the_copy() -> None:
    settings = AuditSettings(seed=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.seed = 4  # type: ignore[misc]
    other = settings.replace(steps=5)
    assert (other.steps, other.seed, settings.steps) == (5, 3, 20)
    assert settings == AuditSettings(seed=3) and hash(settings) == hash(AuditSettings(seed=3))


def test_the_identity_is_everything_that_determines_the_records() -> None:
    settings = AuditSettings(input_range=(0.0, 1.0))
    identity = settings.identity()
    assert identity == {
        "alpha": 0.001,
        "n_verify": 10_000,
        "boundary": 16,
        "steps": 20,
        "draws": 8,
        "seed": 0,
        "shrink": 0.99,
        "ball": False,
        "input_range": (0.0, 1.0),
    }
    assert settings.replace(batch_size=7).identity() == identity  # speed only
    fields = {f.name for f in dataclasses.fields(AuditSettings)}
    # losses and region_scale enter only away from their defaults: the cached audits
    # made before they existed keep their keys (the dict above is such a key)
    assert fields - set(identity) == {"batch_size", "losses", "region_scale"}
    for name, value in identity.items():
        changed = {"ball": True, "input_range": None}.get(name, value)
        if name not in ("ball", "input_range"):
            changed = value / 2 if isinstance(value, float) else value + 1
        assert settings.replace(**{name: changed}).identity() != identity, name
    for name, value in {"losses": ("ce", "margin"), "region_scale": (1.5, 2.0)}.items():
        other = settings.replace(**{name: value}).identity()
        assert other == {**identity, name: value}, name
    assert settings.replace(losses=("margin",)).identity()["losses"] == ("margin",)
    assert settings.replace(losses=["ce"]).identity() == identity  # the default, as a list


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"losses": "ce"}, r"losses must be a tuple of names from \('ce', 'margin'\)"),
        ({"losses": ()}, r"losses must name distinct attack losses"),
        ({"losses": ("ce", "ce")}, r"losses must name distinct attack losses"),
        ({"losses": ("hinge",)}, r"losses must name distinct.*e\.g\. \('ce', 'margin'\)"),
        ({"region_scale": (2.0, 1.5)}, r"region_scale must be None.*0 <= inner < shrink\*outer"),
        ({"region_scale": (1.98, 2.0)}, r"region_scale must be None"),  # inner = shrink·outer
        ({"region_scale": (-1.0, 2.0)}, r"region_scale must be None"),
        ({"region_scale": (1.5, float("inf"))}, r"region_scale must be None"),
        ({"region_scale": 2.0}, r"region_scale must be None.*e\.g\. \(1\.5, 2\.0\)"),
        ({"region_scale": "12"}, r"region_scale must be None"),
        ({"region_scale": (1.0, 2.0, 3.0)}, r"region_scale must be None"),
    ],
)
def test_bad_losses_and_region_scales_are_refused(change, message) -> None:
    with pytest.raises(ValueError, match=message):
        AuditSettings(**change)


def test_losses_and_region_scale_are_stored_as_tuples() -> None:
    settings = AuditSettings(losses=["margin", "ce"], region_scale=[1, 2])
    assert settings.losses == ("margin", "ce") and settings.region_scale == (1.0, 2.0)
    assert AuditSettings().losses == ("ce",) and AuditSettings().region_scale is None
    assert AuditSettings(region_scale=(0, 1)).region_scale == (0.0, 1.0)  # the ball of R


def test_audit_settings_are_part_of_the_public_surface() -> None:
    assert rsutils.AuditSettings is AuditSettings
    assert "AuditSettings" in rsutils.__all__
