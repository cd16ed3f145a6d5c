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
# This chapter measures ways to stop earlier with the same failure probability
# $\alpha$, on the book's base models and test images, against CERTIFY on the very
# draws CERTIFY used: tests at a few planned looks, a confidence sequence that may
# look after every batch, an evaluation mode that tests the true label without
# selecting a class, and input-specific sample sizes. It sets them beside the
# published designs for the same job, re-implemented from their papers
# {cite:p}`horvath2022boosting,voracek2024treatment,chen2022input` and run on the
# same draws, and ends with the faster forward pass the book's certificates run with.
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
import seaborn as sns
from scipy.stats import norm

import rsutils as rs
from rsutils.book import Chapter, glue_all, plot_curves
from rsutils.book.chapters import fewer_draws as fd
from rsutils.book.profiles import BOOK_SIGMAS
from rsutils.core.confidence import min_samples_for_radius
from rsutils.core.reference_precision import FAST_MODES
from rsutils.sequential import (
    Decide,
    PlannedDraws,
    RadiusLooks,
    decisions_long,
)
from rsutils.sequential.coverage import (
    CoverageSetting,
    exact_false_rate,
    false_rate,
    radius_beyond,
)
from rsutils.sequential.published import PublishedTest, horvath_stages
from rsutils.sequential.runs import live_disagreements, replay_log

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
P, configs = chapter.profile, chapter.base_models
N, ALPHA = P.certify.n, P.certify.alpha
# the planned draws' budget, in ℓ2 units of [0, 1] pixels
RADIUS_LOSS = 0.05
# the decision task's radii, and the grid of a certified-accuracy curve
R_OVER_SIGMA = (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
COVERAGE_RUNS = P.checks.coverage_runs
# images per model on which CERTIFY runs live again, to check the records
LIVE_CHECKS = 10
# paired float32 / fast draws of the float32-from-fast certificates
REFERENCE_DRAWS = (300, 1000)
# true-label evaluation's targets: times fewer passes up to σ and 2σ, gap
TARGETS = {"target_1": 20, "target_2": 10, "target_gap": 0.5}
# the radius task's: times fewer passes, points below the band
RADIUS_TARGET = {"radius_fewer_target": 3, "radius_gap_target": 1}
schedule = rs.LookSchedule.geometric(N, ALPHA)
anytime = rs.AnytimeSchedule.geometric(N, ALPHA)
randomised = rs.LookSchedule.geometric(N, ALPHA, randomized=True)
chapter.run_at(
    {
        **chapter.base_model_rows(),
        "decision radii": "r/σ = "
        + ", ".join(f"{r:g}" for r in R_OVER_SIGMA),
        "confidence sequence": f"{len(anytime.looks)} looks",
        "planned draws' radius loss": RADIUS_LOSS,
        "coverage runs": f"{COVERAGE_RUNS:,} per procedure",
    }
)

# %% [markdown]
# The decision radii are multiples of each model's $\sigma$, so that the three models
# are asked comparable questions: a radius of $\sigma$ asks for the same $p_A$,
# $\Phi(1)$, whatever $\sigma$ is. The radius loss is the planned draws' only
# setting (section (f)), and the coverage runs are the repetitions of section (b)'s
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
# The floor binds every *non-randomised* test, and each design of this chapter pays
# something above it even when every draw is in class A: a test split over looks
# pays for its smaller levels, a confidence sequence for looking at every batch, a
# staged design for its stage sizes. Draws to certify $r$ at $p_A = 1$, each
# design with at most $n = $ {glue:text}`n:,d` draws (0: never within them):

# %%
p_one = fd.draws_at_p_one((1.0, 2.0, 3.0), ALPHA, N, schedule, anytime)
p_one.astype(int)

# %% [markdown]
# One row per radius, in units of $\sigma$; the columns are the floor, the first
# look of the book's spending schedule (section (b)) that certifies, the one-sided
# confidence sequence of section (b), the two confidence sequences of
# {cite:t}`voracek2024treatment` and the staged test of
# {cite:t}`horvath2022boosting` (section (d)).
#
# A *randomised* test can go below the floor: randomised Clopper–Pearson with $m$
# draws all in class A certifies $p_A > p_0$ whenever its uniform $u$ is at most
# $\alpha / p_0^m$. With {glue:text}`half_floor:,d` draws, half the floor at
# $\sigma$, it certifies $\sigma$ with probability
# {glue:text}`half_floor_chance:.2%`: rarely, and only by the luck of $u$, which
# must be drawn before the counts and stated in the certificate.

# %% tags=["remove-cell"]
half_floor = min_samples_for_radius(1.0, ALPHA) // 2
stages = horvath_stages(N)
glue_all(
    sequence_looks=len(anytime.looks),
    horvath_stages=", ".join(f"{n:,}" for n in stages),
    horvath_first=stages[0],
    half_floor=half_floor,
    half_floor_chance=min(1.0, ALPHA / norm.cdf(1.0) ** half_floor),
)
sequence, spending = p_one["confidence sequence"], p_one["spending looks"]
never = sequence == 0  # not within n draws
assert ((sequence >= p_one["floor"]) | never).all()
assert ((sequence <= spending) & ~never | (spending == 0)).all()

# %% [markdown]
# ## (b) Is $x$ certified at radius $r$? Sequential CERTIFY
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
# ### Looking after every batch: a confidence sequence
#
# Spending $\alpha$ over looks makes each look's test weaker, so the looks must be
# few, and an input whose answer becomes plain just after a look waits for the
# next one. A *confidence sequence* removes both costs
# {cite:p}`robbins1970statistical,howard2021timeuniform`: a test that stays valid
# however often it looks and whenever it stops, so it need not be split over looks.
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
# sequence lies below $p_0$. As the spending schedule does, the book's schedule keeps
# half of $\alpha$ for CERTIFY's own test at the last look, where a fixed-$n$ bound
# is tighter than any sequence, and runs the sequence at $\alpha' = \alpha/2$; the
# two levels add up to $\alpha$, CERTIFY's guarantee. Section (a)'s table shows the
# price at $p_A = 1$: above the floor, and below the first certifying look of the
# spending schedule, whose doubling looks overshoot it.
#
# The martingale is an e-process in the language of anytime-valid inference
# {cite:p}`ramdas2023gametheoretic`. Its prior is fixed here; {cite:t}`cullen2026halt`
# let a small meta-learner choose each image's prior for such a process and report a
# large reduction in draws. That design needs a trained meta-learner and is not
# re-implemented in this chapter.
#
# {class}`~rsutils.sequential.spending.LookSchedule` also takes `randomized=True`: each
# look's lower bound is then randomised Clopper–Pearson, with one uniform $u$ per
# input drawn from its own seeded stream before any count and stated in every
# decision ({func}`~rsutils.sequential.decisions.randomization`).
#
# ### Evaluation: is the true label certified?
#
# A certified-accuracy curve counts the test images whose *true label* is certified
# at each radius. For that question the $n_0$ selection draws are not needed: test
# the label directly (`Decide(..., true_label=True)`), with the same
# looks and rule. It is an evaluation procedure only. A deployed classifier has no
# label to test and must select its class, as CERTIFY and
# {class}`~rsutils.sequential.decisions.Decide` do; an image counts in either curve only
# when the certified class is its label, so both curves estimate the same thing.
#
# ### Coverage on a classifier whose answer is known
#
# A linear classifier at distance $d$ from its boundary has $p_A = \Phi(d/\sigma)$ and
# exact radius $d$ ({class}`~rsutils.checks.classifiers.LinearClassifier`). With
# $p_A = 0.9$, asking about a radius just beyond $d$ puts $p_A$ at the threshold that
# radius needs, the worst case, and makes every *certified* false
# ({mod}`rsutils.sequential.coverage`, which draws these Bernoulli draws directly and
# runs each procedure on them as on recorded draws). Over {glue:text}`coverage_runs:,d` runs at
# $\alpha = 0.05$ the sequential procedure certified falsely in
# {glue:text}`seq_rate:.2%` of them (the exact probability, computed below, is
# {glue:text}`seq_exact:.2%`), within $\alpha$ plus three standard errors
# ({glue:text}`seq_bound:.2%`), and so did every other procedure of the chapter.
# Testing every look at the full $\alpha$ instead, without spending, certified
# falsely in {glue:text}`naive_rate:.2%` of the runs while claiming
# $\alpha = 0.05$: the check sees the error it is there to catch.
#
# The check uses a larger $\alpha$ and fewer draws than the book's CERTIFY on
# purpose: at $\alpha = 0.05$ a false rate is measurable from a modest number of runs,
# while at the book's $\alpha$ almost no run would ever be false and the check
# could not tell a sound procedure from an unsound one.

# %%
spend = rs.LookSchedule.geometric(2000, 0.05, first=25)
naive = rs.LookSchedule(spend.looks, (0.05,) * len(spend.looks))
sequence = rs.AnytimeSchedule.geometric(2000, 0.05)
lucky = replace(spend, randomized=True)
beyond = (radius_beyond(),)
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
    name: false_rate(procedure, COVERAGE_RUNS, setting, claimed_alpha=0.05)
    for name, procedure in procedures.items()
}
# the exact probability of the same false answers (tests of a radius only)
exact_rates = {
    name: exact_false_rate(
        procedure, setting, claimed_alpha=0.05
    ).probability
    for name, procedure in procedures.items()
    if isinstance(procedure, Decide)
}

