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
# (chapter-printed-tables)=
# # The printed tables, checked
#
# Could the numbers the papers' tables print be certified accuracies of the models
# they name, computed as the papers define them? This page of {ref}`chapter-sota-tables`
# asks it of every printed table, with rules that need no model: the tables'
# agreement with themselves, and what the theory of randomized smoothing ties
# together. Its sections:
#
# - the tables as data;
# - every improvement UCAN print, recomputed from the accuracies beside it;
# - the rules every table of certified accuracy obeys, and the row printed for two
#   datasets;
# - one model's two rows, by ALM and by radius, agree at radius 0;
# - the most a certificate can reach, per noise family and norm;
# - the rows one norm's table shares with another's.
#
# Everything here is read from the printed digits alone, so every finding is
# exact, the same at every profile, and none needs a model or a released file: a
# table that breaks a rule below breaks it whatever produced it.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import re

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns
from scipy.stats import norm

import rsutils as rs
from rsutils.book import glue_all, glue_fields
from rsutils.book.audit import table_audit as audit
from rsutils.book.audit import table_bounds as tb
from rsutils.book.audit.one_model import one_model_check
from rsutils.book.chapters.pages import open_page
from rsutils.book.papers.published import check_schema

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% tags=["hide-input"]
chapter, S = open_page(
    "chapter-printed-tables", profile, seed=seed, progress=progress
)
pd.set_option("display.max_rows", None)  # every row of every listing

# %% [markdown]
# Tables go by short names on this page: Cohen et al.'s summarised Tables 1 and 3,
# and UCAN's by number, with Table II's two blocks told apart by their norm; UCAN's
# long row labels "Ours (certified accuracy w.r.t. ALM)" and "Ours (certified
# accuracy w.r.t. radius)" are "Ours, ALM" and "Ours, radius".

# %% tags=["hide-input"]
SHORT_TABLES = {
    name: t.meta["table"]
    .replace(" block", "")
    .replace(" (as summarised)", "")
    for name, t in S.tables.items()
}
SHORT_ROWS = {
    "Ours (certified accuracy w.r.t. ALM)": "Ours, ALM",
    "Ours (certified accuracy w.r.t. radius)": "Ours, radius",
}

# %% [markdown]
# ## The tables as data
#
# Each table by its file's name, which starts with the paper's key: "table" is the
# number the paper prints, "radii" the first and last column, and "notes" counts the
# remarks its record makes where the printed text is ambiguous (a misprinted label,
# a column the caption does not explain). All {glue:text}`n_tables` pass the schema
# check ({func}`~rsutils.book.papers.published.check_schema`: provenance present, one
# declared kind and unit per row, increasing radii, certified accuracies within
# 0–100%), so an improvement row cannot be read as an accuracy, and a slip of
# transcription that the test against the text might miss is caught.

# %%
pd.DataFrame(
    {
        name: {
            "table": t.meta["table"],
            "dataset": t.meta["dataset"],
            "norm": t.meta["norm"],
            "rows": len(t.data),
            "radii": f"{t.data.columns[1]} … {t.data.columns[-1]}",
            "notes": len(t.meta.get("notes", [])),
        }
        for name, t in S.tables.items()
    }
).T

# %% tags=["remove-cell"]
assert all(check_schema(t) == [] for t in S.tables.values())
glue_all(n_tables=len(S.tables))

# %% [markdown]
# ## Every printed improvement, recomputed
#
# The improvement rows carry UCAN's headline numbers, and checking them needs no
# model and no data: an improvement is a function of two printed accuracies. Tables
# III–V print, under each of UCAN's rows, its "Improvement over the Best Baseline
# (%)", defined as $(\text{ours} - \text{best})/\text{best}\times 100$ with "best" the
# largest certified accuracy among the rows that are not theirs in the same column
# ({func}`~rsutils.book.audit.table_audit.improvement_check`). A printed number
# *matches* when it is within {glue:text}`rounding:.2f` points of that value rounded
# to one decimal; a *rounding slip* is at most {glue:text}`slip:.3f` points off;
# anything further *differs*. For a number that differs, inverting the definition
# gives the baseline it was computed against, $\text{ours}/(1 +
# \text{printed}/100)$.

