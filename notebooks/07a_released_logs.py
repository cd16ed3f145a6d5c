# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version,-jupytext.text_representation.format_version
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# (chapter-released-logs)=
# # Every log Cohen et al. released
#
# Were the logs that {cite:t}`cohen2019certified` released produced with the settings
# the paper states, $n = 100{,}000$ draws at $\alpha = 0.001$? This page of
# {ref}`chapter-sota-tables` answers it log by log. Released logs are the strongest evidence a
# paper can give short of its models: each line is one certificate, so every number of
# the tables can be recomputed, and so can numbers the tables do not print.
#
# The logs are read from the folder that `reference_root` names, a copy of the files
# the authors published; nothing is downloaded when the book runs. Their format is the
# one this library's command line writes too, so the same analysis applies to logs a
# reader produces.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import pandas as pd
from scipy.stats import norm

import rsutils as rs
from rsutils.book import glue_all, glue_fields
from rsutils.book.audit import ledger as lg
from rsutils.book.audit import released_alpha as implied_alpha
from rsutils.book.audit.verdicts import AlphaVerdict
from rsutils.book.chapters.pages import open_page
from rsutils.book.papers import released as rel

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, data folder, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
# folder holding cohen2019/ (default: $RSUTILS_REFERENCE)
reference_root = None
seed = 0

# %% tags=["hide-input"]
chapter, S = open_page(
    "chapter-released-logs", profile, seed=seed, progress=progress
)
pd.set_option("display.max_rows", None)  # every log, every cell

# %% [markdown]
# ## The logs in the tables' layout
#
# {ref}`chapter-tight-radius` re-derives Tables 1, 3 and 4 from the logs of the models
# they print. The release holds more: {glue:text}`n_released` certification logs
# (models certified at their own σ and at 0.50, and one ImageNet model certified on its
# training images) and {glue:text}`n_predict` PREDICT logs
# ({func}`~rsutils.book.papers.released.reanalyse_released_certify`). Every one is below in
# the tables' layout: certified accuracy at their radii, ACR, and the largest
# certificate against the ceiling $\sigma\Phi^{-1}(\alpha^{1/n})$ that the stated
# $n = 100{,}000$ and $\alpha = 0.001$ impose, with the smallest $\alpha$ that
# certificate needs.
#
# Each log is named by four labels: the dataset, the $\sigma$ its model was trained
# with, the split it was certified on and the $\sigma$ it was certified with. The
# table is split in two to fit the page; both halves have the same rows.

# %%
released = rel.reanalyse_released_certify(root=reference_root)
shown = released.drop(columns=["seconds per image"]).round(3)
shown["α it needs"] = released["α it needs"].map("{:.1e}".format)
shown["draws it needs"] = released["draws it needs"].map("{:,}".format)
limits = ["largest radius", "ceiling", "α it needs", "draws it needs"]
limits.append("largest gap to the table")

# %% [markdown]
# First the tables' layout: the number of images in each log, the approximate
# certified accuracy at the tables' radii and the ACR.

# %%
shown.drop(columns=limits)

# %% [markdown]
# Then what each log's largest certificate says about the settings it was run with.
# "α it needs" is the smallest level at which $n = 100{,}000$ draws certify that
# radius, "draws it needs" the fewest draws that certify it at the stated
# $\alpha = 0.001$, and the last column the largest gap between the log and the
# printed row of the same model, where the tables print one.

# %%
shown[limits]

# %% [markdown]
# Read the first two columns together: a largest radius above its ceiling is a
# certificate that the stated $n$ and $\alpha$ cannot produce, whatever the model.
# The next two say what would produce it, a larger $\alpha$ at the stated $n$ or
# more draws at the stated $\alpha$.
#
# ## The level each log implies
#
# A log's largest certificate is one line of it; the level shows in many more. An
# input on which all $n$ draws agree gets the ceiling $\sigma\Phi^{-1}(\alpha^{1/n})$
# of the level the log was run at: {glue:text}`ceiling_multiple:.2f`σ at the stated
# $\alpha = 0.001$, {glue:text}`ceiling_multiple_01:.2f`σ at $\alpha = 0.01$. Such
# inputs are common, so a log's certificates pile up at one of the two
# ({func}`~rsutils.book.audit.released_alpha.released_alpha_evidence`). Per log: how
# many of its certificates print exactly as each ceiling (within half a unit of the
# third printed digit, as the logs write radii), how many lie above it, and what
# that says:

# %%
levels = implied_alpha.released_alpha_evidence(root=reference_root)
ceilings = [c for c in levels.columns if "ceiling" in c]
named = levels.set_axis(levels.index.map(implied_alpha.log_label))
named.rename_axis("log (trained/certified σ)")[[*ceilings, "ceilings say"]]