# %% [markdown]
# One row per procedure: the runs, how many of them certified falsely, the rate, the
# exact probability of a false certificate that the rate estimates (below; empty for
# the planned draws, whose answer is an estimated radius rather than a test of one
# threshold), and the bound the rate must stay under, $\alpha$ plus three standard
# errors of a rate estimated from that many runs. "Holds" compares the rate with the
# bound; the second row is expected to fail.

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
    coverage_runs=COVERAGE_RUNS,
    seq_rate=coverage["sequential"].rate,
    seq_bound=coverage["sequential"].bound,
    seq_exact=exact_rates["sequential"],
    naive_rate=coverage["every look at full α"].rate,
)

# %% [markdown]
# #### The same probability, exactly, at the book's level
#
# At the book's $\alpha$ a false certificate is too rare to count, but it need not be
# counted. Each test of a radius here (the spending schedules, the confidence
# sequence, the published designs) decides at each look by comparing the count of
# draws in the class with two thresholds: at or above one it certifies, at or below
# the other it stops *not certified*, in between it reads on. At $p_A = p_0$ the
# distribution of the count among the runs still reading is a vector over counts;
# convolved with the binomial of the draws up to the next look it gives the next
# look's, and each look removes the mass it decides. The mass removed as *certified*
# adds up to the exact probability of a false certificate, without sampling
# ({func}`~rsutils.sequential.coverage.certify_probability`, the column "exact"
# above). The thresholds are read off each test's own decision functions, and the
# library's tests check them against the procedure itself at every look, and the
# whole computation against brute-force enumeration and the Monte Carlo rates. A
# randomised test is a mixture of such rules over the intervals of its $u$ on which
# they are fixed. Raising $p_A$ only makes a test certify sooner, so $p_A = p_0$ is
# the worst case of $p_A \le p_0$.
#
# Per test at the book's $\alpha = $ {glue:text}`alpha:g` and $n = $
# {glue:text}`n:,d`, the exact probability that it certifies falsely at each decision
# radius, in units of $\alpha$:

# %%
released = "Voráček, betting at 1/(2α)"
control = "every look at full α"
exact_tests = {
    "spending": schedule,
    "randomised": randomised,
    "confidence sequence": anytime,
    **{
        name: PublishedTest(d, N, ALPHA)
        for name, d in fd.PUBLISHED_NAMES.items()
    },
    # the betting test's wealth threshold 1/α' is 1/(2α) at α' = 2α
    released: PublishedTest("voracek-betting", N, 2 * ALPHA),
    control: rs.LookSchedule(
        schedule.looks, (ALPHA,) * len(schedule.looks)
    ),
}
exact = fd.exact_coverage_table(exact_tests, R_OVER_SIGMA, ALPHA)
exact.round(3)

# %% [markdown]
# One row per test, one column per radius in units of $\sigma$ (0 where $n$ draws
# cannot certify that radius at all); at most 1 is the guarantee. Every test of the
# chapter stays within it, the highest being {glue:text}`exact_worst_name` at
# {glue:text}`exact_worst:.3f`: the tests lose part of $\alpha$ to the discreteness
# of the counts and to the overlap of their looks. Testing every look at the full
# $\alpha$ reaches {glue:text}`exact_naive:.2f` times $\alpha$.
#
# Voráček's released code stops his betting test once the wealth exceeds
# $1/(2\alpha)$ (the threshold of its `thresholds.py`), where the book, as his
# Algorithm 2, waits for $1/\alpha$
# ({func}`~rsutils.sequential.published.voracek_betting_test`). The higher bar is
# crossed no sooner on any stream of draws, so the book's version of his design
# reads at least as many draws as the same test at $1/(2\alpha)$, and here it also
# certifies falsely less often: at most {glue:text}`betting_exact:.3f` times $\alpha$
# against {glue:text}`betting_half_exact:.3f` at $1/(2\alpha)$, both within
# $\alpha$. The book's version is thus the more conservative of the two: section
# (d) charges his design at least the draws his released threshold would spend, so
# if anything it understates that design's savings rather than flattering them.

# %% tags=["remove-cell"]
sound_exact = exact.drop(index=[released, control])
assert (sound_exact <= 1 + 1e-12).all().all()
assert (exact.loc[released] <= 1 + 1e-12).all()
assert (exact.loc["Voráček, betting"] <= exact.loc[released]).all()
assert exact.loc[control].max() > 1
worst_exact = sound_exact.max(axis=1)
glue_all(
    exact_worst=float(worst_exact.max()),
    exact_worst_name=str(worst_exact.idxmax()),
    exact_naive=float(exact.loc[control].max()),
    betting_exact=float(exact.loc["Voráček, betting"].max()),
    betting_half_exact=float(exact.loc[released].max()),
)

# %% [markdown]
# ## (c) On the book's models, on CERTIFY's own draws
#
# The base models of {ref}`chapter-tight-radius` and its test images. That chapter's
# CERTIFY runs kept a record of each image's draws, the class of every noisy copy
# CERTIFY classified for it with the chapter's seed
# ({func}`~rsutils.sequential.runs.certify_recorded_dataset`), and every procedure
# here is replayed on that record
# ({func}`~rsutils.sequential.runs.replay_log`): it reads the prefixes of the very stream
# CERTIFY read, so a difference in the answers comes from the procedure, not from
# the luck of the draws, and its cost is the draws it read. A replay *is* the
# procedure (the library's tests check that each replay returns what the live
# procedure returns), and one pass per image answers every radius at once; each
# answer counts the forward passes it alone would have spent.

# %%
standard, records, smooths = {}, {}, {}
for s in BOOK_SIGMAS:
    standard[s] = chapter.main.certify(configs[s], rs.Gaussian(s))
    records[s] = chapter.main.record(configs[s], rs.Gaussian(s))
    smooths[s] = chapter.main.smooth(configs[s], rs.Gaussian(s))

# %% [markdown]
# `standard` holds chapter 01's CERTIFY logs and `records` their recorded draws,
# both read from the cache. First the check that the records are CERTIFY's draws:
# CERTIFY run live, the model on the same seeded noise, gives the logged class and
# count on the first {glue:text}`live_checks:d` images of each model
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
# the confidence sequence of section (b), each beside CERTIFY radius by radius
# ({func}`~rsutils.book.chapters.fewer_draws.procedure_table`).

# %%
radii = {s: [s * k for k in R_OVER_SIGMA] for s in BOOK_SIGMAS}


def replayed(s, test, true_label=False):
    procedure = Decide(test, tuple(radii[s]), true_label=true_label)
    log = replay_log(smooths[s], records[s], procedure)
    return log, decisions_long(log, radii[s])


runs = {
    s: {
        "spending": replayed(s, schedule),
        "sequence": replayed(s, anytime),
        "label, spending": replayed(s, schedule, true_label=True),
        "label, sequence": replayed(s, anytime, true_label=True),
        "label, randomised": replayed(s, randomised, true_label=True),
    }
    for s in BOOK_SIGMAS
}

# %% [markdown]
# One row per model and radius: CERTIFY's certified accuracy in percent, and per
# procedure its accuracy minus CERTIFY's, in points ("gap"), and how many times
# fewer forward passes per image than CERTIFY's $n_0 + n$ it spent ("fewer by");
# the floor's draws close the row.


# %%
def table(names):
    return pd.concat(
        {
            s: fd.procedure_table(
                standard[s],
                {name: runs[s][name][1] for name in names},
                s,
                ALPHA,
            )
            for s in BOOK_SIGMAS
        },
        names=["σ"],
    )


selected = table(["spending", "sequence"])
selected.round(1)

# %% tags=["remove-cell"]
fewer = selected.xs("fewer by", axis=1, level=1)
gain = fewer["sequence"] / fewer["spending"]
upto2 = fewer[fewer.index.get_level_values("r/σ") <= 2]
at3 = fewer[fewer.index.get_level_values("r/σ") == 3]
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
    certify_passes=P.certify.n0 + N,
    n0=P.certify.n0,
)

