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
# after a few dozen draws. This chapter asks how many times fewer forward passes the
# same guarantee needs, a certificate that is false with probability at most
# $\alpha$. It answers on the book's base models and test images, by two comparisons:
# CERTIFY on the very draws CERTIFY used, and the published designs for the same job
# {cite:p}`horvath2022boosting,voracek2024treatment,chen2022input`, re-implemented
# from their papers and run on the same draws.
#
# - The floor: the fewest draws any test needs to certify a radius.
# - Sequential CERTIFY: tests at planned looks, a confidence sequence that may look
#   after every batch, and a mode that tests the true label; each keeps $\alpha$.
# - The book's models: a deployed classifier, then evaluation on a labelled test
#   set beside the published designs.
# - Planned draws: nearly CERTIFY's radius from fewer draws.
#
# Three pages carry what the main line uses in summary:
# {ref}`chapter-design-costs` (what each design pays when every draw is in
# the class, and its exact probability of a false certificate at the book's
# $\alpha$), {ref}`chapter-whole-curves` (whole curves, the most any test could
# save, and procedures for the radius) and {ref}`chapter-forward-pass`
# (a faster forward pass, and certificates for the float32 model from it).
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

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import rsutils as rs
from rsutils.book import glue_all, plot_curves, run_chose
from rsutils.book.chapters import fewer_draws as fd
from rsutils.book.chapters.pages import open_page
from rsutils.book.profiles import BOOK_SIGMAS
from rsutils.core.confidence import min_samples_for_radius
from rsutils.sequential import Decide, PlannedDraws, decisions_long
from rsutils.sequential.coverage import (
    CoverageSetting,
    exact_false_rate,
    false_rate,
    radius_beyond,
)
from rsutils.sequential.horvath import horvath_stages
from rsutils.sequential.runs import live_disagreements, replay_log

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% tags=["hide-input"]
chapter, S = open_page(
    "chapter-fewer-draws", profile, seed=seed, progress=progress
)
configs = chapter.base_models
# images per model on which CERTIFY runs live again, to check the records
LIVE_CHECKS = 10

# %% [markdown]
# The decision radii are multiples of each model's $\sigma$, so that the three models
# are asked comparable questions: a radius of $\sigma$ asks for the same $p_A$,
# $\Phi(1)$, whatever $\sigma$ is. The radius loss is the planned draws' only
# setting, and the coverage runs repeat the soundness check on a classifier whose
# answer is known.
#
# ## The floor
#
# {eq}`eq-draw-floor` grows slowly up to $r \approx 2\sigma$ and steeply after: at
# $\alpha = $ {glue:text}`alpha:g`, certifying $\sigma$ needs
# {glue:text}`floor_1:,d` draws, $2\sigma$ {glue:text}`floor_2:,d` and $3\sigma$
# {glue:text}`floor_3:,d`, against the $n = $ {glue:text}`n:,d` CERTIFY spends at every
# radius ({numref}`fig-draw-floor`). An input whose radius is near the ceiling
# $\sigma\Phi^{-1}(\alpha^{1/n})$ needs nearly all of them, whoever certifies it.

# %% tags=["remove-cell"]
stages = horvath_stages(S.n)
glue_all(
    alpha=S.alpha,
    n=S.n,
    **{
        f"floor_{k}": min_samples_for_radius(float(k), S.alpha)
        for k in (1, 2, 3)
    },
    sequence_looks=len(S.anytime.looks),
    horvath_stages=", ".join(f"{n:,}" for n in stages),
    horvath_first=stages[0],
)

# %% tags=["hide-input"]
grid = np.linspace(0, 3.5, 141)
floor = {
    f"α = {a:g}": [min_samples_for_radius(r, a) for r in grid]
    for a in (0.01, S.alpha)
}
labels = {
    "xlabel": "radius / σ",
    "ylabel": "fewest draws, any level-α test",
}
ax = plot_curves(floor, grid, **labels)
ax.axhline(
    S.n, color="grey", linestyle=":", label=f"CERTIFY's n = {S.n:,}"
)
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
# The floor binds every *non-randomised* test, and each design of this chapter pays
# something above it even when every draw is in class A: a test split over looks
# pays for its smaller levels, a confidence sequence for looking at every batch, a
# staged design for its stage sizes. {ref}`chapter-design-costs` prices each
# design at $p_A = 1$, and shows how far a randomised test can go below the floor.
#
# ## Sequential CERTIFY
#
# {class}`~rsutils.sequential.decisions.Decide` keeps CERTIFY's $n_0$ selection draws and
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
looks = range(1, len(S.schedule.looks) + 1)
levels = [f"{a:.2e}" for a in S.schedule.alphas]
plan = {"draws": S.schedule.looks, "level α_k": levels}
pd.DataFrame(plan, index=looks).rename_axis("look").T