# %% [markdown]
# The rule of the last column
# ({func}`~rsutils.book.audit.released_alpha.ceiling_verdict`): "α = 0.01" when some
# certificate lies above the 0.001 ceiling and none above the 0.01 one; "α = 0.001"
# when none lies above the 0.001 ceiling and some print as it (run at 0.01, the
# inputs whose draws all agreed would sit at the higher ceiling); "undecidable" when
# every certificate lies below both ceilings, where they say nothing of the level.
# A certificate at the 0.001 ceiling is not enough on its own: at σ = 0.5 that
# ceiling prints as {glue:text}`shared_print`, and so does the certificate that
# $\alpha = 0.01$ gives when one draw of the $n$ falls outside the top class.
#
# The ceilings read only the top of each log. Every certificate, down to those near
# radius 0, also pins the count of draws behind it at a given level
# ({func}`~rsutils.analysis.printed.count_range`), and near the ceilings and near 0 the
# certificates of consecutive counts lie further apart than a printed unit: a
# printed radius there often fits one level only. Per log, its certificates (the
# answers that are not abstentions), those that no count gives at each level, what
# they say by the same rule
# ({func}`~rsutils.book.audit.released_alpha.radii_verdict`), and the level the log
# implies: the ceilings' verdict where it decides, the radii's where it does not.

# %%
radii = ["certificates", "no count at 0.001", "no count at 0.01"]
named.rename_axis("log")[[*radii, "radii say", "implied α"]]

# %% tags=["remove-cell"]
said, level_of = levels["ceilings say"], levels["implied α"]
at_01, at_001 = AlphaVerdict.ALPHA_0_01, AlphaVerdict.ALPHA_0_001
past_stated = released[said == at_01]
by_dataset = past_stated.index.get_level_values(0).value_counts()
glue_all(
    n_ceil_01=len(past_stated),
    ceil_01_by_dataset=", ".join(
        f"{n} {implied_alpha.DATASET_NAMES[d]}"
        for d, n in by_dataset.items()
    ),
    at_01_total=int(levels.loc[said == at_01, "at 0.01 ceiling"].sum()),
    above_01_total=int(levels["above 0.01 ceiling"].sum()),
    n_ceil_001=int((said == at_001).sum()),
    ceil_001_logs=", ".join(
        map(implied_alpha.log_label, said[said == at_001].index)
    ),
    at_001_total=int(levels.loc[said == at_001, "at 0.001 ceiling"].sum()),
)

# %% tags=["remove-cell"]
undecidable = said == AlphaVerdict.UNDECIDABLE
decided = levels[undecidable & (level_of != said)]
sigma_half = 0.5 * norm.ppf(rs.max_certifiable_pA(100_000, 0.001))
glue_all(
    ceiling_multiple_01=float(
        norm.ppf(rs.max_certifiable_pA(100_000, 0.01))
    ),
    shared_print=f"{sigma_half:.3}",
    n_ceil_undecidable=int(undecidable.sum()),
    ceil_undecidable_logs=", ".join(
        map(implied_alpha.log_label, said[undecidable].index)
    ),
    n_radii_decided=len(decided),
    radii_decided=", ".join(
        f"{implied_alpha.log_label(key)} at {level}"
        for key, level in decided["radii say"].items()
    ),
)
classes = {"01": at_01, "001": at_001}
classes |= {
    "undecidable": AlphaVerdict.UNDECIDABLE,
    "conflicting": AlphaVerdict.CONFLICTING,
}
glue_fields(level_of.value_counts(), "n_implied_", classes, default=0)

# %% tags=["remove-cell"]
# one test, one number: the ledger counts the logs that imply 0.01 as this
# page does, and its statements of n count those above the 0.001 ceiling
rows = lg.ledger().query("id in ['cohen-alpha', 'cohen-draws']")
context = lg.LedgerContext(rows, reference_root=reference_root)
by_id = lg.check_ledger(rows, context).set_index("id")
ledger_alpha = by_id.loc["cohen-alpha", "found"]
ledger_draws = by_id.loc["cohen-draws", "found"]
n_01 = int((level_of == at_01).sum())
assert ledger_alpha.startswith(
    f"{n_01} of {len(levels)} logs imply α = 0.01"
)
n_ceil_01 = int((said == at_01).sum())
assert ledger_draws.startswith(f"{n_ceil_01} of ")
glue_all(
    ledger_alpha=ledger_alpha,
    ledger_draws=ledger_draws,
    alpha_ratio=implied_alpha.ALTERNATIVE_ALPHA
    / implied_alpha.STATED_ALPHA,
)