# %% [markdown]
# Read the "fewer by" columns beside the accuracies: where many images are certified
# at a radius, each of them needs at least the floor's draws, and the saving shrinks
# as the floor grows; where few are, most answers are "not certified" and come
# early, so the saving can grow with the radius instead.
#
# CERTIFY spends $n_0 + n = $ {glue:text}`certify_passes:,d` forward passes on every
# image. Up to $r = 2\sigma$ the spending schedule's answers cost
# {glue:text}`decide_min_upto2:.1f` to {glue:text}`decide_max_upto2:.1f` times fewer
# forward passes than CERTIFY; at $3\sigma$ only {glue:text}`decide_min_3:.1f` to
# {glue:text}`decide_max_3:.1f` times, because there the floor {eq}`eq-draw-floor`
# is most of $n$. The confidence sequence spends {glue:text}`sequence_gain_min:.2f`
# to {glue:text}`sequence_gain_max:.2f` times as few passes as the spending schedule
# (fewer in {glue:text}`sequence_better:d` of the {glue:text}`sequence_cells:d`
# model-and-radius cells). Certified accuracy differs from CERTIFY's by at most
# {glue:text}`decide_worst_gap:.1f` points for the spending schedule and
# {glue:text}`sequence_worst_gap:.1f` for the sequence: the images decided
# differently are those whose $p_A$ lies near the threshold, where a test's level
# and an early look's luck can tip the answer.
#
# Both still pay the $n_0 = $ {glue:text}`n0:,d` selection draws on every image,
# which is most of what a confident image costs up to $\sigma$.
#
# ## (d) Evaluation on a labelled test set, and the published designs
#
# Testing the true label needs no selection draws. The same three tests (the
# spending schedule, the confidence sequence, and randomised Clopper–Pearson on the
# spending looks) without them, beside CERTIFY:

# %%
ours = table(["label, spending", "label, sequence", "label, randomised"])
ours.round(1)

# %% [markdown]
# The published designs for the same question, re-implemented from their papers
# ({mod}`rsutils.sequential.published`) and run on the same recorded draws of
# the true label, as tests of the same decision procedure: the staged
# test of {cite:t}`horvath2022boosting`, with $\alpha$ split over stages of
# {glue:text}`horvath_stages` fresh draws, and the two confidence sequences of
# {cite:t}`voracek2024treatment`, one betting
# {cite:p}`waudbysmith2024estimating` and one a union bound over geometric epochs.

# %%
for s in BOOK_SIGMAS:
    for name, design in fd.PUBLISHED_NAMES.items():
        runs[s][name] = replayed(s, PublishedTest(design, N, ALPHA), True)
published = table(list(fd.PUBLISHED_NAMES))
published.round(1)

# %% [markdown]
# Both tables have the layout of the one before. The question each design answers
# is the same, so the columns compare directly: the gap says what a design's answers
# cost in accuracy against CERTIFY's, "fewer by" what they saved.
#
# The targets set for true-label evaluation, per model: at least
# {glue:text}`target_1:g` times fewer forward passes than CERTIFY at every radius up
# to $\sigma$, at least {glue:text}`target_2:g` times up to $2\sigma$, and certified
# accuracy within {glue:text}`target_gap:g` points of CERTIFY's at every radius up to
# $2\sigma$. Per model and procedure, the smallest saving in each range and the
# largest accuracy gap:

# %%
label_names = [*ours.columns.levels[0], *fd.PUBLISHED_NAMES]
both = pd.concat([ours, published], axis=1)


def targets(name):
    saving = both[(name, "fewer by")]
    r = saving.index.get_level_values("r/σ")
    worst = both[(name, "gap")][r <= 2].abs().groupby("σ").max()
    return pd.DataFrame(
        {
            "fewer by, r ≤ σ": saving[r <= 1].groupby("σ").min(),
            "fewer by, r ≤ 2σ": saving[r <= 2].groupby("σ").min(),
            "largest |gap|, r ≤ 2σ": worst,
        }
    )


names = [n for n in label_names if n != "CERTIFY" and n != "floor"]
verdicts = pd.concat({n: targets(n) for n in names}, names=["procedure"])
verdicts.round(2)

# %% tags=["remove-cell"]
met = (
    (verdicts["fewer by, r ≤ σ"] >= TARGETS["target_1"])
    & (verdicts["fewer by, r ≤ 2σ"] >= TARGETS["target_2"])
    & (verdicts["largest |gap|, r ≤ 2σ"] <= TARGETS["target_gap"])
)
label_seq = verdicts.loc["label, sequence"]
glue_all(
    **TARGETS,
    label_seq_min_1=float(label_seq["fewer by, r ≤ σ"].min()),
    label_seq_min_2=float(label_seq["fewer by, r ≤ 2σ"].min()),
    label_seq_gap=float(label_seq["largest |gap|, r ≤ 2σ"].max()),
    label_seq_met=int(met.loc["label, sequence"].sum()),
    models=len(BOOK_SIGMAS),
    designs_met=", ".join(n for n in names if met.loc[n].all()) or "none",
)
upto = both.index.get_level_values("r/σ") <= 2
ours_saving = both.loc[upto, ("label, sequence", "fewer by")]
betting = both.loc[upto, ("Voráček, betting", "fewer by")]
glue_all(
    betting_more=int((betting > ours_saving).sum()),
    cells_upto2=int(upto.sum()),
    betting_gap=float(verdicts.loc["Voráček, betting"].iloc[:, 2].max()),
    staged_min_1=float(verdicts.loc["Horváth et al."].iloc[:, 0].min()),
)