# %% [markdown]
# Each column is one look: the estimation draws seen so far and the level spent on
# it. The levels add up to {glue:text}`alpha_spent:g`, the $\alpha$ of a single
# CERTIFY.

# %% tags=["remove-cell"]
glue_all(
    first_look=S.schedule.looks[0], alpha_spent=sum(S.schedule.alphas)
)
assert abs(sum(S.schedule.alphas) - S.alpha) < 1e-12

# %% [markdown]
# ### Looking after every batch: a confidence sequence
#
# Spending $\alpha$ over looks makes each look's test weaker, so the looks must be
# few, and an input whose answer becomes plain just after a look waits for the
# next one. A *confidence sequence* removes both costs
# {cite:p}`robbins1970statistical,howard2021timeuniform`: a test that stays valid
# however often it looks and whenever it stops.
# {class}`~rsutils.sequential.sequence.AnytimeSchedule` looks after every batch (the
# batches grow geometrically, {glue:text}`sequence_looks:d` looks up to $n$) and
# certifies $r$ once the mixture martingale
#
# $$
# M_t(p_0) = \frac{\int_{p_0}^1 \theta^{k}(1-\theta)^{t-k}\,
# \pi(\theta)\,d\theta}{\Pr_\pi(\theta \ge p_0)\; p_0^{k}(1-p_0)^{t-k}}
# $$ (eq-mixture-martingale)
#
# reaches $1/\alpha'$, with $k$ of $t$ draws in class A, $p_0$ the least $p_A$ that
# certifies $r$ and $\pi$ Jeffreys' prior {cite:p}`krichevsky1981performance`.
# Under any $p_A \le p_0$ it is a nonnegative supermartingale of mean at most 1, so
# by Ville's inequality it ever reaches $1/\alpha'$ with probability at most
# $\alpha'$, at any stopping time. It stops *not certified* once the two-sided
# sequence lies below $p_0$. The book's schedule runs the sequence at
# $\alpha' = \alpha/2$ and keeps the other half for CERTIFY's own test at the last
# look, where a fixed-$n$ bound is tighter than any sequence.
#
# The martingale is an e-process in the language of anytime-valid inference
# {cite:p}`ramdas2023gametheoretic`. Its prior is fixed here; {cite:t}`cullen2026halt`
# let a small meta-learner choose each image's prior and report a large reduction in
# draws. That design needs a trained meta-learner and is not re-implemented here.
# {class}`~rsutils.sequential.spending.LookSchedule` also takes `randomized=True`:
# each look's lower bound is then randomised Clopper–Pearson, with one uniform $u$
# per input drawn from its own seeded stream before any count and stated in every
# decision ({func}`~rsutils.sequential.decisions.randomization`).
#
# ### Evaluation: is the true label certified?
#
# A certified-accuracy curve counts the test images whose *true label* is certified
# at each radius. For that question the $n_0$ selection draws are not needed: test
# the label directly (`Decide(..., true_label=True)`), with the same looks and rule.
# It is an evaluation procedure only: a deployed classifier has no label to test
# and must select its class, as CERTIFY does. An image counts in either curve only
# when the certified class is its label, so both curves estimate the same thing.
#
# ### Coverage on a classifier whose answer is known
#
# A linear classifier at distance $d$ from its boundary has $p_A = \Phi(d/\sigma)$ and
# exact radius $d$ ({class}`~rsutils.checks.classifiers.LinearClassifier`). With
# $p_A = 0.9$, asking about a radius just beyond $d$ puts $p_A$ at the threshold that
# radius needs, the worst case, and makes every *certified* false
# ({mod}`rsutils.sequential.coverage`). The check uses $\alpha = 0.05$ on purpose: at
# the book's $\alpha$ almost no run would ever be false, and the check could not tell
# a sound procedure from an unsound one. The second procedure below tests every look
# at the full $\alpha$, without spending; it is there to show that the check
# catches the error it is meant to catch.

