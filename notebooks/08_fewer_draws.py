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
# (chapter-fewer-draws)=
# # Fewer draws for the same guarantee
#
# CERTIFY {cite:p}`cohen2019certified` spends the same $n_0 + n$ forward passes on every
# input. Most inputs do not need them: at a given radius the answer is often plain
# after a few dozen draws, and a radius close to its final value after a few hundred.
# This chapter measures two ways to stop earlier with the same failure probability
# $\alpha$, on the book's base models and test images, against CERTIFY on the same
# draws, and the faster forward pass the book's certificates run with.
#
# Gaussian CERTIFY certifies radius $r$ when its lower bound on $p_A$ reaches
# $\Phi(r/\sigma)$. With $m$ draws, all in class A, a level-$\alpha$ test can only
# reject $p_A \le \Phi(r/\sigma)$ if $\Phi(r/\sigma)^m \le \alpha$, so no procedure,
# sequential or not, certifies $r$ with fewer than
#
# $$
# m_{\min}(r) = \left\lceil \frac{\ln \alpha}{\ln \Phi(r/\sigma)} \right\rceil
# $$ (eq-draw-floor)
#
# draws. This floor decides how much any method can save.

# %%
from dataclasses import replace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import rsutils as rs
from rsutils.book import Chapter, glue_all, plot_curves
from rsutils.book.fewer_draws import (
    decision_table,
    mode_agreement,
    planned_summary,
)
from rsutils.book.profiles import BOOK_SIGMAS
from rsutils.checks.coverage import (
    planned_false_rate,
    sequential_false_rate,
)
from rsutils.core.confidence import min_samples_for_radius
from rsutils.logs.sequential_runs import decisions_long

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
P, configs = chapter.profile, chapter.base_models
# the planned draws' budget, in ℓ2 units of [0, 1] pixels
RADIUS_LOSS = 0.05
# the decision task's radii
R_OVER_SIGMA = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
COVERAGE_RUNS = P.checks.coverage_runs
schedule = rs.LookSchedule.geometric(P.certify.n, P.certify.alpha)
chapter.run_at(
    {
        **chapter.base_model_rows(),
        "decision radii": "r/σ = "
        + ", ".join(f"{r:g}" for r in R_OVER_SIGMA),
        "planned draws' radius loss": RADIUS_LOSS,
        "coverage runs": f"{COVERAGE_RUNS:,} per procedure",
    }
)

# %% [markdown]
# The decision radii are multiples of each model's $\sigma$, so that the three models
# are asked comparable questions: a radius of $\sigma$ asks for the same $p_A$,
# $\Phi(1)$, whatever $\sigma$ is. The radius loss is the planned draws' only
# setting (section (c)), and the coverage runs are the repetitions of section (b)'s
# check on a classifier whose answer is known.
#
# ## (a) The floor
#
# {eq}`eq-draw-floor` grows slowly up to $r \approx 2\sigma$ and steeply after: at
# $\alpha = $ {glue:text}`alpha:g`, certifying $\sigma$ needs
# {glue:text}`floor_1:,d` draws, $2\sigma$ {glue:text}`floor_2:,d` and $3\sigma$
# {glue:text}`floor_3:,d`, against the $n = $ {glue:text}`n:,d` CERTIFY spends at every
# radius ({numref}`fig-draw-floor`). An input whose radius is near the ceiling
# $\sigma\Phi^{-1}(\alpha^{1/n})$ needs nearly all of them, whoever certifies it.

# %% tags=["remove-cell"]
glue_all(
    alpha=P.certify.alpha,
    n=P.certify.n,
    **{
        f"floor_{k}": min_samples_for_radius(float(k), P.certify.alpha)
        for k in (1, 2, 3)
    },
)

# %% tags=["hide-input"]
grid = np.linspace(0, 3.5, 141)
floor = {
    f"α = {a:g}": [min_samples_for_radius(r, a) for r in grid]
    for a in (0.01, P.certify.alpha)
}
labels = {
    "xlabel": "radius / σ",
    "ylabel": "fewest draws, any level-α test",
}
ax = plot_curves(floor, grid, **labels)
certify_n = f"CERTIFY's n = {P.certify.n:,}"
ax.axhline(P.certify.n, color="grey", linestyle=":", label=certify_n)
ax.set_yscale("log")
ax.legend()
glue_all(fig_draw_floor=ax.figure)
plt.close(ax.figure)