# %%
ucan_tables = [t for t in S.tables.values() if "improvement" in t.kinds]
improvements = pd.concat(map(audit.improvement_check, ucan_tables))

# %% tags=["hide-input"]
differ = improvements[improvements.verdict == "differs"]
table_of = {n: f"Table {t.meta['table']}" for n, t in S.tables.items()}
named = improvements.assign(table=improvements.table.map(table_of))
fig, ax = plt.subplots(figsize=(6.4, 3.6))
ax.axline((0, 0), slope=1, color="0.6", lw=1, zorder=1)
xy = {"x": "relative", "y": "printed", "hue": "verdict", "style": "table"}
sns.scatterplot(data=named, **xy, ax=ax)
for (name, radius), cells in differ.groupby(["table", "radius"]):
    where = (cells.relative.max(), cells.printed.min())
    text = f"{table_of[name]}, r = {radius}"
    ax.annotate(text, where, xytext=(8, -6), textcoords="offset points")
ax.set(xlabel="recomputed from the table (%)", ylabel="printed (%)")
ax.legend(loc="upper left", fontsize="small")
glue_all(fig_improvements=fig)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_improvements
# :name: fig-sota-improvements
#
# Each improvement UCAN print against the same improvement recomputed from the
# printed accuracies (grey: the two equal). The points off the line, two per
# column (UCAN's rows by ALM and by radius), are labelled by their table and radius.
# ```
#
# What to look at: every point on the grey line is a printed improvement that the
# table's own accuracies reproduce; the points below it are printed smaller than
# those accuracies give, since they were computed against a larger baseline than
# the best one the column prints.
#
# Of the {glue:text}`n_improvements` printed improvements, {glue:text}`n_match`
# match, {glue:text}`n_slip` is a rounding slip and {glue:text}`n_differ` differ
# ({glue:text}`differ_where`): the improvement rows were computed from the tables,
# with these exceptions. The ones that differ imply baselines of
# {glue:text}`implied` that no row of those columns prints. Each of them, one per
# column:

# %%
columns = ["table", "row", "radius", "ours", "best", "best_row"]
columns += ["printed", "relative", "implied_best", "verdict"]
odd = improvements[improvements.verdict != "matches"]
odd = odd.assign(
    table=[S.tables[name].meta["table"] for name in odd.table],
    row=odd.row.replace(SHORT_ROWS),
)
odd[columns].reset_index(drop=True).T

# %% tags=["remove-cell"]
improvement_counts = improvements.verdict.value_counts()
names = {
    "n_match": "matches",
    "n_slip": "rounding slip",
    "n_differ": "differs",
}
glue_fields(improvement_counts, "", names, default=0)
glue_all(
    n_improvements=len(improvements),
    implied=" and ".join(
        f"{v:g}%" for v in sorted(set(differ.implied_best))
    )
    or "none",
    rounding=audit.ROUNDING,
    slip=2.5 * audit.ROUNDING,
    differ_where="; ".join(
        f"Table {S.tables[t].meta['table']} at radii {' and '.join(r)}"
        for t, r in differ.groupby("table").radius.unique().items()
    ),
)
assert (differ.relative > differ.printed).all()
assert set(differ.radius) == {"0.50", "1.00"}

# %% [markdown]
# Each column of the table above is one printed number: "ours" is the row's accuracy
# at the radius, "best" and "best_row" the best baseline of the column, "printed"
# the improvement the paper prints, "relative" the one recomputed from the table,
# and "implied_best" the baseline the printed number implies. Where the verdict is
# "differs", the printed improvement is right for a baseline of "implied_best",
# which no row of the column prints; against the best baseline that is printed, the
# improvement is "relative", much larger than what the paper reports.
#
# The best baseline can only be one of the rows a table prints. The tables with
# improvement rows print {glue:text}`n_ucan_baselines` baselines in all, among them
# two of denoised smoothing in {glue:text}`denoise_tables`:
# {glue:text}`denoise_rows`. The text as shipped has no list of references and never
# mentions diffusion models, so it does not say whether either is the denoised
# smoothing with an off-the-shelf diffusion model of {cite:t}`carlini2023certified`.
# No row and no sentence is the double sampling randomized smoothing (DSRS) of
# {cite:t}`li2022double`, which tightens the certificate of the same base
# classifier. An improvement over the best baseline is an improvement over the rows
# printed, and over no method they leave out.