# %%
spend = rs.LookSchedule.geometric(2000, 0.05, first=25)
naive = rs.LookSchedule(spend.looks, (0.05,) * len(spend.looks))
sequence = rs.AnytimeSchedule.geometric(2000, 0.05)
beyond = (radius_beyond(),)
lucky = rs.LookSchedule.geometric(2000, 0.05, first=25, randomized=True)
procedures = {
    "sequential": Decide(spend, beyond),
    "every look at full α": Decide(naive, beyond),
    "confidence sequence": Decide(sequence, beyond),
    "true label, sequence": Decide(sequence, beyond, true_label=True),
    "true label, randomised": Decide(lucky, beyond, true_label=True),
    "planned draws": PlannedDraws(2000, 0.05, 0.1, min_draws=20),
}
setting = CoverageSetting(seed=seed)
coverage = {
    name: false_rate(
        procedure, S.coverage_runs, setting, claimed_alpha=0.05
    )
    for name, procedure in procedures.items()
}
# the exact probability of the same false answers (tests of a radius only)
exact_rates = {
    name: exact_false_rate(p, setting, claimed_alpha=0.05).probability
    for name, p in procedures.items()
    if isinstance(p, Decide)
}

# %% [markdown]
# One row per procedure: the runs, how many certified falsely, the rate, the exact
# probability that the rate estimates (empty for the planned draws, whose answer is
# an estimated radius rather than a test of one threshold), and the bound the rate
# must stay under, $\alpha$ plus three standard errors. "Holds" compares the two.

# %% tags=["nbval-check-output"]
pd.DataFrame(
    {
        name: {
            "runs": c.runs,
            "false": c.false,
            "rate": c.rate,
            "exact": exact_rates.get(name, np.nan),
            "α + 3 s.e.": c.bound,
            "holds": c.holds,
        }
        for name, c in coverage.items()
    }
).T

# %% tags=["remove-cell"]
sound = {k: c for k, c in coverage.items() if k != "every look at full α"}
assert all(c.holds for c in sound.values())
assert not coverage["every look at full α"].holds
glue_all(
    coverage_runs=S.coverage_runs,
    seq_rate=coverage["sequential"].rate,
    seq_bound=coverage["sequential"].bound,
    seq_exact=exact_rates["sequential"],
    naive_rate=coverage["every look at full α"].rate,
)

# %% [markdown]
# The sequential procedure certified falsely in {glue:text}`seq_rate:.2%` of the runs
# (exactly {glue:text}`seq_exact:.2%`), within {glue:text}`seq_bound:.2%`, and so did
# every other sound procedure; testing every look at the full $\alpha$ certified
# falsely in {glue:text}`naive_rate:.2%` while claiming 5%. At the book's own
# $\alpha$ the same probability can be computed exactly rather than counted, for
# every test of this chapter and every published design:
# {ref}`chapter-design-costs` does so, and each stays within $\alpha$.
#
# ## On the book's models, on CERTIFY's own draws
#
# The base models of {ref}`chapter-tight-radius` and its test images. That chapter's
# CERTIFY runs kept a record of each image's draws, the class of every noisy copy
# CERTIFY classified for it with the chapter's seed
# ({func}`~rsutils.sequential.runs.certify_recorded_dataset`), and every procedure
# here is replayed on that record ({func}`~rsutils.sequential.runs.replay_log`): it
# reads the prefixes of the very stream CERTIFY read, so a difference in the answers
# comes from the procedure, not from the luck of the draws, and its cost is the
# draws it read. The library's tests check that each replay returns what the live
# procedure returns. One pass per image answers every radius at once; each answer
# counts the forward passes it alone would have spent.

# %%
standard, records, smooths = {}, {}, {}
for s in BOOK_SIGMAS:
    standard[s] = chapter.main.certify(configs[s], rs.Gaussian(s))
    records[s] = chapter.main.record(configs[s], rs.Gaussian(s))
    smooths[s] = chapter.main.smooth(configs[s], rs.Gaussian(s))

# %% [markdown]
# `standard` holds chapter 01's CERTIFY logs and `records` their recorded draws.
# First the check that the records are CERTIFY's draws: CERTIFY run live, the model
# on the same seeded noise, gives the logged class and count on the first
# {glue:text}`live_checks:d` images of each model
# ({func}`~rsutils.sequential.runs.live_disagreements`).