# %% [markdown]
# How much could any test save? An image whose label CERTIFY certifies at $r$ must
# be certified by a test that matches CERTIFY's accuracy, and Wald's inequality
# bounds the mean draws of any test that does: $\ln(1/\alpha)$ over the
# information one draw brings, $\mathrm{KL}(p \,\|\, p_0)$
# ({func}`~rsutils.core.confidence.least_expected_draws`; at $p = 1$ the floor
# {eq}`eq-draw-floor`). Charging each certified image that bound, with $p$ its share
# of label draws in the record, and every other image nothing, gives the most any
# test could save ({func}`~rsutils.book.chapters.fewer_draws.best_possible_savings`). It is a
# reasoned estimate: $p$ is estimated, and images near the threshold dominate it.

# %%
best = pd.DataFrame(
    {
        s: fd.best_possible_savings(
            standard[s], records[s], R_OVER_SIGMA, s, ALPHA
        )
        for s in BOOK_SIGMAS
    }
).rename_axis(columns="σ")
best.round(1)

# %% [markdown]
# One row per radius, one column per model: CERTIFY's forward passes over the
# least mean passes of a test that certifies every image CERTIFY certifies.

# %% tags=["remove-cell"]
saving = verdicts.loc["label, sequence", "fewer by, r ≤ σ"]
worst = float(saving.idxmin())
cells = both[("label, sequence", "fewer by")].loc[worst]
r_worst = float(cells[cells.index <= 1].idxmin())
long = runs[worst]["label, sequence"][1]
glue_all(
    best_min_1=float(best[best.index <= 1].min().min()),
    best_min_2=float(best[best.index <= 2].min().min()),
    worst_sigma=worst,
    worst_r=r_worst,
    uncertified=fd.uncertified_share(
        standard[worst], long, r_worst * worst
    ),
)

# %% [markdown]
# The confidence sequence on the true label saves at least
# {glue:text}`label_seq_min_1:.1f` times up to $\sigma$ and
# {glue:text}`label_seq_min_2:.1f` times up to $2\sigma$ on every model, with
# certified accuracy at most {glue:text}`label_seq_gap:.2f` points from CERTIFY's;
# it meets all three targets on {glue:text}`label_seq_met:d` of the
# {glue:text}`models:d` models. Procedures meeting them on every model:
# {glue:text}`designs_met`. Wald's bound leaves room for at least
# {glue:text}`best_min_1:.1f` times up to $\sigma$ and {glue:text}`best_min_2:.1f`
# up to $2\sigma$, so it does not explain a miss: it charges nothing for the images a
# test does not certify, and that is where the passes go. At the model and radius
# where the sequence saves least up to $\sigma$ ($\sigma = $
# {glue:text}`worst_sigma:g`, $r/\sigma = $ {glue:text}`worst_r:g`),
# {glue:text}`uncertified:.0%` of its passes are spent on images that CERTIFY does
# not certify there either. Telling them apart from the certifiable ones near the
# threshold is the cost no design here avoids; a test that gave up on them sooner
# would lose some of those it should certify (a reasoned guess).
#
# The published designs differ from the sequence in where they spend. The staged
# test's first stage is {glue:text}`horvath_first:,d` draws, so a confident image
# costs at least that many; Voráček's betting sequence is two-sided, and its union bound splits
# $\alpha$ over epochs, so each needs more draws than the one-sided sequence at
# $p_A = 1$ (section (a)). Yet the betting sequence spends all of $\alpha$ on one
# test, where ours keeps half for the last look: it saves more than ours in
# {glue:text}`betting_more:d` of the {glue:text}`cells_upto2:d` cells up to
# $2\sigma$, and pays for it at images that need every draw, up to
# {glue:text}`betting_gap:.1f` points below CERTIFY. The staged test saves at least
# {glue:text}`staged_min_1:.1f` times up to $\sigma$. His paper reports its samples
# on CIFAR-10 models at other radii, so its numbers and these compare only in kind.

# %% tags=["hide-input"]
size = {"figsize": (12, 3.6), "sharey": True}
fig, axes = plt.subplots(1, len(BOOK_SIGMAS), **size)
for ax, s in zip(np.atleast_1d(axes), BOOK_SIGMAS, strict=True):
    passes = {
        name: runs[s][name][1].groupby("radius")["forward_passes"].mean()
        for name in names
    }
    frame = pd.DataFrame(passes).rename_axis("radius").reset_index()
    frame["r/σ"] = frame["radius"] / s
    tidy = frame.melt(["radius", "r/σ"], var_name="procedure")
    sns.lineplot(tidy, x="r/σ", y="value", hue="procedure", ax=ax,
                 marker="o", legend=ax is axes[0])  # fmt: skip
    ax.axhline(P.certify.n0 + N, color="grey", linestyle=":")
    ax.set(yscale="log", title=f"σ = {s}")
    ax.set_ylabel("forward passes per image")
sns.move_legend(
    axes[0], "upper center", bbox_to_anchor=(1.7, -0.2), ncol=6, title=None
)
glue_all(fig_label_passes=fig)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_label_passes
# :name: fig-label-passes
#
# Mean forward passes per image to decide whether the true label is certified at
# $r$, per procedure, on the same recorded draws; the dotted line is CERTIFY's
# $n_0 + n$.
# ```
#
# What to look at: the curves start low, where a confident image settles in tens
# of draws, and climb with the radius as the floor grows. They come closest to
# CERTIFY's line where many images are certified near the ceiling, and stay well
# below it where few images are certified at large radii.
#
# ## (e) The cost of a whole curve
#
# The tables above price one radius at a time. A certified-accuracy curve needs the
# answer at every radius of its grid; one pass over an image's stream answers them
# all, so an image costs its selection draws plus the most draws any radius of the
# grid took ({func}`~rsutils.book.chapters.fewer_draws.curve_passes`). Forward passes per
# image for the curve up to $\sigma$, $2\sigma$ and $3\sigma$, and how many times
# fewer than CERTIFY's:


# %%
def curve_row(s, log):
    row = {}
    for top in (1.0, 2.0, 3.0):
        grid = [s * k for k in R_OVER_SIGMA if k <= top]
        passes = fd.curve_passes(log, grid)
        row[(f"up to {top:g}σ", "passes")] = passes
        row[(f"up to {top:g}σ", "fewer by")] = (P.certify.n0 + N) / passes
    return row


curves = pd.DataFrame(
    {
        (s, name): curve_row(s, runs[s][name][0])
        for s in BOOK_SIGMAS
        for name in ("spending", "sequence", *names)
    }
).T.rename_axis(["σ", "procedure"])
curves.round(1)

# %% [markdown]
# The savings also depend on $n$: CERTIFY's cost grows with it, while a confident
# image's does not. For the confidence sequence this can be bounded from the runs
# above without a single further draw: its looks and boundaries do not depend on
# $n$, so an image that stopped before $n$ draws stops at the same draw with a
# longer stream, and one that reached $n$ costs at most the larger $n$. At the
# papers' $n = 10^5$ ({func}`~rsutils.book.chapters.fewer_draws.savings_bound_at`), the
# whole curve costs at least this many times fewer passes than CERTIFY with $10^5$
# draws:


# %%
def bound_row(s, name):
    return {
        f"up to {top:g}σ": fd.savings_bound_at(
            runs[s][name][0],
            [s * k for k in R_OVER_SIGMA if k <= top],
            N,
            100_000,
        )
        for top in (1.0, 2.0, 3.0)
    }


bound = pd.DataFrame(
    {
        (s, name): bound_row(s, name)
        for s in BOOK_SIGMAS
        for name in ("sequence", "label, sequence")
    }
).T.rename_axis(["σ", "procedure"])
bound.round(1)

# %% tags=["remove-cell"]
glue_all(
    bound_min=float(bound["up to 3σ"].min()),
    bound_max=float(bound["up to 3σ"].max()),
    bound_min_1=float(bound["up to 1σ"].min()),
    curve_label_3=float(
        curves.xs("label, sequence", level="procedure")[
            ("up to 3σ", "fewer by")
        ].min()
    ),
)

# %% [markdown]
# One row per model and procedure, one column per curve. A bound, not an estimate:
# each image that was still undecided at $n$ is charged the whole $10^5$ draws, and
# it is these images, with $p_A$ near a threshold, that keep the bound for the
# curve to $3\sigma$ at {glue:text}`bound_min:.1f` to {glue:text}`bound_max:.1f`
# times; the curve to $\sigma$ saves at least {glue:text}`bound_min_1:.1f` times.
# The whole curve to $3\sigma$ on the true label costs at least
# {glue:text}`curve_label_3:.1f` times fewer passes than CERTIFY at this book's $n$.

# %% [markdown]
# ## (f) What radius do $n$ draws give? Planned draws
#
# {class}`~rsutils.sequential.planned.PlannedDraws`, after the input-specific sampling of
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
plan = PlannedDraws(N, ALPHA, RADIUS_LOSS)
planned = {
    s: replay_log(smooths[s], records[s], plan) for s in BOOK_SIGMAS
}

# %% [markdown]
# Each planned log, replayed on the recorded draws, is compared with CERTIFY's log
# of the same model on the same images ({func}`~rsutils.book.chapters.fewer_draws.planned_summary`); one column per model:

# %%
curve_radii = np.linspace(0, 4, 161)
loss = RADIUS_LOSS
summary = pd.DataFrame(
    {
        s: fd.planned_summary(
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
# ### Where the points below the band go, and what could win them back
#
# Two ways to spend draws differently. Looking at the radius itself: the looks of
# section (b) on the estimation stream, stopping at the first look whose radius
# lies within the radius loss of what all $n$ draws would give at the look's
# estimate of $p_A$, with $\alpha$ spent over the looks
# ({class}`~rsutils.sequential.radius_looks.RadiusLooks`). And a smaller radius loss
# for the planned draws, which asks each image to give up less radius. All on the
# same recorded draws; per model, passes per image and how many times fewer than
# CERTIFY's, and the largest gap below the band:

# %%
variants = {
    "planned, loss 0.05": PlannedDraws(N, ALPHA, RADIUS_LOSS),
    "planned, loss 0.02": PlannedDraws(N, ALPHA, 0.02),
    "planned, loss 0.01": PlannedDraws(N, ALPHA, 0.01),
    "looks at the radius": RadiusLooks(schedule, 0.05),
}
below = "largest gap below the band (points)"


def radius_row(s, procedure):
    log = replay_log(smooths[s], records[s], procedure)
    got = fd.planned_summary(
        standard[s], log, curve_radii, sigma=s, radius_loss=0.05
    )
    names = ("passes", "fewer by", "gap below the band")
    keys = ("planned passes", "fewer by", below)
    return {name: got[key] for name, key in zip(names, keys, strict=True)}


rows = {
    (s, name): radius_row(s, procedure)
    for s in BOOK_SIGMAS
    for name, procedure in variants.items()
}
radius_task = pd.DataFrame(rows).T.rename_axis(["σ", "procedure"])
radius_task.round(1)

# %% [markdown]
# The gap below the band is measured against the same band (the radius loss of
# {glue:text}`radius_loss:.2f`) in every row, so that the rows compare. And the floor: to match CERTIFY's
# curve image by image below the band, each image CERTIFY certifies there must be
# certified at the largest radius of the curve's grid below the band that its own
# radius reaches, which costs at least {eq}`eq-draw-floor` draws with every draw in
# class A ({func}`~rsutils.book.chapters.fewer_draws.radius_floor`):

# %%
floors = pd.DataFrame(
    {
        s: fd.radius_floor(
            standard[s], curve_radii, sigma=s, radius_loss=RADIUS_LOSS
        )
        for s in BOOK_SIGMAS
    }
).rename_axis(columns="σ")
floors.round(3)

# %% [markdown]
# One column per model: CERTIFY's ceiling, the largest radius of the grid below the
# band, the floor there, the share of images CERTIFY certifies at it and the passes
# per image they alone force, the floor over all images, and the most that leaves
# for "fewer by".

# %% tags=["remove-cell"]
task = radius_task.xs("planned, loss 0.01", level="procedure")
loss_small = variants["planned, loss 0.01"].radius_loss
looked = radius_task.xs("looks at the radius", level="procedure")
glue_all(
    loss_small=loss_small,
    loss_small_fewer_min=float(task["fewer by"].min()),
    loss_small_fewer_max=float(task["fewer by"].max()),
    loss_small_gap=float(task["gap below the band"].abs().max()),
    looks_fewer_max=float(looked["fewer by"].max()),
    looks_gap=float(looked["gap below the band"].abs().max()),
    floor_most_min=float(floors.loc["most fewer by"].min()),
    floor_most_max=float(floors.loc["most fewer by"].max()),
    floor_under_three=int(
        (
            floors.loc["most fewer by"]
            < RADIUS_TARGET["radius_fewer_target"]
        ).sum()
    ),
    **RADIUS_TARGET,
    radius_met=", ".join(
        name
        for name, part in radius_task.groupby(level="procedure")
        if (part["fewer by"] >= RADIUS_TARGET["radius_fewer_target"]).all()
        and (
            part["gap below the band"]
            >= -RADIUS_TARGET["radius_gap_target"]
        ).all()
    )
    or "none of the procedures here",
)

# %% [markdown]
# The points below the band follow the radius loss, the planned draws' one setting:
# at a loss of {glue:text}`loss_small:g` the curves stay within {glue:text}`loss_small_gap:.1f` points
# below the band, at {glue:text}`loss_small_fewer_min:.1f` to
# {glue:text}`loss_small_fewer_max:.1f` times fewer passes. Looking at the radius
# itself does worse than planning (at most {glue:text}`looks_fewer_max:.1f` times
# fewer, up to {glue:text}`looks_gap:.1f` points below the band): splitting
# $\alpha$ over the looks lowers every look's radius by more than a better guess of
# $p_A$ wins back. The target of at most {glue:text}`radius_gap_target:g` point
# below the band at {glue:text}`radius_fewer_target:g` times fewer passes on every
# model is met by: {glue:text}`radius_met`.
#
# The floor does not rule the target out: it leaves
# {glue:text}`floor_most_min:.1f` to {glue:text}`floor_most_max:.1f` times to a
# procedure that matches CERTIFY's curve image by image below the band
# ({glue:text}`floor_under_three:d` of the {glue:text}`models:d` models leave less
# than the target). But it charges each image only what certifying its radius costs when
# every draw is in its class, and an image with $p_A$ a little below 1 needs many
# times that to come as close to its ceiling. Whether some procedure meets the
# target is left open here; the ones above trade passes against points through
# the radius loss.

# %% [markdown]
# ## (g) A faster forward pass, and what it certifies
#
# Both procedures save draws; the base model's forward pass sets the cost of each. The
# book's {glue:text}`profile` profile runs the base model in
# {glue:text}`mode` ({mod}`rsutils.core.inference`). A lower precision is a different
# base classifier, so every certificate in this book is exact for the model as run in
# that mode, not for its float32 twin; and since every mode calls the model on batches
# of one fixed shape ({func}`~rsutils.core.inference.fixed_rows`), that model is one
# function: a draw's class does not depend on the batch it is computed in. How
# different the two classifiers are, on
# {glue:text}`n_secondary` test images at $n = $ {glue:text}`n_secondary_draws:,d`
# ($\sigma = 0.25$):

# %%
fast_log = chapter.secondary.certify(configs[0.25], rs.Gaussian(0.25))
fp32_runs = replace(chapter.secondary, inference="fp32")
fp32_log = fp32_runs.certify(configs[0.25], rs.Gaussian(0.25))

# %% [markdown]
# The same images, seeds and draws in both modes, so any difference comes from the
# arithmetic of the forward pass
# ({func}`~rsutils.book.chapters.fewer_draws.mode_agreement`): the share of images with the
# same answer, the largest radius difference, accuracy and time per image in each
# mode, and the speed-up.

# %%
agreement = fd.mode_agreement(fp32_log, fast_log)
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
# load, while the answers and radii, computed from seeded draws, do not. A speed-up
# near 1 on a busy shared machine says little about the mode itself; the bench
# command reports the fastest of several rounds for that reason.
#
# ### Certificates for the float32 model from bfloat16 counts
#
# The fast mode's certificates are about the fast classifier. They become
# certificates for the float32 one if the two rarely disagree, and that can be
# measured on the same kind of draws. For the selected class $A$,
#
# ```{math}
# :label: eq-reference-bound
# p_A^{\mathrm{fp32}} \ge p_A^{\mathrm{fast}}
#   - \Pr\left[f_{\mathrm{fast}}(x+\varepsilon) = A,\;
#     f_{\mathrm{fp32}}(x+\varepsilon) \ne A\right],
# ```
#
# so a lower bound on the first term from CERTIFY's fast counts, less an upper bound
# on the second from $m$ draws classified by both models, is a lower bound on the
# float32 model's $p_A$; each bound spends half of $\alpha$, and the union bound keeps
# $1 - \alpha$ for the certificate
# ({class}`~rsutils.core.reference_precision.ReferenceSmooth`). The paired draws come
# from a stream of their own, so the fast counts are CERTIFY's. With no disagreement
# in $m$ pairs the second bound is still about $\ln(2/\alpha)/m$, which caps the
# radius below CERTIFY's ceiling. On the same images, for two values of $m$:

# %%
fast_runs = chapter.secondary
if fast_runs.inference not in FAST_MODES:  # a float32 profile: bf16 here
    fast_runs = replace(fast_runs, inference="bf16_channels_last")
sigma_ref, mode_ref = 0.25, fast_runs.inference
references = {
    f"fp32 from {mode_ref}, m = {m:,}": fast_runs.certify_reference(
        configs[sigma_ref], rs.Gaussian(sigma_ref), m
    )
    for m in REFERENCE_DRAWS
}
precision_radii = [sigma_ref * k for k in (0.0, 0.5, 1.0, 1.5, 2.0)]
fast_ref = fast_runs.certify(configs[sigma_ref], rs.Gaussian(sigma_ref))
precision = fd.precision_table(
    {"fp32": fp32_log, mode_ref: fast_ref, **references}, precision_radii
)
precision.round(3)

# %% [markdown]
# How often the two models' classes differed on the paired draws, pooled over the
# images, with one-sided Clopper–Pearson upper bounds at $\alpha = $
# {glue:text}`alpha:g` ({func}`~rsutils.book.chapters.fewer_draws.disagreement_table`):

# %%
fd.disagreement_table(references, ALPHA).round(3)

# %% tags=["remove-cell"]
n2 = P.secondary.n
ceilings = {
    m: fd.reference_ceiling(sigma_ref, n2, m, ALPHA)
    for m in REFERENCE_DRAWS
}
glue_all(
    reference_small=min(REFERENCE_DRAWS),
    reference_large=max(REFERENCE_DRAWS),
    ceiling_small=ceilings[min(REFERENCE_DRAWS)],
    ceiling_large=ceilings[max(REFERENCE_DRAWS)],
    ceiling_certify=sigma_ref * norm.ppf(ALPHA ** (1 / n2)),
    reference_acc_2=precision.iloc[-1, len(precision_radii) - 1],
    fp32_acc_2=precision.iloc[0, len(precision_radii) - 1],
    reference_acc_1=precision.iloc[-1, 2],
    fp32_acc_1=precision.iloc[0, 2],
)

# %% [markdown]
# With every draw in the class and none in disagreement, the certificate reaches
# {glue:text}`ceiling_small:.3f` at $m = $ {glue:text}`reference_small:,d` and
# {glue:text}`ceiling_large:.3f` at $m = $ {glue:text}`reference_large:,d`, against
# CERTIFY's {glue:text}`ceiling_certify:.3f` at the same $n$: the certified accuracy
# lost at large radii in the table is that cap, not a disagreement found. At
# $m = $ {glue:text}`reference_large:,d` the float32 certificates hold
# {glue:text}`reference_acc_1:.0f`% at $r = \sigma$ (float32 CERTIFY
# {glue:text}`fp32_acc_1:.0f`%) and {glue:text}`reference_acc_2:.0f`% at $2\sigma$
# ({glue:text}`fp32_acc_2:.0f`%). Whether that is cheaper than running float32 depends
# on how much faster the fast mode is on the machine: the $m$ float32 forward passes
# cost what they cost in float32, so the option pays when the fast mode is several
# times faster and $m$ is a small fraction of $n$ (a reasoned guess from the
# cost model; the table's times are this run's). `python -m rsutils certify ...
# --inference bf16_channels_last --reference-draws M` gives the same certificates
# from the command line.
#
# ## What holds up
#
# - Every procedure here is as sound as CERTIFY: at the worst case each stayed
#   within {glue:text}`seq_bound:.2%` at $\alpha = 0.05$, a check that catches the
#   unsound one.
# - For a deployed classifier, the spending schedule costs
#   {glue:text}`decide_min_upto2:.1f` times fewer forward passes or better up to
#   $2\sigma$, and the confidence sequence {glue:text}`sequence_gain_min:.2f` to
#   {glue:text}`sequence_gain_max:.2f` times as few as it; near the ceiling the floor
#   {eq}`eq-draw-floor` leaves little to save.
# - For evaluation on a labelled test set, the confidence sequence on the true label
#   saves at least {glue:text}`label_seq_min_1:.1f` times up to $\sigma$ and
#   {glue:text}`label_seq_min_2:.1f` up to $2\sigma$, within
#   {glue:text}`label_seq_gap:.2f` points of CERTIFY's accuracy up to $2\sigma$; it
#   meets the targets on {glue:text}`label_seq_met:d` of {glue:text}`models:d`
#   models; where it misses, its passes go to deciding the images it does not
#   certify, which Wald's bound leaves uncharged. A
#   whole curve to $3\sigma$ costs at least {glue:text}`curve_label_3:.1f` times
#   fewer passes, and at the papers' $n = 10^5$ the curve to $\sigma$ at least
#   {glue:text}`bound_min_1:.1f` times.
# - Of the published designs on the same draws, Voráček's betting sequence saves
#   about as much as ours (more in {glue:text}`betting_more:d` of
#   {glue:text}`cells_upto2:d` cells up to $2\sigma$) and loses up to
#   {glue:text}`betting_gap:.1f` points; the staged test saves least.
# - Planned draws save {glue:text}`planned_min:.1f`–{glue:text}`planned_max:.1f` times
#   at a radius loss of {glue:text}`radius_loss:.2f`; the points they lose below the
#   band follow that loss, and the floor bounds what any procedure matching CERTIFY's
#   curve could save.
# - The faster forward pass multiplies with all of them.
#
# Every saving above keeps CERTIFY's guarantee, $1 - \alpha$ per certificate; none
# of them moves the ceiling. A larger radius still needs more draws or more $\alpha$,
# which is the trade-off that {ref}`chapter-tight-radius` measured and the released
# logs of chapter 07 appear to have made.