# %% [markdown]
# ```{glue:figure} fig_draw_floor
# :name: fig-draw-floor
#
# The fewest draws with which a level-α test can certify a radius (all draws in class
# A), {eq}`eq-draw-floor`; the dotted line is the book's CERTIFY.
# ```
#
# What to look at: where a curve crosses the dotted line is the largest radius that
# $n$ draws can certify at that level, CERTIFY's ceiling; to its left lies
# everything a cheaper procedure could save. The two levels of $\alpha$ differ by a
# constant factor in draws, $\ln\alpha$ in {eq}`eq-draw-floor`'s numerator, so on
# the log scale their curves run parallel.
#
# ## (b) Is $x$ certified at radius $r$? Sequential CERTIFY
#
# {func}`~rsutils.core.sequential.decide` keeps CERTIFY's $n_0$ selection draws and
# looks at the estimation draws after $n_1 < n_2 < \dots < n_K = n$ of them (prefixes of
# CERTIFY's own stream). At look $k$ it computes the one-sided Clopper–Pearson bounds at
# level $\alpha_k$; it stops *certified* when the lower bound certifies $r$, and *not
# certified* when even the upper bound cannot. The levels sum to $\alpha$, so by the
# union bound over looks the chance that any look's lower bound exceeds $p_A$ is at
# most $\alpha$, whatever the stopping rule: a certificate from it holds with
# probability at least $1-\alpha$, as CERTIFY's. The book's schedule doubles the looks
# from {glue:text}`first_look` draws and keeps half of $\alpha$ for the last look, so an
# input that needs every draw loses little against CERTIFY:

# %%
looks = range(1, len(schedule.looks) + 1)
levels = [f"{a:.2e}" for a in schedule.alphas]
plan = {"draws": schedule.looks, "level α_k": levels}
pd.DataFrame(plan, index=looks).rename_axis("look").T

# %% [markdown]
# Each column is one look: the number of estimation draws seen so far and the level
# spent on it. The levels add up to {glue:text}`alpha_spent:g` (checked below), the
# $\alpha$ of a single CERTIFY; doubling the draws from one look to the next keeps
# the number of looks, and so the share of $\alpha$ each gets, small.

# %% tags=["remove-cell"]
glue_all(first_look=schedule.looks[0], alpha_spent=sum(schedule.alphas))
assert abs(sum(schedule.alphas) - P.certify.alpha) < 1e-12

# %% [markdown]
# ### Coverage on a classifier whose answer is known
#
# A linear classifier at distance $d$ from its boundary has $p_A = \Phi(d/\sigma)$ and
# exact radius $d$ ({class}`~rsutils.checks.classifiers.LinearClassifier`). With
# $p_A = 0.9$, asking about a radius just beyond $d$ makes every *certified* false
# ({mod}`rsutils.checks.coverage`). Over {glue:text}`coverage_runs:,d` runs at
# $\alpha = 0.05$ the sequential procedure certified falsely in
# {glue:text}`seq_rate:.2%` of them, within $\alpha$ plus three standard errors
# ({glue:text}`seq_bound:.2%`). Testing every look at the full $\alpha$ instead, without
# spending, certified falsely in {glue:text}`naive_rate:.2%` of the runs while claiming
# $\alpha = 0.05$: the check sees the error it is there to catch. The planned draws of section (c) stayed at
# {glue:text}`planned_rate:.2%`.
#
# The check uses a larger $\alpha$ and fewer draws than the book's CERTIFY on
# purpose: at $\alpha = 0.05$ a false rate is measurable from a modest number of runs,
# while at the book's $\alpha$ almost no run would ever be false and the check
# could not tell a sound procedure from an unsound one.

# %% tags=["nbval-check-output"]
coverage_schedule = rs.LookSchedule.geometric(2000, 0.05, first=25)
full_alpha = (0.05,) * len(coverage_schedule.looks)
naive = rs.LookSchedule(coverage_schedule.looks, full_alpha)
coverage = {
    "sequential": sequential_false_rate(
        coverage_schedule, COVERAGE_RUNS, seed=seed
    ),
    "every look at full α": sequential_false_rate(
        naive, COVERAGE_RUNS, seed=seed, claimed_alpha=0.05
    ),
    "planned draws": planned_false_rate(
        2000, 0.05, 0.1, COVERAGE_RUNS, seed=seed
    ),
}

# %% [markdown]
# One row per procedure: the runs, how many of them certified falsely, the rate, and
# the bound it must stay under, $\alpha$ plus three standard errors of a rate
# estimated from that many runs. "Holds" compares the two; the second row is
# expected to fail.