# %%
live_checked = chapter.main.indices[:LIVE_CHECKS]
for s in BOOK_SIGMAS:
    assert not live_disagreements(
        smooths[s], chapter.main.data, standard[s], chapter.main.settings,
        live_checked,
    )  # fmt: skip
glue_all(live_checks=len(live_checked))

# %% [markdown]
# For a deployed classifier, which must select its class: the spending schedule and
# the confidence sequence, each beside CERTIFY radius by radius
# ({func}`~rsutils.book.chapters.fewer_draws.procedure_table`).

# %%
radii = {s: [s * k for k in S.r_over_sigma] for s in BOOK_SIGMAS}


def replayed(s, test, true_label=False):
    procedure = Decide(test, tuple(radii[s]), true_label=true_label)
    log = replay_log(smooths[s], records[s], procedure)
    return log, decisions_long(log, radii[s])


runs = {
    s: {
        "spending": replayed(s, S.schedule),
        "sequence": replayed(s, S.anytime),
        "label, spending": replayed(s, S.schedule, true_label=True),
        "label, sequence": replayed(s, S.anytime, true_label=True),
        "label, randomised": replayed(s, S.randomised, true_label=True),
    }
    for s in BOOK_SIGMAS
}

# %% [markdown]
# One row per model and radius: per procedure its certified accuracy minus CERTIFY's,
# in points ("gap"), and how many times fewer forward passes per image than
# CERTIFY's $n_0 + n$ it spent ("fewer by"); then CERTIFY's accuracy in percent and
# the floor's draws.


# %%
def table(names):
    return pd.concat(
        {
            s: fd.procedure_table(
                standard[s],
                {name: runs[s][name][1] for name in names},
                s,
                S.alpha,
            )
            for s in BOOK_SIGMAS
        },
        names=["σ"],
    )


selected = table(["spending", "sequence"])
selected.round(1)

# %% tags=["remove-cell"]
fewer = selected.xs("fewer by", axis=1, level=1)
r_of = fewer.index.get_level_values("r/σ")
gain = fewer["sequence"] / fewer["spending"]
upto2, at3 = fewer[r_of <= 2], fewer[r_of == 3]
least = upto2["sequence"].groupby("σ").min()  # per model, over r ≤ 2σ
gaps = selected.xs("gap", axis=1, level=1)
glue_all(
    decide_min_upto2=float(upto2["spending"].min()),
    decide_max_upto2=float(upto2["spending"].max()),
    decide_min_3=float(at3["spending"].min()),
    decide_max_3=float(at3["spending"].max()),
    decide_worst_gap=float(gaps["spending"].abs().max()),
    sequence_worst_gap=float(gaps["sequence"].abs().max()),
    sequence_gain_min=float(gain.min()),
    sequence_gain_max=float(gain.max()),
    sequence_better=int((gain > 1).sum()),
    sequence_cells=len(gain),
    deployed_seq_mean_2=float(least.mean()),
    deployed_seq_min_2=float(least.min()),
    deployed_seq_max_2=float(least.max()),
    certify_passes=S.certify_passes,
    n0=S.n0,
)

# %% [markdown]
# Read the "fewer by" columns beside the accuracies: where many images are certified
# at a radius, each of them needs at least the floor's draws, and the saving shrinks
# as the floor grows; where few are, most answers are "not certified" and come
# early, so the saving can grow with the radius instead.
#
# CERTIFY spends $n_0 + n = $ {glue:text}`certify_passes:,d` forward passes on every
# image. Up to $r = 2\sigma$ the spending schedule's answers cost
# {glue:text}`decide_min_upto2:.1f` to {glue:text}`decide_max_upto2:.1f` times fewer;
# at $3\sigma$ only {glue:text}`decide_min_3:.1f` to {glue:text}`decide_max_3:.1f`
# times, because there the floor {eq}`eq-draw-floor` is most of $n$. The confidence
# sequence spends {glue:text}`sequence_gain_min:.2f` to
# {glue:text}`sequence_gain_max:.2f` times as few passes as the spending schedule
# (fewer in {glue:text}`sequence_better:d` of the {glue:text}`sequence_cells:d`
# model-and-radius cells); at every radius up to $2\sigma$ it needs at least
# {glue:text}`deployed_seq_min_2:.1f` to {glue:text}`deployed_seq_max_2:.1f` times
# fewer passes than CERTIFY, depending on the model (the least factor over those
# radii; {glue:text}`deployed_seq_mean_2:.1f` on average over the models). Certified
# accuracy differs from CERTIFY's by at most {glue:text}`decide_worst_gap:.1f`
# points for the spending schedule and {glue:text}`sequence_worst_gap:.1f` for the
# sequence: the images decided differently have $p_A$ near the threshold, where a
# test's level and an early look's luck can tip the answer. Both still pay the
# $n_0 = $ {glue:text}`n0:,d` selection draws on every image, which is most of what
# a confident image costs up to $\sigma$.
#
# ## Evaluation on a labelled test set, beside the published designs
#
# Testing the true label needs no selection draws. The same three tests (the
# spending schedule, the confidence sequence, and randomised Clopper–Pearson on the
# spending looks) without them, beside CERTIFY:

# %%
ours = table(["label, spending", "label, sequence", "label, randomised"])
ours.round(1)

# %% [markdown]
# The published designs for the same question, re-implemented from their papers
# ({mod}`rsutils.sequential.published`) and run on the same recorded draws of the
# true label as tests of the same decision: the staged test of
# {cite:t}`horvath2022boosting`, with $\alpha$ split over stages of
# {glue:text}`horvath_stages` fresh draws, and the two confidence sequences of
# {cite:t}`voracek2024treatment`, one betting {cite:p}`waudbysmith2024estimating`
# and one a union bound over geometric epochs.

# %%
published_tests = fd.published_tests(S.n, S.alpha)
for s in BOOK_SIGMAS:
    for name, test in published_tests.items():
        runs[s][name] = replayed(s, test, True)
published = table(list(published_tests))
published.round(1)


# %% [markdown]
# Both tables have the layout of the one before, and the question each design
# answers is the same, so the columns compare directly. The comparison in one table,
# per procedure over the three models: the least "fewer by" at any radius up to
# $2\sigma$ (taken per model, then its mean, smallest and largest over the models);
# the passes a procedure spends on those radii over the passes of the book's
# one-sided sequence on the same images (above 1: it needs more); and its largest
# accuracy gap from CERTIFY up to $2\sigma$, in points.

# %%
both = pd.concat([ours, published], axis=1)
r_both = both.index.get_level_values("r/σ")
ours_names = ["label, spending", "label, sequence", "label, randomised"]
names = [*ours_names, *published_tests]


def passes(name):  # per image, summed over the radii up to 2σ
    spent = S.certify_passes / both.loc[r_both <= 2, (name, "fewer by")]
    return spent.groupby("σ").sum()


def compared(name):
    near = both.loc[r_both <= 2, name]
    least = near["fewer by"].groupby("σ").min()
    ratio = passes(name) / passes("label, sequence")
    spread = ("mean", "min", "max")
    return {
        **{("fewer than CERTIFY", k): least.agg(k) for k in spread},
        **{("passes / sequence's", k): ratio.agg(k) for k in spread},
        ("largest |gap|", "points"): near["gap"].abs().max(),
    }


comparison = pd.DataFrame({name: compared(name) for name in names}).T
comparison.round(2)

# %% tags=["remove-cell"]
label_seq = comparison.loc["label, sequence"]
label_fewer = both[("label, sequence", "fewer by")]
staged = both[("Horváth et al.", "fewer by")]
betting = both[("Voráček, betting", "fewer by")]
designs = {
    "staged": "Horváth et al.",
    "betting": "Voráček, betting",
    "union": "Voráček, union bound",
}
glue_all(
    label_seq_min_1=float(label_fewer[r_both <= 1].min()),
    label_seq_min_2=float(label_fewer[r_both <= 2].min()),
    label_seq_mean_2=float(label_seq[("fewer than CERTIFY", "mean")]),
    label_seq_max_2=float(label_seq[("fewer than CERTIFY", "max")]),
    label_seq_gap=float(label_seq[("largest |gap|", "points")]),
    models=len(BOOK_SIGMAS),
    betting_more=int((betting > label_fewer)[r_both <= 2].sum()),
    cells_upto2=int((r_both <= 2).sum()),
    betting_gap=float(comparison.loc[designs["betting"]].iloc[-1]),
    staged_min_1=float(staged[r_both <= 1].min()),
    **{
        f"{key}_ratio_{k}": float(
            comparison.loc[name, ("passes / sequence's", k)]
        )
        for key, name in designs.items()
        for k in ("mean", "min", "max")
    },
)