# %% tags=["remove-cell"]
baselines = {
    label: t.meta["table"]
    for t in ucan_tables
    for label in t.rows("certified_accuracy").index
    if not label.startswith("Ours")
}
cited = {
    key for label in baselines for key in re.findall(r"\[(\d+)\]", label)
}
denoise = sorted(b for b in baselines if b.startswith("Denoise"))
denoise_in = [t for t in ucan_tables if set(denoise) <= set(t.data.row)]
glue_all(
    n_ucan_baselines=len(cited),
    denoise_rows=" and ".join(f"“{label}”" for label in denoise),
    denoise_tables="Tables "
    + " and ".join(t.meta["table"] for t in denoise_in),
)
# neither method the text leaves out hides under another label
leftout = re.compile(r"DSRS|double|diffusion", re.I)
assert len(denoise) == 2 and not any(map(leftout.search, baselines))

# %% [markdown]
# ## The rules every table obeys
#
# The improvement check asks whether a table agrees with itself about one derived
# row. The rules below ask more: whether its numbers could be certified accuracies
# at all. Three rules hold for any honest table of certified accuracy:
#
# - certified accuracy cannot rise with the radius (the set of inputs certified at
#   radius $r$ contains those certified at any larger radius):
#   {glue:text}`n_rising` violations ({func}`~rsutils.book.audit.table_audit.non_increasing_check`);
# - with $n = 100{,}000$ draws at $\alpha = 0.001$ no Gaussian certificate exceeds
#   {glue:text}`ceiling:.2f`$\,\lambda\max\sigma$, with $\lambda = 1$ and
#   $\sigma \le \gamma = 1$ for UCAN's rows: {glue:text}`n_ceiling` violations
#   ({func}`~rsutils.book.audit.table_audit.ceiling_check`);
# - for one model, every certificate has $\mathrm{ALM} \ge \min_i\sigma_i R$, so
#   accuracy measured by ALM can never be below accuracy measured by the radius at the
#   same threshold ({func}`~rsutils.book.audit.table_audit.alm_radius_check`). In
#   {glue:text}`alm_tables`, UCAN's "w.r.t. ALM" row is below its "w.r.t. radius" row in
#   {glue:text}`n_alm_below` columns: the two rows cannot come from the same model and
#   certificates, which the tables do not say.
#
# The ceiling rule needs one fact about each row, the largest noise scale it may
# have used. For UCAN's rows that is $\lambda\gamma$: their generators bound every
# $\sigma_i$ by $\gamma$, so the inscribed radius $\min_i\sigma_i R$ can never
# exceed $\gamma R$, and $R$ itself is capped like any Gaussian certificate's.
#
# Each rule needs only the printed numbers, so it applies to every row of every table
# whatever model produced it. A violation is not a matter of scale or luck: a table
# that breaks one of them cannot be a table of approximate certified accuracies
# computed as the papers define them.
#
# And one row is printed for two datasets ({func}`~rsutils.book.audit.table_audit.duplicate_rows`):

# %%
audit.duplicate_rows(S.tables.values())

# %% [markdown]
# Two certified-accuracy rows of tables for different datasets with the same numbers
# in every shared column are almost surely one row copied, since two models on two
# datasets would not agree to the printed digit everywhere.
#
# The three rules, checked on every table, and the columns where accuracy by ALM is below
# accuracy by radius (the other two rules find nothing to list):

# %%
rising = pd.concat(
    [audit.non_increasing_check(t) for t in S.tables.values()]
)
l2_tables = [t for t in S.tables.values() if t.meta["norm"] == "l2"]
ceilings = [audit.ceiling_check(t, scale=1.0) for t in l2_tables]
ceiling = pd.concat(ceilings)
below = pd.concat([audit.alm_radius_check(t) for t in S.tables.values()])
below.set_index(["table", "radius"])

# %% [markdown]
# Each row is one column of one table where the two "Ours" rows disagree in the
# wrong direction: "ALM row" is the certified accuracy printed for the row measured
# by ALM, "radius row" the one measured by the inscribed radius. If both rows came
# from the same certificates, every ALM would be at least the radius
# ({ref}`chapter-alm-volume`), and the first number could not be the smaller.