# %%
pd.DataFrame(
    {
        name: {
            "runs": c.runs,
            "false": c.false,
            "rate": c.rate,
            "α + 3 s.e.": c.bound,
            "holds": c.holds,
        }
        for name, c in coverage.items()
    }
).T

# %% tags=["remove-cell"]
assert coverage["sequential"].holds and coverage["planned draws"].holds
glue_all(
    coverage_runs=COVERAGE_RUNS,
    seq_rate=coverage["sequential"].rate,
    seq_bound=coverage["sequential"].bound,
    naive_rate=coverage["every look at full α"].rate,
    planned_rate=coverage["planned draws"].rate,
)

# %% [markdown]
# ### On the book's models
#
# The base models of {ref}`chapter-tight-radius`, its test images and its CERTIFY logs
# (same seed: each sequential run reads a prefix of the draws its CERTIFY read, so on
# each image the two procedures are compared on the same draws, and a difference in
# their answers comes from the procedure, not from the luck of the draws). One
# pass per image answers every radius at once
# ({func}`~rsutils.core.sequential.decide_radii`); each answer counts the forward
# passes it alone would have spent.

# %%
standard = {
    s: chapter.main.certify(configs[s], rs.Gaussian(s))
    for s in BOOK_SIGMAS
}

# %% [markdown]
# `standard` holds chapter 01's CERTIFY logs, read from the cache. For each model the
# sequential run decides every radius of the task on the same images; its log is
# then set beside CERTIFY's, radius by radius
# ({func}`~rsutils.book.fewer_draws.decision_table`).

# %%
decisions = {}
for s in BOOK_SIGMAS:
    radii = [s * k for k in R_OVER_SIGMA]
    log = chapter.main.decide(configs[s], rs.Gaussian(s), radii, schedule)
    decisions[s] = decision_table(
        standard[s], decisions_long(log, radii), s, P.certify.alpha
    )
decided = (
    pd.concat(decisions, names=["σ"]).reset_index().set_index(["σ", "r/σ"])
)

# %% [markdown]
# One row per model and radius: the certified accuracy of CERTIFY and of the
# sequential decision, their gap in percentage points, the sequential procedure's
# mean forward passes per image, how many times fewer that is than CERTIFY's, and
# the floor of one certificate at that radius.

# %%
shown = ["CERTIFY acc.", "sequential acc.", "gap (points)"]
shown += ["sequential passes", "fewer by", "floor"]
decided[shown].round(2)

# %% tags=["remove-cell"]
upto2 = decided[decided.index.get_level_values("r/σ") <= 2]
at3 = decided[decided.index.get_level_values("r/σ") == 3]
glue_all(
    decide_min_upto2=float(upto2["fewer by"].min()),
    decide_max_upto2=float(upto2["fewer by"].max()),
    decide_min_3=float(at3["fewer by"].min()),
    decide_max_3=float(at3["fewer by"].max()),
    decide_worst_gap=float(decided["gap (points)"].abs().max()),
    certify_passes=P.certify.n0 + P.certify.n,
)

# %% [markdown]
# Read the "fewer by" column beside the accuracies: where many images are certified
# at a radius, each of them needs at least the floor's draws, and the saving shrinks
# as the floor grows; where few are, most answers are "not certified" and come at an
# early look, so the saving can grow with the radius instead. The gap column shows
# what the savings cost in accuracy.
#
# CERTIFY spends $n_0 + n = $ {glue:text}`certify_passes:,d` forward passes on every
# image. Up to $r = 2\sigma$ the sequential answers cost {glue:text}`decide_min_upto2:.1f` to
# {glue:text}`decide_max_upto2:.1f` times fewer forward passes than CERTIFY; at
# $3\sigma$ only {glue:text}`decide_min_3:.1f` to {glue:text}`decide_max_3:.1f` times,
# because there the floor {eq}`eq-draw-floor` is most of $n$
# ({numref}`fig-decision-passes`). Certified accuracy differs from CERTIFY's by at most
# {glue:text}`decide_worst_gap:.1f` points at any $\sigma$ and radius: the images
# decided differently are those whose bound lies near $\Phi(r/\sigma)$, where the last
# look's level $\alpha/2$ and an early look's luck can tip the answer.

# %% tags=["hide-input"]
fig, ax = plt.subplots(figsize=(6.4, 4))
for s in BOOK_SIGMAS:
    rows = decided.loc[s]
    passes, name = rows["sequential passes"], f"sequential, σ = {s}"
    ax.plot(rows.index, passes, marker="o", label=name)
