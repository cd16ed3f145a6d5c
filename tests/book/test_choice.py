"""A sentence the run chooses names its test and the sentence it did not choose."""

import numpy as np
import pytest

from rsutils.book.choice import run_chose


@pytest.mark.parametrize("outcome", [True, False, np.True_, np.False_])
def test_the_chosen_sentence_comes_first_and_the_other_is_named(outcome: bool) -> None:
    text = run_chose("gap > 0", outcome, "It rises.", "It does not rise.").data
    chosen, other = (
        ("It rises.", "It does not rise.") if outcome else ("It does not rise.", "It rises.")
    )
    assert text.startswith("```{admonition} Chosen by this run\n")
    assert text.index(chosen) < text.index(other)
    assert f"gap > 0: **{'yes' if outcome else 'no'}**" in text
    assert text.rstrip().endswith("```")


def test_an_empty_sentence_is_refused() -> None:
    with pytest.raises(ValueError, match="when_false is empty"):
        run_chose("t", True, "It rises.", " ")
