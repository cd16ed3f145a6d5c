"""The sizes the papers state for judged claims: each a ledger row, on a dataset, and
testable on the book's runs only where that dataset is the book's."""

from __future__ import annotations

import pytest

from rsutils.book.audit.claim_sizes import DATASETS, size_testable_here, stated_sizes
from rsutils.book.audit.ledger import ledger
from rsutils.book.chapter import BOOK_DATASET
from rsutils.book.papers.published import qualitative_claims


def test_every_stated_size_is_a_ledger_row_of_a_judged_claim() -> None:
    sizes = stated_sizes()
    assert set(sizes["claim"]) <= set(qualitative_claims()["id"])
    rows = ledger().set_index("id")
    for size in sizes.itertuples():
        assert size.quote == rows.loc[size.ledger, "quote"]
        assert str(size.value) in size.quote  # the number the quote states
    assert set(sizes["dataset"]) <= set(DATASETS.values())


def test_a_size_is_testable_only_on_the_books_own_dataset() -> None:
    assert size_testable_here(BOOK_DATASET) == ""
    assert size_testable_here("cifar10") == "stated for CIFAR-10"
    with pytest.raises(ValueError, match="unknown dataset 'svhn'"):
        size_testable_here("svhn")
    sizes = stated_sizes()
    on_ours = sizes["dataset"] == DATASETS[BOOK_DATASET]
    assert (sizes.loc[on_ours, "testable here"] == "yes").all()
    assert sizes.loc[~on_ours, "testable here"].str.startswith("no: stated for").all()


def test_alfarra_et_al_gains_are_listed_with_their_datasets() -> None:
    sizes = stated_sizes().set_index("ledger")
    assert sizes.loc["ddrs-cohen-0.5", "value"] == "7.7"
    assert sizes.loc["ddrs-cohen-0.5", "dataset"] == "CIFAR-10"
    assert sizes.loc["ddrs-cohen-acr-imagenet", "dataset"] == "ImageNet"