n0, alpha = P.certify.n0, P.certify.alpha
floor_passes = [
    n0 + min_samples_for_radius(r, alpha) for r in R_OVER_SIGMA
]
ax.plot(
    R_OVER_SIGMA, floor_passes, "k--", label="floor of one certificate"
)
certify_passes = P.certify.n0 + P.certify.n
ax.axhline(certify_passes, color="grey", linestyle=":", label="CERTIFY")
axis_labels = {
    "xlabel": "radius / σ",
    "ylabel": "forward passes per image",
}
ax.set(yscale="log", **axis_labels)
ax.legend()
glue_all(fig_decision_passes=fig)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_decision_passes
# :name: fig-decision-passes
#
# Mean forward passes per image to decide "certified at $r$?", against CERTIFY's
# $n_0 + n$ and the floor of a single certificate ($n_0$ + {eq}`eq-draw-floor`).
# ```
#
# How to read the floor here: it is the least that one *certified* answer can cost,
# for an input whose every draw is in its class. An answer "not certified" can come
# sooner, at the first look where even the upper bound falls short of
# $\Phi(r/\sigma)$, so a model's mean can lie on either side of the floor; what it
# cannot do is certify an image below it.
#
# ## (c) What radius do $n$ draws give? Planned draws
#
# {func}`~rsutils.core.sample_size.certify_planned`, after the input-specific sampling of
# {cite:t}`chen2022input`, lets the $n_0$ selection draws also estimate $p_A$ and takes
# the fewest estimation draws $n(x) \le n$ whose expected radius at that estimate is
# within {glue:text}`radius_loss:.2f` of what $n$ draws would give. Those draws then certify
# at the full $\alpha$; since $n(x)$ depends on the selection draws only, the
# certificate is CERTIFY's at level $\alpha$ (the coverage check above).
#
# The idea is that CERTIFY's $n_0$ selection draws, spent only to pick the class,
# already say roughly how large $p_A$ is, and so roughly how many estimation draws
# the radius will need: an input whose selection draws all agree needs many to reach
# its ceiling, one near the boundary needs few before more stop paying. Using that
# estimate costs nothing in soundness, because it fixes $n(x)$ before any
# estimation draw is seen.

# %%
planned = {
    s: chapter.main.certify_planned(
        configs[s], rs.Gaussian(s), RADIUS_LOSS
    )
    for s in BOOK_SIGMAS
}

# %% [markdown]
# Each planned log is compared with CERTIFY's log of the same model on the same
# images ({func}`~rsutils.book.fewer_draws.planned_summary`); one column per model:

# %%
curve_radii = np.linspace(0, 4, 161)
loss = RADIUS_LOSS
summary = pd.DataFrame(
    {
        s: planned_summary(
            standard[s], planned[s], curve_radii, sigma=s, radius_loss=loss
        )
        for s in BOOK_SIGMAS
    }
).T.rename_axis("σ")
summary.T.round(3)

# %% [markdown]
# The rows give forward passes per image of each procedure and their ratio, the ACR
# of each, the largest gap between the two certified-accuracy curves (planned minus
# CERTIFY, in points) over all radii and below the band just under the ceiling, and
# where the draws go: the share of images at the ceiling, and the share of the
# planned draws they took.

# %% tags=["remove-cell"]
glue_all(
    radius_loss=RADIUS_LOSS,
    planned_min=float(summary["fewer by"].min()),
    planned_max=float(summary["fewer by"].max()),
    planned_gap=float(summary["largest gap (points)"].abs().max()),
    planned_gap_below=float(
        summary["largest gap below the band (points)"].abs().max()
    ),
    acr_loss=float(
        (summary["CERTIFY ACR"] - summary["planned ACR"]).max()
    ),
    ceiling_min=float(summary["images at the ceiling"].min()),
    ceiling_max=float(summary["images at the ceiling"].max()),
    ceiling_share_max=float(summary["their share of planned draws"].max()),
)

# %% [markdown]
# The planned draws cost {glue:text}`planned_min:.1f` to {glue:text}`planned_max:.1f`
# times fewer forward passes than CERTIFY, and lose at most
# {glue:text}`acr_loss:.3f` of average certified radius. Where the draws still go:
# {glue:text}`ceiling_min:.0%` to {glue:text}`ceiling_max:.0%` of the images had every
# one of CERTIFY's draws in their class, so their radius is the ceiling, which grows
# with $n$ by {eq}`eq-draw-floor`; they take up to {glue:text}`ceiling_share_max:.0%`
# of the planned draws, and no valid procedure certifies their ceiling radius with
# fewer. Their planned radius sits just below the ceiling, so the two curves part in a
# band of width about the radius loss under it, where the largest gap,
# {glue:text}`planned_gap:.0f` points, lies; below the band they differ by at most
# {glue:text}`planned_gap_below:.1f` points ({numref}`fig-planned-curves`).

