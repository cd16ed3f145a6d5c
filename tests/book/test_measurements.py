"""The committed measurement tables read back in the shapes the chapters use."""

from rsutils.book import measurements


def test_the_thread_spread_has_both_thread_counts_per_run() -> None:
    table = measurements.thread_spread()
    assert {"cohen-0.25", "cohen-0.5", "cohen-1.0", "ds-0.25"} <= set(table.index)
    assert {"ACR, 1 thread", "ACR, 2 threads"} <= set(table.columns)
