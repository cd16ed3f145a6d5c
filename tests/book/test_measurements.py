"""The committed measurement tables read back in the shapes the chapters use."""

from rsutils.analysis.differences import replicated_comparisons
from rsutils.book import BOOK_SIGMAS, measurements
from rsutils.book.margins import MARGINS


def test_the_thread_spread_has_both_thread_counts_per_run() -> None:
    table = measurements.thread_spread()
    assert {"cohen-0.25", "cohen-0.5", "cohen-1.0", "ds-0.25"} <= set(table.index)
    assert {"ACR, 1 thread", "ACR, 2 threads"} <= set(table.columns)


def test_the_bf16_tables_hold_both_precisions_of_every_model_on_the_same_images() -> None:
    replicates = measurements.bf16_training()
    models = measurements.bf16_training_models()
    assert len(replicates) == models["seed"].nunique() >= 3
    for logs in replicates:
        assert set(logs) == {f"{p}, σ = {s:g}" for p in ("fp32", "bf16") for s in BOOK_SIGMAS}
        images = [tuple(log["idx"]) for log in logs.values()]
        assert len(set(images)) == 1 and len(images[0]) >= 50
    assert set(models["precision"]) == {"fp32", "bf16"}
    assert models.groupby(["sigma", "seed"]).size().eq(2).all()


def test_bf16_training_is_equivalent_to_fp32_where_the_profiles_use_it() -> None:
    """The smoke and cpu profiles train in bf16 because every comparison with fp32 on the
    same seeds is equivalent within the book's margin; a new measurement that is not
    would have to change the profiles."""
    pairs = [(f"bf16, σ = {s:g}", f"fp32, σ = {s:g}") for s in BOOK_SIGMAS]
    measures = {"r = 0": ("radius", 0.0), "ACR": "radius"}
    found = replicated_comparisons(
        measurements.bf16_training(),
        pairs,
        measures=measures,
        margin=MARGINS,
        family=False,  # every one must be equivalent: an intersection-union test
    )
    assert found["verdict"].str.startswith("equivalent").all()