# %% tags=["hide-input"]
size = {"figsize": (12, 3.6), "sharey": True}
fig, axes = plt.subplots(1, len(BOOK_SIGMAS), **size)
for ax, s in zip(np.atleast_1d(axes), BOOK_SIGMAS, strict=True):
    curves = {
        "CERTIFY": rs.certified_accuracy(standard[s], curve_radii),
        "planned": rs.certified_accuracy(planned[s], curve_radii),
    }
    plot_curves(curves, curve_radii, ax=ax, dashes={"planned": True})
    ax.set_title(f"σ = {s}")
glue_all(fig_planned_curves=fig)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_planned_curves
# :name: fig-planned-curves
#
# Certified accuracy of CERTIFY and of CERTIFY with planned draws, on the same images.
# ```
#
# What to look at: the dashed planned curve follows CERTIFY's until just below each
# model's ceiling, and then ends a little earlier; the gap is the price of stopping
# at the draws that the radius loss allows.
#
# ## (d) A faster forward pass, and what it certifies
#
# Both procedures save draws; the base model's forward pass sets the cost of each. The
# book's {glue:text}`profile` profile runs the base model in
# {glue:text}`mode` ({mod}`rsutils.core.inference`). A lower precision is a different
# base classifier, so every certificate in this book is exact for the model as run in
# that mode, not for its float32 twin. How different they are, on
# {glue:text}`n_secondary` test images at $n = $ {glue:text}`n_secondary_draws:,d`
# ($\sigma = 0.25$):

# %%
fast_log = chapter.secondary.certify(configs[0.25], rs.Gaussian(0.25))
fp32_runs = replace(chapter.secondary, inference="fp32")
fp32_log = fp32_runs.certify(configs[0.25], rs.Gaussian(0.25))

# %% [markdown]
# The same images, seeds and draws in both modes, so any difference comes from the
# arithmetic of the forward pass
# ({func}`~rsutils.book.fewer_draws.mode_agreement`): the share of images with the
# same answer, the largest radius difference, accuracy and time per image in each
# mode, and the speed-up.

# %%
agreement = mode_agreement(fp32_log, fast_log)
pd.Series(agreement).to_frame(f"fp32 vs {P.certify.inference}").round(4)

# %% tags=["remove-cell"]
glue_all(
    profile=P.name,
    mode=P.certify.inference,
    n_secondary=len(fast_log),
    n_secondary_draws=P.secondary.n,
    same_answer=agreement["same answer"],
    radius_diff=agreement["largest radius difference"],
    mode_faster=agreement["faster by"],
)

# %% [markdown]
# The two classifiers gave the same answer on {glue:text}`same_answer:.0%` of the
# images, with radii at most {glue:text}`radius_diff:.3f` apart, and
# {glue:text}`mode` certified {glue:text}`mode_faster:.1f` times as fast on this
# machine. `python -m rsutils bench` times every mode's forward pass and the Monte Carlo
# loop on a model of your own.
#
# The times, and the speed-up computed from them, are the only numbers of this
# chapter measured with a clock: they change from run to run with the machine's
# load, while the answers and radii, computed from seeded draws, do not. A speed-up near 1 on a busy shared machine says little
# about the mode itself; the bench command reports the fastest of several rounds for
# that reason.
#
# ## What holds up
#
# - The sequential decision is as sound as CERTIFY (coverage within
#   {glue:text}`seq_bound:.2%` at $\alpha = 0.05$) and, up to $2\sigma$, costs
#   {glue:text}`decide_min_upto2:.1f` times fewer forward passes or better; near the
#   ceiling the floor {eq}`eq-draw-floor` leaves little to save.
# - Planned draws save {glue:text}`planned_min:.1f`–{glue:text}`planned_max:.1f` times
#   at a radius loss of {glue:text}`radius_loss:.2f`; the images at the ceiling bound what any
#   method can save on this data.
# - The faster forward pass multiplies with both.
#
# Every saving above keeps CERTIFY's guarantee, $1 - \alpha$ per certificate; none
# of them moves the ceiling. A larger radius still needs more draws or more $\alpha$,
# which is the trade-off that {ref}`chapter-tight-radius` measured and the released
# logs of chapter 07 appear to have made.