# %% tags=["remove-cell"]
glue_all(
    ceiling=float(norm.ppf(rs.max_certifiable_pA(100_000, 0.001))),
    n_rising=len(rising),
    n_ceiling=len(ceiling),
    n_alm_below=len(below),
    alm_tables=" and ".join(
        f"Table {S.tables[n].meta['table']}"
        for n in sorted(set(below.table))
    )
    or "no table",
)

# %% [markdown]
# ## One model, one value at radius 0
#
# The ALM rule above fires only where the ALM row falls below the radius row. A
# second tie between the two rows holds in every table: at radius 0 both rows count
# the same inputs, those classified correctly and not abstained on. A certificate
# with $\underline{p_A} > \tfrac12$ has $R > 0$, so both its inscribed radius
# $\min_i\sigma_i R$ and its ALM are positive, and an abstention has neither.
# Rounded to a whole percent, one count prints one number, so one model's two rows
# print the same value at $r = 0$
# ({func}`~rsutils.book.audit.one_model.zero_radius_check`).
#
# Of the {glue:text}`one_model_paired` tables that print both rows,
# {glue:text}`one_model_two` print two values at $r = 0$:
# {glue:text}`one_model_at_zero`. In {glue:text}`one_model_zero_only` the ALM row
# is at or above the radius row in every column, so only this rule shows that its
# two rows are two models (or two runs), which the table does not say.
#
# Per table, below: how many pairs of rows it prints (a method's "w.r.t. ALM" and
# "w.r.t. radius" rows, found by their labels among the rows its record declares as
# certified accuracy), the first pair's values at $r = 0$, how many columns the ALM
# rule flags ("ALM below"), and the verdict of both ties together
# ({func}`~rsutils.book.audit.one_model.one_model_check`). A table whose labels do not say
# which measure a row uses, as Table II's, has no pair to check.

# %%
same_model = one_model_check(S.tables.values())
shown = ["table", "pairs", "ALM at 0", "radius at 0", "ALM below"]
same_model.rename(
    columns={"columns ALM below radius": "ALM below"}
).assign(table=same_model.table.map(SHORT_TABLES))[
    [*shown, "verdict"]
].set_index("table")

# %% [markdown]
# "Two models" is the verdict whenever either tie breaks; "one model possible" would
# mean only that the printed numbers do not rule it out. Where the two rows of a
# method come from different runs, the improvement each row reports is measured
# against the same baselines but for a different model, and the two cannot be read
# as one method's accuracy by two measures, as the tables' captions invite.

# %% tags=["remove-cell"]
paired_tables = same_model[same_model.pairs > 0]
two_models = paired_tables[paired_tables.verdict == "two models"]
zero_only = two_models[two_models["columns ALM below radius"] == 0]
glue_all(
    one_model_paired=len(paired_tables),
    one_model_two=len(two_models),
    one_model_at_zero="; ".join(
        f"Table {S.tables[n].meta['table']} prints {a:g}% by ALM and "
        f"{r:g}% by radius"
        for n, a, r in zip(
            two_models.table,
            two_models["ALM at 0"],
            two_models["radius at 0"],
            strict=True,
        )
    ),
    one_model_zero_only=" and ".join(
        f"Table {S.tables[n].meta['table']}" for n in zero_only.table
    )
    or "no table",
    one_model_n_zero_only=len(zero_only),
)
assert two_models["differ at 0"].all()

# %% [markdown]
# ## Bounds per noise family and norm
#
# The ceiling rule above cannot fire on the papers' ℓ2 tables: at the scale
# $\lambda\gamma$ of UCAN's rows, and at Cohen et al.'s largest $\sigma$, it flags only
# radii beyond {glue:text}`ceiling:.2f`, and the ℓ2 tables stop at
# {glue:text}`bounds_l2_largest:.2f`. Its silence says nothing about them
# ({func}`~rsutils.book.audit.table_bounds.can_fire` says, per table, whether a bound can
# flag anything on its printed radii at all):

# %%
fires = {
    S.tables[n].meta["table"]: tb.can_fire(t, scale=1.0)
    for n, t in S.tables.items()
    if t.meta["norm"] == "l2"
}
pd.Series(fires, name="can fire at scale 1")

