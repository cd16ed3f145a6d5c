"""What the reproduce page says about the measured thread spread holds in its tables.

The tables are measurements (``book/measure_thread_spread.py``), committed with the
page that reads them; if they are measured again, the page's sentences must still hold.
"""

from importlib.resources import files

import pandas as pd
import pytest

TABLES = files("rsutils.book") / "tables"


@pytest.fixture(scope="module")
def headline() -> pd.DataFrame:
    table = pd.read_csv(TABLES / "thread_spread.csv", index_col="run")
    return table.rename(columns={"ACR, 1 thread": 1, "ACR, 2 threads": 2})


@pytest.fixture(scope="module")
def inputs() -> pd.DataFrame:
    return pd.read_csv(TABLES / "thread_spread_inputs.csv", index_col=0).T


def test_the_fixed_sigma_acrs_hardly_move_and_the_data_dependent_one_does(headline) -> None:
    moved = (headline[1] - headline[2]).abs()
    data_dependent = moved["ds-0.25"]
    for run in ("cohen-0.25", "cohen-0.5", "cohen-1.0"):
        assert moved[run] < data_dependent / 10, run


def test_most_fixed_sigma_certificates_sit_at_the_cap_and_few_data_dependent_ones(inputs):
    assert inputs.loc["cohen-0.25", "at the cap (all n draws in the class)"] > 0.5
    assert inputs.loc["ds-0.25", "at the cap (all n draws in the class)"] < 0.2


def test_the_data_dependent_change_comes_from_the_inputs_far_above_sigma0(inputs) -> None:
    ds = inputs.loc["ds-0.25"]
    far, rest = ds["ACR change from those inputs"], ds["ACR change from the other inputs"]
    assert abs(far) > 10 * abs(rest)
    assert ds["median relative change of the noise level"] > 0