# %% [markdown]
# Which design needs the fewest passes is the run's to say; the cell below picks
# the published design with the smallest mean ratio and states how it compares with
# the book's one-sided sequence:

# %%
ratios = comparison["passes / sequence's"]
cheapest = ratios["mean"].drop(ours_names).idxmin()
ratio = ratios.loc[cheapest, "mean"]
run_chose(
    "the cheapest published design's mean ratio is below 1",
    ratio < 1,
    f"{cheapest} needs fewer passes than the book's one-sided sequence, "
    "on average over the models.",
    "Every published design needs more passes than the book's one-sided "
    f"sequence on average over the models; the closest is {cheapest}.",
)

# %% [markdown]
# The designs differ in where they spend. The staged test's first stage is
# {glue:text}`horvath_first:,d` draws, so a confident image costs at least that
# many, and it saves at least {glue:text}`staged_min_1:.1f` times up to $\sigma$.
# Voráček's betting sequence is two-sided, and his union bound splits $\alpha$ over
# epochs, so each needs more draws than the one-sided sequence when every draw is in
# the class ({ref}`chapter-design-costs`). Yet the betting sequence spends all
# of $\alpha$ on one test, where ours keeps half for the last look: it saves more
# than ours in {glue:text}`betting_more:d` of the {glue:text}`cells_upto2:d` cells
# up to $2\sigma$, and its largest gap from CERTIFY's accuracy there is
# {glue:text}`betting_gap:.1f` points. The papers report their samples on CIFAR-10
# models at other radii, so their numbers and these compare only in kind; these
# compare the designs themselves, on the same draws.
#
# Each row above prices one radius. A certified-accuracy curve needs every radius of
# its grid from one stream, so an image costs the most draws any radius took, and the
# images certified near the ceiling need nearly all $n$ whichever radius asked: the
# whole curve to $3\sigma$ on the true label costs only
# {glue:text}`curve_label_3:.1f` times fewer passes than CERTIFY on the model where
# it saves least. {ref}`chapter-whole-curves` prices the curves of every
# procedure, bounds their saving at the papers' $n = 10^5$, compares each radius
# with the most any test could save (Wald's bound) and shows where the passes go.

# %% tags=["remove-cell"]
curve = {
    s: fd.curve_passes(runs[s]["label, sequence"][0], radii[s])
    for s in BOOK_SIGMAS
}
glue_all(curve_label_3=min(S.certify_passes / c for c in curve.values()))

# %% [markdown]
# ## What radius do $n$ draws give? Planned draws
#
# The tests above answer "is $x$ certified at $r$?". CERTIFY also answers "what is
# the largest radius?", and for that the floor charges every image whose radius is
# near the ceiling nearly all $n$ draws.
# {class}`~rsutils.sequential.planned.PlannedDraws`, after the input-specific sampling
# of {cite:t}`chen2022input`, lets the $n_0$ selection draws also estimate $p_A$ and
# takes the fewest estimation draws $n(x) \le n$ whose expected radius at that
# estimate is within {glue:text}`radius_loss:.2f` of what $n$ draws would give. An
# input whose selection draws all agree needs many draws to reach its ceiling; one
# near the boundary needs few before more stop paying. Those draws then certify at
# the full $\alpha$: since $n(x)$ depends on the selection draws only, fixed before
# any estimation draw is seen, the certificate is CERTIFY's at level $\alpha$ (the
# coverage check above).

# %%
plan = PlannedDraws(S.n, S.alpha, S.radius_loss)
planned = {
    s: replay_log(smooths[s], records[s], plan) for s in BOOK_SIGMAS
}

# %% [markdown]
# Each planned log is compared with CERTIFY's log of the same model on the same
# images ({func}`~rsutils.book.chapters.fewer_draws.planned_summary`), one column per
# model: forward passes per image and their ratio, the ACR of each, the largest gap
# between the two certified-accuracy curves (planned minus CERTIFY, in points) over
# all radii and below the band just under the ceiling, the share of images at the
# ceiling, and the share of the planned draws they took.

# %%
curve_radii = np.linspace(0, 4, 161)
summary = pd.DataFrame(
    {
        s: fd.planned_summary(
            standard[s],
            planned[s],
            curve_radii,
            sigma=s,
            radius_loss=S.radius_loss,
        )
        for s in BOOK_SIGMAS
    }
).T.rename_axis("σ")
summary.T.round(3)

