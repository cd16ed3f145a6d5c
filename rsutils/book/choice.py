"""A sentence the run chooses, shown as a choice.

Some sentences of a chapter depend on what the run measured: "the ceiling explains the
spread" or "it does not". Written as a hidden ``"…" if test else "…"`` and glued into
the prose, the reader cannot tell that the sentence was one of two. :func:`run_chose`
returns it as an admonition for a shown cell instead: the sentence the run chose, the
test that chose it and its outcome, and the sentence the other outcome would have
printed.
"""

from __future__ import annotations

from IPython.display import Markdown

__all__ = ["run_chose"]


def run_chose(test: str, outcome: bool, when_true: str, when_false: str) -> Markdown:
    """The sentence ``when_true`` if ``outcome`` else ``when_false``, as a Markdown
    admonition titled "Chosen by this run" that names ``test`` (the condition, in words
    or code), its outcome, and the sentence not chosen. The book renders it as MyST;
    in a notebook it reads as Markdown.
    """
    outcome = bool(outcome)  # a numpy boolean would print as np.True_
    for name, sentence in (("when_true", when_true), ("when_false", when_false)):
        if not sentence.strip():
            raise ValueError(f"{name} is empty: give the sentence each outcome prints")
    chosen, other = (when_true, when_false) if outcome else (when_false, when_true)
    return Markdown(
        "```{admonition} Chosen by this run\n"
        ":class: note\n"
        f"{chosen}\n\n"
        f"*The test:* {test}: **{'yes' if outcome else 'no'}**. "
        f"*Had it been {'no' if outcome else 'yes'}, this would read:* {other}\n"
        "```"
    )