# %% [markdown]
# Other noise families have other ceilings, and some lie inside the radii that
# Table II prints. With every draw in the top class, $\underline{p_A}$ reaches
# $\alpha^{1/n}$ and no higher; each family's radius rule
# ({func}`~rsutils.core.radius.certified_radius`) at that $\underline{p_A}$, times
# the largest scale a row may have used, is the most any of its certificates can
# reach ({func}`~rsutils.book.audit.table_bounds.certifiable_bound`). UCAN set each
# family's $\lambda$ to give variance one, following {cite:t}`yang2020randomized`,
# and bound every $\sigma_i$ by $\gamma$; each table's record states, per row, the
# family, the standard deviation and $\gamma$ it assumes, or that the paper does not
# state them ({func}`~rsutils.book.audit.table_bounds.row_noise`). For uniform noise
# against ℓ1 the ceiling is $2\lambda(\alpha^{1/n} - \tfrac12)$, below $\lambda$
# itself: {glue:text}`bounds_uniform:.2f` at unit variance. Against ℓ1 with
# Gaussian noise it is {glue:text}`bounds_gauss_l1:.2f`, with Laplace noise
# {glue:text}`bounds_laplace:.2f`, and against ℓ∞ on CIFAR10 it is
# {glue:text}`bounds_linf_255:.1f`/255.
#
# Per row whose scale is stated, the bound in the table's own units, the largest
# radius the table prints, and what the bound finds
# ({func}`~rsutils.book.audit.table_bounds.bound_summary`): how many printed zeros it
# forces, how many positive values lie beyond it, and how many need a near-certain
# $\underline{p_A}$ (below):

# %%
bounds = tb.bound_summary(S.tables.values())
stated = bounds.dropna(subset=["bound"]).assign(
    table=lambda b: b.table.map(SHORT_TABLES),
    row=lambda b: b.row.replace(SHORT_ROWS),
)
stated = stated.rename(
    columns={"largest radius": "largest", "beyond the bound": "beyond"}
)
shown = ["bound", "largest", "forced 0", "beyond", "near-certain pA"]
stated.set_index(["table", "row"])[shown].round(3)

# %% [markdown]
# A "forced 0" is a printed 0 beyond the bound: no certificate could have put the
# input there, so the 0 says nothing about the method. UCAN's text reads the uniform
# row's collapse ("peaks early then collapses (0% beyond $R{=}2.0$)") as a property
# of the noise; the bound forces it: {glue:text}`bounds_uniform_forced` of that row's
# zeros lie beyond {glue:text}`bounds_uniform:.2f`, and its last positive value
# needs $\underline{p_A} \ge$ {glue:text}`bounds_uniform_pA:.3f`, which is not
# extreme. Of all printed zeros, {glue:text}`bounds_forced` are forced
# ({glue:text}`bounds_forced_ucan` in UCAN's tables, the rest in Cohen et al.'s
# rows of small $\sigma$), and {glue:text}`bounds_beyond` positive values lie
# beyond a bound.
#
# Within the bounds, some printed values need a near-certain $\underline{p_A}$
# (at least {glue:text}`bounds_near_threshold:.3f`). For those cells: "1 − pA",
# how far below one the lower bound on $p_A$ must stay; "misses", how many of the
# $n$ draws may miss the top class for CERTIFY to reach the radius; "draws", the
# fewest draws that could reach it with every one right; and "share", the share of
# the row's largest scale the cell needs even then:

# %%
cells = pd.concat([tb.bound_cells(t) for t in S.tables.values()])
near = cells[cells.verdict == "near-certain pA"]
near_view = pd.DataFrame(
    {
        "table": near.table.map(SHORT_TABLES),
        "row": near.row.replace(SHORT_ROWS),
        "radius": near.radius,
        "printed": near.printed,
        "1 − pA": (1 - near["pA needed"]).map("{:.1e}".format),
        "misses": near["misses allowed"].astype(int),
        "draws": near["draws needed"].astype(int),
        "share": near["scale share"].round(3),
    }
)
near_view.set_index(["table", "row", "radius"])