# %% tags=["remove-cell"]
glue_all(
    radius_loss=S.radius_loss,
    planned_min=float(summary["fewer by"].min()),
    planned_max=float(summary["fewer by"].max()),
    planned_mean=float(summary["fewer by"].mean()),
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
# The planned draws cost {glue:text}`planned_min:.1f` to
# {glue:text}`planned_max:.1f` times fewer forward passes than CERTIFY
# ({glue:text}`planned_mean:.1f` on average over the models) and lose at most
# {glue:text}`acr_loss:.3f` of average certified radius. Where the draws still go:
# {glue:text}`ceiling_min:.0%` to {glue:text}`ceiling_max:.0%` of the images had
# every one of CERTIFY's draws in their class, so their radius is the ceiling, which
# grows with $n$ by {eq}`eq-draw-floor`; they take up to
# {glue:text}`ceiling_share_max:.0%` of the planned draws, and no valid procedure
# certifies their ceiling radius with fewer. Their planned radius sits just below
# the ceiling, so the two curves part in a band of width about the radius loss
# under it, where the largest gap, {glue:text}`planned_gap:.0f` points, lies; below
# the band they differ by at most {glue:text}`planned_gap_below:.1f` points
# ({numref}`fig-planned-curves`).

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
# at the draws that the radius loss allows. A smaller radius loss narrows it at the
# price of passes, and looking at the radius itself after each look is another way
# to stop; {ref}`chapter-whole-curves` compares both on the same draws, with
# the floor that bounds any procedure matching CERTIFY's curve below the band.
#
# ## What holds up
#
# The same guarantee needs at least {glue:text}`label_seq_mean_2:.1f` times fewer
# forward passes than CERTIFY to decide whether a test image's true label is
# certified at any one radius up to $2\sigma$, on average over the book's models
# ({glue:text}`label_seq_min_2:.1f` to {glue:text}`label_seq_max_2:.1f` times, the
# least factor over those radii on each model), and at least
# {glue:text}`deployed_seq_mean_2:.1f` times ({glue:text}`deployed_seq_min_2:.1f` to
# {glue:text}`deployed_seq_max_2:.1f`) for a deployed classifier that must select
# its class first, both with the confidence sequence on CERTIFY's own draws.
#
# - Every procedure here is as sound as CERTIFY: at the worst case each stayed
#   within {glue:text}`seq_bound:.2%` at $\alpha = 0.05$, a check that catches the
#   unsound one; on the true label, certified accuracy stayed within
#   {glue:text}`label_seq_gap:.1f` points of CERTIFY's up to $2\sigma$.
# - Against the published designs on the same draws, per model and summed over the
#   radii up to $2\sigma$: Horváth et al.'s staged test needs
#   {glue:text}`staged_ratio_mean:.2f` times the sequence's passes
#   ({glue:text}`staged_ratio_min:.2f` to {glue:text}`staged_ratio_max:.2f`),
#   Voráček's betting sequence {glue:text}`betting_ratio_mean:.2f`
#   ({glue:text}`betting_ratio_min:.2f` to {glue:text}`betting_ratio_max:.2f`) and
#   his union bound {glue:text}`union_ratio_mean:.2f`
#   ({glue:text}`union_ratio_min:.2f` to {glue:text}`union_ratio_max:.2f`).
# - Near the ceiling the floor {eq}`eq-draw-floor` leaves little: at $3\sigma$ the
#   spending schedule saves {glue:text}`decide_min_3:.1f` to
#   {glue:text}`decide_max_3:.1f` times, and a whole curve to $3\sigma$ as little as
#   {glue:text}`curve_label_3:.1f` times ({ref}`chapter-whole-curves`).
# - Planned draws give nearly CERTIFY's radius with {glue:text}`planned_min:.1f` to
#   {glue:text}`planned_max:.1f` times fewer passes, losing at most
#   {glue:text}`acr_loss:.3f` of ACR; a smaller radius loss trades passes for
#   points ({ref}`chapter-whole-curves`).
# - A faster forward pass multiplies with all of them
#   ({ref}`chapter-forward-pass`).
#
# Every saving above keeps CERTIFY's guarantee, $1 - \alpha$ per certificate; none
# of them moves the ceiling. A larger radius still needs more draws or more $\alpha$,
# the trade-off that {ref}`chapter-tight-radius` measured.