# %% tags=["remove-cell"]
short = released[released["images"] < 500]
seconds_by_dataset = released.groupby(level="dataset")[
    "seconds per image"
].mean()
glue_all(
    n_released=len(released),
    draws_at_stated=f"{int(past_stated['draws it needs'].min()):,}",
    ceiling_multiple=float(
        norm.ppf(rs.max_certifiable_pA(100_000, 0.001))
    ),
    alpha_needed=f"{past_stated['α it needs'].min():.4f}–"
    f"{past_stated['α it needs'].max():.4f}",
    short_log=", ".join(
        f"{implied_alpha.DATASET_NAMES[d]} σ = {s:.2f} ({n} images)"
        for (d, _, _, s), n in short.images.items()
    ),
    largest_gap=float(released["largest gap to the table"].max()),
    seconds_imagenet=float(seconds_by_dataset["imagenet"]),
    seconds_cifar=float(seconds_by_dataset["cifar10"]),
)
assert len(past_stated) == 8
assert AlphaVerdict.CONFLICTING not in set(level_of)

# %% [markdown]
# The published rows follow from their logs: the largest gap is
# {glue:text}`largest_gap:.3f` (CIFAR-10's logs hold 500 images, Table 3 claims the
# test set). The level they were run at differs from log to log (each named by
# dataset, trained σ / certified σ). {glue:text}`n_ceil_01` logs
# ({glue:text}`ceil_01_by_dataset`) hold certificates above the 0.001 ceiling,
# {glue:text}`at_01_total` of them exactly at the 0.01 one and
# {glue:text}`above_01_total` above it: consistent with $\alpha = 0.01$, not with the
# stated level. With the stated draws their largest certificates need $\alpha$ of
# {glue:text}`alpha_needed` (or, at 0.001, at least {glue:text}`draws_at_stated`
# draws; the logs do not record which). Only a certificate above a ceiling says
# anything of the number of draws, so these {glue:text}`n_ceil_01` are the logs the
# ledger's statements of $n$ count ({glue:text}`ledger_draws`).
# {glue:text}`n_ceil_001` logs ({glue:text}`ceil_001_logs`) pile
# {glue:text}`at_001_total` certificates at the 0.001 ceiling and none above it:
# consistent with the stated level. The other {glue:text}`n_ceil_undecidable`
# ({glue:text}`ceil_undecidable_logs`) stay below both ceilings, and their printed
# radii decide {glue:text}`n_radii_decided` of them: {glue:text}`radii_decided`.
#
# In all, by the two tests together (the column "implied α" above),
# {glue:text}`n_implied_01` of the {glue:text}`n_released` logs imply
# $\alpha = 0.01$, {glue:text}`alpha_ratio:.0f` times the stated level;
# {glue:text}`n_implied_001` imply the stated 0.001, and the certificates of
# {glue:text}`n_implied_undecidable` fit both; the two tests disagree on
# {glue:text}`n_implied_conflicting` logs. Each verdict holds at the stated
# $n = 100{,}000$. This is the one count of logs that rule out the stated level that
# the book gives: the ledger's statements of $\alpha$ are checked by the same test
# ({glue:text}`ledger_alpha`).
#
# ### Or more draws at the stated level?
#
# A certificate above the 0.001 ceiling of $n = 100{,}000$ fits $\alpha = 0.01$ at
# the stated $n$, and also $\alpha = 0.001$ with more draws $n'$: the logs do not
# record $n$. The printed radii test that reading too, on the logs whose ceilings
# say $\alpha = 0.01$. Their inputs whose draws all agreed print at the 0.001
# ceiling of $n'$, so only the $n'$ whose ceiling prints as the log's largest
# certificate can be it
# ({func}`~rsutils.book.audit.released_alpha.draws_matching_ceiling`); each such
# $n'$ is tried against every printed radius of the log, and the reading is ruled
# out when no $n'$ gives every radius a count of its draws
# ({func}`~rsutils.book.audit.released_alpha.more_draws_evidence`):

# %%
at_ceilings = levels["ceilings say"] == AlphaVerdict.ALPHA_0_01
more_draws = implied_alpha.more_draws_table(
    levels.index[at_ceilings], root=reference_root
)
labels = [implied_alpha.log_label(key) for key in more_draws.index]
more_draws.set_axis(labels).rename_axis("log (trained/certified σ)")

# %% tags=["remove-cell"]
fit = more_draws["draws that fit"] > 0
glue_all(
    n_more_tried=len(more_draws),
    n_more_ruled_out=int((~fit).sum()),
    more_open=", ".join(
        implied_alpha.log_label(key) for key in more_draws.index[fit]
    )
    or "none",
)