# %% [markdown]
# Each of these cells is possible, but only just: at most
# {glue:text}`bounds_near_misses` of the $n$ draws may miss for its certificate,
# and it needs a scale of at least {glue:text}`bounds_near_share:.3f` of the
# largest. For a row measured by the radius that is a floor on $\min_i\sigma_i$:
# every one of the input's $\sigma_i$ must sit within a few percent of the bound
# $\gamma$ that the generator's $\tanh$ keeps them under, at the same time as the
# classifier is right on almost every noisy draw. The numbers are not impossible,
# but they are the most a certificate can give, and a reader should know it.

# %% tags=["remove-cell"]
l2_largest = max(
    t.radii.max() for t in S.tables.values() if t.meta["norm"] == "l2"
)
flagged = cells.verdict.value_counts()
on_ucan = cells[cells.table.str.startswith("ucan")]
uniform = cells[cells.row == "Ours (Ani. Uniform)"]
uniform_last = uniform[uniform.printed > 0].iloc[-1]
row_bound = bounds.set_index(["table", "row"]).bound
l1, linf = "ucan2025_table_ii_l1", "ucan2025_table_ii_linf"
glue_all(
    bounds_l2_largest=float(l2_largest),
    bounds_uniform=float(row_bound[(l1, "Ours (Ani. Uniform)")]),
    bounds_gauss_l1=float(row_bound[(l1, "Ours (Ani. Gaussian)")]),
    bounds_laplace=float(row_bound[(l1, "Ours (Ani. Laplace)")]),
    bounds_linf_255=255 * float(row_bound[(linf, "Ours (Ani. Gaussian)")]),
    bounds_uniform_forced=int((uniform.verdict == "forced 0").sum()),
    bounds_uniform_pA=float(uniform_last["pA needed"]),
    bounds_forced=int(flagged.get("forced 0", 0)),
    bounds_forced_ucan=int((on_ucan.verdict == "forced 0").sum()),
    bounds_beyond=int(flagged.get("beyond the bound", 0)),
    bounds_near=int(flagged.get("near-certain pA", 0)),
    bounds_near_threshold=tb.NEAR_CERTAIN,
    bounds_near_misses=int(near["misses allowed"].max()),
    bounds_near_share=float(near["scale share"].min()),
    bounds_l2_can_fire=sum(fires.values()),
)
top = tb.certifiable_bound("gaussian", "l2", 1.0, n=100_000, alpha=0.001)
assert not any(fires.values()) and l2_largest < top

# %% [markdown]
# ## Rows that one norm's table shares with another's
#
# UCAN print ℓ1 and ℓ∞ results in Table II and ℓ2 results in Table IV, for the same
# methods on CIFAR10. If the rows were computed from the same certificates, Table I's
# conversions tie them together, and the tables can be checked against each other
# without any model.
#
# UCAN's Table I turns a Gaussian ℓ2 certificate of radius $r$ into an ℓ1 certificate
# of radius $r$ and an ℓ∞ one of radius $r/\sqrt d$, with $\sqrt d =$
# {glue:text}`sqrt_d:.1f` on CIFAR10
# ({func}`~rsutils.book.audit.table_audit.table_one_factor`). If a row of Table II is the
# certificates of a row of Table IV measured in the other norm, Table IV's values around
# the converted radius bound it ({func}`~rsutils.book.audit.table_audit.conversion_check`):
# from below always, and from above too where the conversion loses nothing (an
# isotropic ℓ2 ball and the ℓ∞ cube inside it; an anisotropic region's largest ℓ1
# ball, whose radius is exactly the inscribed radius $\min_i\sigma_i R$). Of the
# three pairs, {glue:text}`conversion_summary`.
#
# Each pair below names a row of Table IV (ℓ2, CIFAR10), the block of Table II it is
# compared with, that block's row, and whether the conversion loses nothing. The
# factor is Table I's ratio of the two radii for Gaussian noise at CIFAR10's
# dimension, read from the registry rather than typed.

