"""Which sentences of a paper's text state a number: the ledger's unit of coverage.

A paper states a number when a sentence of its prose holds a digit that is not
notation. :func:`number_bearing_sentences` splits a text into sentences and keeps
those whose :func:`number_tokens` are not empty; the tokens are what is left after
removing what carries digits without stating a quantity:

- display equations (lines that start with ``$$``), algorithm listings (lines that
  start with ``12:``) and tab-separated table rows, which the transcribed tables cover;
- citations (``[12]``, ``[12, 69]``), cross-references (``Table 1``, ``Figure 3``,
  ``Equation (20)``, ``Theorem 2``, ``Section 3.5``) and enumeration marks (``1)``);
- years of cited works (``Cohen et al. 2019``, ``(Wong et al., 2018)``);
- names with digits (``CIFAR-10``, ``CIFAR10``, ``top-1``, ``ℓ2``), LaTeX subscripts
  and superscripts (``\\ell_{2}``, ``\\sigma^{2}``), fractions (``\\frac{1}{2}``), the
  zero mean of a Gaussian (``\\mathcal{N}(0, …)``) and the constants of formulas
  (``σ/2``, ``1 − α``, ``pA + pB ≤ 1``, ``1/σ_i``).

The rule errs on the side of keeping a sentence: a kept sentence that states no
result is listed in the ledger as not checkable, with the reason, so nothing is lost
silently.
"""

from __future__ import annotations

import re

__all__ = ["normalise", "number_bearing_sentences", "number_tokens"]

_ABBREVIATIONS = "".join(
    rf"(?<!\b{re.escape(word)})"
    for word in ("e.g.", "i.e.", "al.", "Fig.", "Figs.", "Eq.", "Eqs.", "vs.", "Sec.",
                 "cf.", "resp.", "approx.", "No.")
)  # fmt: skip
_SENTENCE_END = re.compile(r"(?<=[.!?])" + _ABBREVIATIONS + r"\s+(?=[A-Z$\\(\[ℓ])")
_SKIPPED_LINE = re.compile(r"^\s*(\$\$|\d+:|.*\t)")
_NOT_QUANTITIES = [
    r"\[\s*\d+(?:\s*[,–-]\s*\d+)*\s*\]",  # citations
    r"\b(?:Tables?|Figures?|Figs?\.|Sections?|Sec\.|Algorithms?|Theorems?|Lemmas?"
    r"|Definitions?|Equations?|Eqs?\.?|Corollary|Propositions?|Appendix|Remark"
    r"|Assumption|Objective|Step|Line)\s*~?\(?[A-Z]?\.?\d+(?:\.\d+)*\)?"
    r"(?:\s*(?:,|and|–|-|&)\s*\(?\d+(?:\.\d+)*\)?)*",  # cross-references
    r"(?:^|(?<=\s))\(?\d\)(?=\s)",  # enumeration marks
    r"(?<=al\.)\s*,?\s*\(?(?:19|20)\d\d[a-z]?\)?",  # years after "et al."
    r"§\s*\d+(?:\.\d+)*|\bn0\b",  # section signs, the name n0
    r"(?<=[A-Za-z&])\s*,?\s+\(?(?:19|20)\d\d[a-z]?\)?(?=[;),.\s]|$)",  # years after names
    r"CIFAR-?10{1,2}|ResNet-?(?=\d)|top-\$?\d\$?|ℓ\s*\d|\bL\d\b",  # names with digits
    r"p\s*=\s*1\s*,\s*2\s*,\s*\\infty|\(\s*0\s*,\s*0\s*\)|\\mathcal\{N\}\(0,\s*1\)",  # notation
    r"^\s*\d+\.\s*$",  # a list number alone
    r"[_^]\s*\{[^{}]*\}|[_^]\s*\d",  # sub- and superscripts
    r"\\frac\s*\{[^{}]*\}\s*\{[^{}]*\}|\\sqrt\[[^\]]*\]",  # fractions and roots
    r"1\s*/\s*\\?(?:sigma|σ)|σ\s*/\s*2|\(1/2,\s*1\]|pA\s*>\s*1/2",  # 1/σ, σ/2, (1/2, 1]
    r"1\s*[−-]\s*(?:α|pA)|pA\s*\+\s*pB\s*≤\s*1|Φ\s*[−-]\s*1",  # 1 − α, pA + pB ≤ 1, Φ−1
    r"=\s*\.\.\.\s*=\s*1|\b\d-dimension(?:al)?|\\mathbf\{1\}|^See \d+$",  # σ1=…=1 and more
    r"\\mathcal\{N\}\s*\(\s*0\s*,|\bN\(0\s*,",  # the zero mean of a Gaussian
    r"\\color\[rgb\]\{[^{}]*\}|\\mathbbm\{1\}|\\\{1,\s*\\dots",  # colour, indicator, 1..k
    r"(?:>|<|\\geq|\\leq)\s*0(?![.,\d])|,\s*0\s*\\right\)",  # positivity, max(·, 0)
]
_STRIP = re.compile("|".join(f"(?:{p})" for p in _NOT_QUANTITIES))
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def normalise(text: str) -> str:
    """``text`` with every run of white space turned into one space."""
    return " ".join(text.split())


def number_tokens(sentence: str) -> list[str]:
    """The numbers ``sentence`` states, as printed (``"182.6"``, ``"100,000"``), in
    order, after removing notation (see the module's docstring; removal repeats until
    nothing changes, so that a fraction inside a fraction goes too)."""
    text, previous = sentence, None
    while text != previous:
        text, previous = _STRIP.sub(" ", text), text
    return _NUMBER.findall(text)


def number_bearing_sentences(text: str) -> list[str]:
    """The sentences of ``text`` that state a number, white space normalised, in order.

    Lines that hold equations, algorithm steps or table rows are skipped; every other
    line is split into sentences at a full stop, question or exclamation mark followed
    by a capital, ``$``, ``\\``, ``(``, ``[`` or ``ℓ`` (not after "e.g.", "i.e.",
    "et al.", "Fig.", "Eq.", "vs.", "Sec.", "cf.", "resp.", "approx." or "No.").
    """
    found = []
    for line in text.splitlines():
        if not line.strip() or _SKIPPED_LINE.match(line):
            continue
        for sentence in _SENTENCE_END.split(normalise(line)):
            if number_tokens(sentence):
                found.append(sentence)
    return found