# %% [markdown]
# The printed radii rule out more draws at the stated level for
# {glue:text}`n_more_ruled_out` of these {glue:text}`n_more_tried` logs: for them
# $\alpha = 0.01$ at the stated $n$ is the one reading left. For the others
# ({glue:text}`more_open`) some $n'$ fits every printed radius, and $\alpha = 0.001$
# with that many draws stays a reading their certificates allow.
#
# ## Recertified at the stated level
#
# Taking the logs that imply $\alpha = 0.01$ as run at that level with that $n$, the
# printed radius pins each certificate's count of draws closely enough to recertify
# it at the stated level
# ({func}`~rsutils.book.papers.released.recertify_released_logs`). The cells of the
# tables' layout whose certified accuracy then changes:

# %%
run_at_01 = levels[levels["implied α"] == AlphaVerdict.ALPHA_0_01]
at_stated = rel.recertify_released_logs(
    run_at_01.index, alpha=0.001, run_alpha=0.01, root=reference_root
)
changed = at_stated[at_stated["largest change"] > 0]
changed.round(3)

# %% tags=["remove-cell"]
keys = ["dataset", "trained σ", "split", "certified σ"]
two_decimals = changed[["least", "greatest"]].round(2)
moved = changed[
    two_decimals.ne(changed["as released"].round(2), axis=0).any(axis=1)
]
glue_all(
    recertified_change=float(at_stated["largest change"].max()),
    recertified_cells=len(changed),
    recertified_total=len(at_stated),
    n_moved=len(moved),
    moved=", ".join(
        f"{implied_alpha.log_label(tuple(key))} at r = {r:g}"
        for key, r in zip(
            moved[keys].to_numpy(), moved["radius"], strict=True
        )
    ),
)
assert len(run_at_01) == 9

# %% [markdown]
# Certified accuracy at the tables' radii changes by at most
# {glue:text}`recertified_change:.3f` (in {glue:text}`recertified_cells` of
# {glue:text}`recertified_total` cells). At the two decimals the tables print, the
# logs' accuracy moves in {glue:text}`n_moved` cells ({glue:text}`moved`): there a
# table computed at the stated level could print a hundredth less, depending on
# which count each radius stands for. Elsewhere the tables' numbers stand at two
# decimals, but each certificate of those logs holds with probability 0.99, not
# 0.999. One log is short: {glue:text}`short_log`. A certificate took
# {glue:text}`seconds_imagenet:.0f` s on ImageNet and {glue:text}`seconds_cifar:.0f`
# s on CIFAR-10.
#
# How a printed radius pins a count: at a known $n$ and level, the radius is
# $\sigma\Phi^{-1}$ of the Clopper–Pearson bound on $k$ successes out of $n$, which
# rises with $k$, so the radius, printed to three significant digits, leaves only a
# few counts $k$ possible. Each is recertified at the stated level, and the least and
# greatest resulting accuracy bracket what the paper would have printed
# ({func}`~rsutils.book.papers.released.recertify_released_logs`). The change above is
# the larger of the two distances from the accuracy as released to the ends of that
# bracket, so it allows for every count that the printed radius leaves open.
#
# ## The PREDICT logs
#
# The PREDICT logs against Table 4
# ({func}`~rsutils.book.papers.released.reanalyse_released_predict`):

# %%
predict = rel.reanalyse_released_predict(root=reference_root)
timing = ["seconds per prediction", "seconds per prediction, printed"]
predict.drop(columns=timing).round(3)

# %% [markdown]
# One row per number of draws $n$: each quantity recomputed from the log, then as
# Table 4 prints it, empty where the table prints nothing. This is the table of
# {ref}`chapter-tight-radius`'s PREDICT table with the log at $n = 100{,}000$ added.
# The time per prediction, recomputed and printed, in a table of its own to fit the
# page; it grows with $n$ because every draw is one forward pass:

# %%
predict[timing].round(3)

# %% tags=["remove-cell"]
glue_all(n_predict=len(predict))

# %% [markdown]
# ## What holds up
#
# The released logs follow the published tables, but not the stated level: the
# certificates of {glue:text}`n_implied_01` of the {glue:text}`n_released` logs imply
# $\alpha = 0.01$, {glue:text}`alpha_ratio:.0f` times the $\alpha = 0.001$ the paper
# states, those of {glue:text}`n_implied_001` imply the stated level, and
# {glue:text}`n_implied_undecidable` cannot tell. The other reading, the stated
# level with more draws than stated, is ruled out by the printed radii for
# {glue:text}`n_more_ruled_out` of the {glue:text}`n_more_tried` logs whose ceilings
# decide, and left open for {glue:text}`more_open`. The printed rows lie within
# {glue:text}`largest_gap:.3f` of their logs. Recertified at the stated level, the
# logs' accuracy loses at most a hundredth at the two decimals the tables print, in
# {glue:text}`n_moved` cells: the tables' numbers stand, but each certificate behind
# them holds with probability 0.99, not 0.999. These findings are exact: they follow
# from the released files, the same at every profile.