# %%
iv = S.tables["ucan2025_table_iv"]
ours_by_radius = "Ours (certified accuracy w.r.t. radius)"
cohen, ucan = "Cohen et al.’s [12]", "Ours (Ani. Gaussian)"
# (name, Table IV row, Table II block, its row, whether it is exact)
pairs = [
    ("Cohen, ℓ2 → ℓ∞", "Cohen’s [12]", "linf", cohen, True),
    ("UCAN, ℓ2 → ℓ∞", ours_by_radius, "linf", ucan, False),
    ("UCAN, ℓ2 → ℓ1", ours_by_radius, "l1", ucan, True),
]
found = []
for pair, source, block, target, exact in pairs:
    factor = audit.table_one_factor(
        "gaussian", "l2", block, dim=3 * 32 * 32
    )
    block_table = S.tables[f"ucan2025_table_ii_{block}"]
    check = audit.conversion_check(
        iv, source, block_table, target, factor=factor, exact=exact
    )
    found.append(check.assign(pair=pair))
conversions = pd.concat(found, ignore_index=True)
outside = conversions.verdict.isin(["above the bound", "below the bound"])

# %% [markdown]
# The cells outside their bounds. For each, "radius" is the radius in the target
# norm, "source radius" the ℓ2 radius it converts to, "low" and "high" the bounds
# that Table IV's values around that radius put on it, and "printed" what Table II
# prints there:

# %%
bounds = ["source radius", "low", "high"]
shown = ["pair", "radius", *bounds, "printed", "verdict"]
conversions[outside][shown].reset_index(drop=True)

# %% [markdown]
# "Below the bound" means Table II prints less than the certificates behind Table IV
# must give at that radius; "above the bound" means it prints more than they can
# give, which is possible only where the conversion is exact. Either way the two
# rows cannot describe one set of certificates. A cell within its bounds proves
# nothing: other certificates could give the same number.

# %% tags=["remove-cell"]
summary = conversions.groupby("pair", sort=False).verdict.agg(
    lambda v: (
        f"{(v == 'consistent').sum()} within and "
        f"{v.isin(['above the bound', 'below the bound']).sum()} outside "
        "their bounds"
    )
)
glue_all(
    sqrt_d=audit.table_one_factor(
        "gaussian", "l2", "linf", dim=3 * 32 * 32
    ),
    conversion_summary="; ".join(
        f"{pair} has {text}" for pair, text in summary.items()
    ),
)

# %% tags=["remove-cell"]
outside_by_pair = conversions[outside].groupby("pair").radius.agg(list)
linf_pair = conversions[conversions.pair == "UCAN, ℓ2 → ℓ∞"]
glue_all(
    cohen_linf_outside=len(outside_by_pair.get("Cohen, ℓ2 → ℓ∞", [])),
    ucan_l1_outside=" and ".join(outside_by_pair.get("UCAN, ℓ2 → ℓ1", []))
    or "no radius",
    ucan_linf_within=int((linf_pair.verdict == "consistent").sum()),
)
assert len(audit.duplicate_rows(S.tables.values())) == 1
assert outside_by_pair.get("UCAN, ℓ2 → ℓ∞") is None

# %% [markdown]
# ## What holds up
#
# Mostly, but not everywhere: UCAN's tables agree with themselves on most
# improvements, yet mix rows that cannot come from one model's certificates.
# {glue:text}`n_match` of the {glue:text}`n_improvements` printed improvements
# follow from the tables as the paper defines them, and {glue:text}`n_differ` are
# computed against baselines no row prints ({glue:text}`differ_where`). Each of the
# {glue:text}`one_model_paired` tables that print a radius row and an ALM row for
# UCAN prints two values at radius 0 ({glue:text}`one_model_at_zero`), and in
# {glue:text}`alm_tables` the ALM row falls below the radius row in
# {glue:text}`n_alm_below` columns: the two rows come from two models or runs,
# which the tables do not say. The MNIST table repeats the CIFAR10 row of Cohen et
# al., and Table II's ℓ1 row falls below what Table IV's certificates give at ℓ1
# radius {glue:text}`ucan_l1_outside`.
#
# The bounds that $n$ and $\alpha$ put on each noise family explain some of what
# the text reads as properties of the method: the collapse of Table II's uniform row
# to 0 is forced by its ceiling ({glue:text}`bounds_uniform:.2f`), and
# {glue:text}`bounds_near` printed values need a lower bound on $p_A$ of at least
# {glue:text}`bounds_near_threshold:.3f`, possible but the most a certificate can
# give. The ℓ2 ceiling check finds nothing, but on the printed radii it could not
# have fired: it can fire on {glue:text}`bounds_l2_can_fire` of the ℓ2 tables.
