"""The rules UCAN's statements need beyond the generic ones, registered on import.

Each rule reads one ledger row (its text columns) and returns ``(found, verdict)``
(:func:`~rsutils.book.audit.ledger.rules.ledger_rule`). The comparative words of the text
are read literally, with no threshold of the book's choosing: "uniformly best" is
the largest cell in every printed column, "exceeding" is strictly larger, "up to X%"
is the largest relative improvement, a count is the number of distinct rows. Cells
of a transcribed table are taken as printed (the paper's own improvement rows are
computed from its printed integers: 182.6 = (65 − 23)/23 × 100), and a stated
number holds when the computed one lies within half a unit of its last printed digit.

Table rules (columns ``tables``, ``rows``, ``to``, ``column``; ``|`` separates items):

- ``improvement_over``: ``value`` is the relative improvement (``relative %``) of row
  ``to`` over the best of ``rows`` (empty: every baseline, i.e. every row of
  certified accuracy not labelled "Ours") at ``column`` (empty: the largest over the
  columns where a named baseline prints a positive value);
- ``largest``: the best of the rows ``to`` is strictly above every printed cell of
  ``rows`` (empty: every other certified-accuracy row) at each of ``column`` (empty:
  every column where one of ``rows`` prints a value);
- ``printed_in_row``: ``value`` is printed somewhere in the rows ``rows`` of ``tables``;
- ``zero_beyond``: every cell of ``rows`` right of ``column`` equals ``value``;
- ``peak_at``: the largest cell of ``rows`` stands at ``column``;
- ``falls_below``: in each of ``tables`` an "Ours" row is below the best baseline
  at some column;
- ``rises``: the printed improvement rows of ``tables`` never fall from one column
  to the next;
- ``count_baselines``: ``value`` is the number of distinct baselines (by their
  citation number) of ``tables``;
- ``caption``: the caption of the figure or table ``tables`` (as the text labels it,
  ``Figure 4`` or ``TABLE IV``; :func:`ucan2025_captions`, with its panels) holds
  each phrase of ``rows``, case aside.

Rules relating statements: ``product`` (``value`` is the product of the printed
numbers ``from``), ``increase`` (``to`` is above ``from``: the direction the word
states, with the size printed), ``same_gpu`` (the GPU models this row's quote names
are those of the row whose id is ``from``; :func:`named_gpus`) and
``gamma_identities`` (the three properties of Euler's Γ the appendix lists, by scipy).

Rules reading a release (the reference folder; without it they answer "not checkable"
and say so): ``released_generator`` (a fact of UCAN's released generators, named in
``column``: :data:`GENERATOR_FACTS`), ``cohen_images_of_ucan`` (how many images Cohen
et al.'s released test logs of the dataset ``column`` hold, and at which stride, against
a stated count ``value``; with no ``value`` the rule only reports them: whether the
release covers a whole test set is a fact of Cohen et al.'s release, not of the
sentence that follows them, so it says "not checkable" and the row's reason says why)
and ``cohen_seconds_of_ucan`` (their logs' seconds
per certificate beside the stated time: different hardware, so "not checkable" with
the ratio, and the row's reason says why). ``alm_needs_gamma`` gives the least bound on
the scale multipliers σ (the generator's γ) under which an ALM of ``value`` can be
certified with ``λ|n|α`` in ``from`` (ALM ≤ γ·λ·Φ⁻¹(α^(1/n))); γ is not stated, so
it is "not checkable" with that bound printed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from importlib.resources import files

import numpy as np
import pandas as pd
import torch
from scipy.special import gamma
from scipy.stats import norm

from rsutils.anisotropic.released import UCAN2025_FILES, ReleasedUCANGenerator, ucan2025_file
from rsutils.book.audit.ledger.rules import LedgerContext, ledger_rule, printed_interval, verdict
from rsutils.book.audit.verdicts import LedgerVerdict
from rsutils.book.papers.released import COHEN2019_CERTIFY_LOGS, cohen2019_certify_log
from rsutils.core.confidence import max_certifiable_pA
from rsutils.logs.read import read_log

__all__ = ["GENERATOR_FACTS", "named_gpus", "ucan2025_captions"]

Row = Mapping[str, str]
#: The facts of UCAN's released generators ``released_generator`` reads, and where from.
GENERATOR_FACTS = {
    "lambda": "the noise level in both file names (``…_sigma1.0_best.pth``)",
    "gamma": "the bound of σ = |tanh(·)| in the release's certification script",
    "input channels": "the input channels of the first convolution (``Image_first``)",
    "leaky convolutions": "the dense block's convolutions followed by LeakyReLU",
    "dense block convolutions": "the dense block's convolutions (the stored but unused "
    "``conv_variance`` left out)",
    "convolutions": "the convolutions on the path to the output (the stored but "
    "unused ``*_variance`` ones left out)",
}
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8}


def _items(text: str) -> list[str]:
    return [item for item in text.split("|") if item]


def _holds_at_print(stated: str, computed: float) -> bool:
    low, high = printed_interval(stated)
    return low - 1e-9 <= computed <= high + 1e-9


def _accuracy(context: LedgerContext, name: str) -> pd.DataFrame:
    return context.table(name).rows("certified_accuracy").astype(float)


def _baselines(accuracy: pd.DataFrame) -> list[str]:
    return [label for label in accuracy.index if not label.startswith("Ours")]


@ledger_rule("improvement_over")
def _improvement_over(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    accuracy = _accuracy(context, row["tables"])
    ours, named = accuracy.loc[row["to"]], _items(row["rows"]) or _baselines(accuracy)
    columns = [row["column"]] if row["column"] else list(accuracy.columns)
    found = []
    for column in columns:
        printed = accuracy.loc[named, column].dropna()
        if printed.empty or printed.max() <= 0 or np.isnan(ours[column]):
            continue
        best = float(printed.max())
        found.append(
            ((ours[column] - best) / best * 100, column, printed.idxmax(), best, len(printed))
        )
    if not found:
        return str(LedgerVerdict.NOT_PRINTED), LedgerVerdict.NOT_PRINTED
    relative, column, best_row, best, count = max(found)
    text = (
        f"{relative:.1f} relative % ({ours[column] - best:g} points) at {column}: "
        f"{ours[column]:g} over {best_row} {best:g}; {count} of {len(named)} named "
        "baselines printed there"
    )
    return text, verdict(_holds_at_print(row["value"], relative))


@ledger_rule("largest")
def _largest(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    accuracy = _accuracy(context, row["tables"])
    ours = _items(row["to"])
    rivals = _items(row["rows"]) or [label for label in accuracy.index if label not in ours]
    columns = _items(row["column"]) or [
        c for c in accuracy.columns if accuracy.loc[rivals, c].notna().any()
    ]
    beaten = []
    for column in columns:
        printed = accuracy.loc[rivals, column].dropna()
        mine = accuracy.loc[ours, column]
        if printed.empty or mine.isna().any():
            return f"nothing to compare at {column}", LedgerVerdict.NOT_PRINTED
        if mine.max() <= printed.max():
            beaten.append(f"{column}: {printed.idxmax()} {printed.max():g} ≥ {mine.max():g}")
    if beaten:
        return "not above at " + "; ".join(beaten), LedgerVerdict.DOES_NOT_HOLD
    above = f"above at {len(columns)} of {len(columns)} columns ({', '.join(columns)})"
    return above, LedgerVerdict.HOLDS


@ledger_rule("printed_in_row")
def _printed_in_row(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    cells, shown = [], []
    for name in _items(row["tables"]):
        accuracy = _accuracy(context, name)
        for label in _items(row["rows"]):
            if label in accuracy.index:
                values = accuracy.loc[label].dropna()
                cells += list(values)
                shown.append(f"{label} in {name}: " + ", ".join(f"{v:g}" for v in values))
    if not shown:
        raise ValueError(f"{row['id']}: none of the rows {row['rows']!r} is in {row['tables']}")
    return "; ".join(shown), verdict(float(row["value"]) in cells)


@ledger_rule("zero_beyond")
def _zero_beyond(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    accuracy = _accuracy(context, row["tables"])
    cells = accuracy.loc[row["rows"]]
    after = cells.iloc[list(cells.index).index(row["column"]) + 1 :]
    text = ", ".join(f"{v:g} at {c}" for c, v in after.items())
    text += f" (and {cells[row['column']]:g} at {row['column']})"
    return text, verdict(bool((after == float(row["value"])).all()))


@ledger_rule("peak_at")
def _peak_at(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    cells = _accuracy(context, row["tables"]).loc[row["rows"]].dropna()
    return f"largest {cells.max():g} at {cells.idxmax()}", verdict(cells.idxmax() == row["column"])


@ledger_rule("falls_below")
def _falls_below(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    shown, every = [], True
    for name in _items(row["tables"]):
        accuracy = _accuracy(context, name)
        best = accuracy.loc[_baselines(accuracy)].max()
        below = [
            f"{label.removeprefix('Ours ')} at {', '.join(accuracy.columns[mine < best])}"
            for label, mine in accuracy.iterrows()
            if label.startswith("Ours") and (mine < best).any()
        ]
        every &= bool(below)
        shown.append(f"{name}: " + ("; ".join(below) or "nowhere"))
    return " | ".join(shown), verdict(every)


@ledger_rule("rises")
def _rises(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    falls = []
    for name in _items(row["tables"]):
        table = context.table(name)
        for position, kind in enumerate(table.kinds):
            if kind != "improvement":
                continue
            ours = str(table.data.iloc[position - 1]["row"]).removeprefix("Ours ")
            values = table.data.iloc[position, 1:].astype(float).dropna()
            falls += [
                f"{name} {ours} {a}→{b}: {values[a]:g}→{values[b]:g}"
                for a, b in zip(values.index, values.index[1:], strict=False)
                if values[b] < values[a]
            ]
    return ("falls at " + "; ".join(falls)) if falls else "never falls", verdict(not falls)


@ledger_rule("count_baselines")
def _count_baselines(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    keys: set[int] = set()
    for name in _items(row["tables"]):
        for label in _baselines(_accuracy(context, name)):
            keys |= {int(k) for k in re.findall(r"\[(\d+)\]", label)}
    text = f"{len(keys)}: " + ", ".join(f"[{k}]" for k in sorted(keys))
    return text, verdict(len(keys) == float(row["value"]))


def ucan2025_captions() -> pd.DataFrame:
    """UCAN's figure and table captions as its text prints them: ``label`` (``Figure 4``,
    ``TABLE IV``), ``caption`` (the line, verbatim) and ``panels`` (the lines of its
    sub-figures, ``(a) …``, joined by a spaced middle dot; empty when it has none)."""
    path = files("rsutils.book").joinpath("tables", "ucan2025_captions.csv")
    with path.open(encoding="utf-8") as handle:
        return pd.read_csv(handle, dtype=str, keep_default_na=False)


@ledger_rule("caption")
def _caption(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    captions = ucan2025_captions().set_index("label")
    if row["tables"] not in captions.index:
        raise ValueError(
            f"{row['id']}: no caption labelled {row['tables']!r}; use one of {list(captions.index)}"
        )
    caption, panels = captions.loc[row["tables"], ["caption", "panels"]]
    text = f"{caption} {panels}".lower()
    missing = [word for word in _items(row["rows"]) if word.lower() not in text]
    shown = caption + (f" [{panels}]" if panels else "")
    return shown + (f" (lacks {', '.join(missing)})" if missing else ""), verdict(not missing)


@ledger_rule("product")
def _product(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    factors = [float(x.replace(",", "")) for x in _items(row["from"])]
    found = math.prod(factors)
    return f"{found:,.0f}", verdict(_holds_at_print(row["value"], found))


@ledger_rule("increase")
def _increase(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    before, after = float(row["from"]), float(row["to"])
    text = f"{after - before:+.4g} ({(after - before) / before * 100:+.2f} relative %)"
    return text, verdict(after > before)


_GPU = re.compile(r"\b(?:[AHKPTV]\d{2,3}|RTX\s*\d{4}(?:\s*Ti)?|GTX\s*\d{3,4}(?:\s*Ti)?)\b")


def named_gpus(text: str) -> set[str]:
    """The GPU models ``text`` names (``"four Tesla V100 GPUs"`` → ``{"V100"}``): an
    NVIDIA data-centre model (``V100``, ``A100``, ``H100``…) or an RTX/GTX card."""
    return {" ".join(match.split()) for match in _GPU.findall(text)}


@ledger_rule("same_gpu")
def _same_gpu(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    other = context.rows.set_index("id").loc[row["from"], "quote"]
    here, there = named_gpus(row["quote"]), named_gpus(other)
    if not (here and there):
        raise ValueError(f"{row['id']}: its quote or {row['from']}'s names no GPU model")
    return f"{', '.join(sorted(here))} here; {', '.join(sorted(there))} in {row['from']}", (
        verdict(here == there)
    )


@ledger_rule("gamma_identities")
def _gamma_identities(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    beta = np.linspace(0.1, 10, 100)
    integers = np.arange(1, 15)
    gaps = [
        np.abs(beta * gamma(beta) / gamma(beta + 1) - 1).max(),
        np.abs(gamma(integers) / [math.factorial(k - 1) for k in integers] - 1).max(),
        abs(gamma(0.5) / math.sqrt(math.pi) - 1),
    ]
    return f"largest relative gap {max(gaps):.1e} (scipy)", verdict(max(gaps) < 1e-12)


@ledger_rule("alm_needs_gamma")
def _alm_needs_gamma(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    if not row["reason"].strip():
        raise ValueError(f"{row['id']}: say why the scale bound is not checkable (reason)")
    lam, n, alpha = (float(x.replace(",", "")) for x in _items(row["from"]))
    largest = lam * float(norm.ppf(max_certifiable_pA(int(n), alpha)))
    needed = float(row["value"]) / largest
    return (
        f"needs a bound γ ≥ {needed:.2f} on σ: an isotropic certificate reaches at most "
        f"λ·Φ⁻¹(α^(1/n)) = {largest:.2f}"
    ), LedgerVerdict.NOT_CHECKABLE


def _generator_fact(fact: str, root: object) -> tuple[float, str]:
    names = [name for name, _ in UCAN2025_FILES.values()]
    if fact == "lambda":
        levels = {float(re.search(r"sigma([\d.]+)_", name).group(1)) for name in names}  # type: ignore[union-attr]
        if len(levels) != 1:
            raise ValueError(f"the released files name different noise levels: {levels}")
        return levels.pop(), "in " + " and ".join(names)
    if fact == "gamma":
        return ReleasedUCANGenerator.sigma_bound, "σ = |tanh(·)| < 1 in the release's script"
    state = torch.load(ucan2025_file("sigma", root), weights_only=True, map_location="cpu")
    convolutions = [k for k, v in state.items() if k.endswith("weight") and v.dim() == 4]
    if fact == "input channels":
        return float(state["Image_first.weight"].shape[1]), "Image_first's input channels"
    if fact == "leaky convolutions":
        dense = [k for k in convolutions if re.fullmatch(r"TRN\.conv\d+\.weight", k)]
        return float(len(dense)), ", ".join(k.removesuffix(".weight") for k in dense)
    if fact == "dense block convolutions":
        block = [
            k.removesuffix(".weight")
            for k in convolutions
            if k.startswith("TRN.") and "variance" not in k
        ]
        return float(len(block)), ", ".join(block)
    if fact == "convolutions":
        used = [k.removesuffix(".weight") for k in convolutions if "variance" not in k]
        return float(len(used)), ", ".join(used)
    raise ValueError(f"unknown fact {fact!r} of the release; use one of {list(GENERATOR_FACTS)}")


@ledger_rule("released_generator")
def _released_generator(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    try:
        value, where = _generator_fact(row["column"], context.reference_root)
    except FileNotFoundError as missing:
        return f"the release is not at hand: {missing}", LedgerVerdict.NOT_CHECKABLE
    return f"{value:g} ({where})", verdict(value == float(row["value"].replace(",", "")))


def _cohen_logs(dataset: str, root: object) -> list[pd.DataFrame]:
    return [
        read_log(cohen2019_certify_log(d, trained, sigma, split=split, root=root))  # type: ignore[arg-type]
        for d, trained, split, sigma in COHEN2019_CERTIFY_LOGS
        if d == dataset and split == "test"
    ]


@ledger_rule("cohen_images_of_ucan")
def _cohen_images(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    if not row["value"] and not row["reason"].strip():
        raise ValueError(f"{row['id']}: say why the release's coverage is no verdict (reason)")
    try:
        logs = _cohen_logs(row["column"], context.reference_root)
    except FileNotFoundError as missing:
        return f"Cohen et al.'s logs are not at hand: {missing}", LedgerVerdict.NOT_CHECKABLE
    counts = pd.Series([len(log) for log in logs])
    usual = int(counts.mode().max())
    strides = {int(s) for log in logs for s in np.unique(np.diff(log["idx"]))}
    first = min(int(log["idx"].min()) for log in logs)
    last = max(int(log["idx"].max()) for log in logs)
    text = (
        f"{usual} images in {int((counts == usual).sum())} of {len(logs)} test logs "
        f"(others: {', '.join(str(c) for c in counts[counts != usual]) or 'none'}), "
        f"index stride {', '.join(map(str, sorted(strides)))} from {first} to {last}"
    )
    if row["value"]:
        return text, verdict(usual == float(row["value"].replace(",", "")))
    whole = "cover" if strides == {1} else "do not cover"
    return f"{text}: the logs {whole} the test set", LedgerVerdict.NOT_CHECKABLE


@ledger_rule("cohen_seconds_of_ucan")
def _cohen_seconds(row: Row, context: LedgerContext) -> tuple[str, LedgerVerdict]:
    if not row["reason"].strip():
        raise ValueError(f"{row['id']}: say why a time on other hardware is not a verdict")
    try:
        logs = _cohen_logs(row["column"], context.reference_root)
    except FileNotFoundError as missing:
        return f"Cohen et al.'s logs are not at hand: {missing}", LedgerVerdict.NOT_CHECKABLE
    seconds = [float(log["time"].mean()) for log in logs]
    mean, stated = float(np.mean(seconds)), float(row["value"])
    count = re.search(
        r"\b(one|two|three|four|five|six|eight|\d+)\s+(?:\w+\s+){0,2}GPUs?", row["quote"]
    )
    gpus = 1 if count is None else _WORDS.get(count.group(1)) or int(count.group(1))
    text = (
        f"{mean:.1f} s per certificate in Cohen et al.'s {len(logs)} released "
        f"{row['column']} test logs ({min(seconds):.1f}–{max(seconds):.1f}); "
        f"released ÷ stated = {mean / stated:.2f}"
    )
    if gpus > 1:
        text += f"; released ÷ (stated × {gpus} GPUs) = {mean / (stated * gpus):.2f}"
    return text, LedgerVerdict.NOT_CHECKABLE
