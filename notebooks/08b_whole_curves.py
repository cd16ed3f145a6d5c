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
# (chapter-whole-curves)=
# # Fewer draws for whole curves and for the radius
#
# {ref}`chapter-fewer-draws` prices one question at a time: is the image certified
# at this radius? This page asks what the same procedures save on the questions an
# evaluation actually asks, on the same recorded draws of CERTIFY:
#
# - the passes per image at each radius, and the most any test could save there;
# - the cost of a whole certified-accuracy curve, at the book's $n$ and at the
#   papers' $n = 10^5$;
# - the radius itself: planned draws with a smaller radius loss, looks at the
#   radius, and the floor that bounds any procedure matching CERTIFY's curve.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import rsutils as rs
from rsutils.book import glue_all, plot_curves, run_chose
from rsutils.book.chapters import fewer_draws as fd
from rsutils.book.chapters.pages import open_page
from rsutils.book.profiles import BOOK_SIGMAS
from rsutils.sequential import (
    Decide,
    PlannedDraws,
    RadiusLooks,
    decisions_long,
)
from rsutils.sequential.runs import replay_log

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The chapter's settings. Its CERTIFY logs and records are read from the cache that
# {ref}`chapter-tight-radius` filled; the replays are recomputed here, in seconds.

# %% tags=["hide-input"]
chapter, S = open_page(
    "chapter-whole-curves", profile, seed=seed, progress=progress
)
configs = chapter.base_models

# %% [markdown]
# The CERTIFY logs of the chapter's three models, the records of their draws, and
# the smoothed classifiers the replays read the records through. Reading them from
# the cache only means that this page never runs CERTIFY itself: a missing log is an
# error that names the chapter to run first.

# %%
cached = chapter.main.cached()  # chapter 01's logs, or an error naming it
standard, records, smooths = {}, {}, {}
for s in BOOK_SIGMAS:
    standard[s] = cached.certify(configs[s], rs.Gaussian(s))
    records[s] = cached.record(configs[s], rs.Gaussian(s))
    smooths[s] = cached.smooth(configs[s], rs.Gaussian(s))

# %% [markdown]
# The procedures of the chapter, each replayed on the records at the chapter's
# decision radii: the two that select a class, the three that test the true label,
# and the three published designs. The chapter replays the same procedures on the
# same records; a replay reads no model, only the stored classes of the draws, so
# repeating it here costs seconds, and the two pages cannot disagree, since a replay
# is a function of the record and the procedure alone. One replay per image answers
# all seven radii; the "forward passes" of each answer are the draws it alone would
# have read.

# %%
radii = {s: [s * k for k in S.r_over_sigma] for s in BOOK_SIGMAS}
tests = {
    "spending": (S.schedule, False),
    "sequence": (S.anytime, False),
    "label, spending": (S.schedule, True),
    "label, sequence": (S.anytime, True),
    "label, randomised": (S.randomised, True),
    **{
        name: (test, True)
        for name, test in fd.published_tests(S.n, S.alpha).items()
    },
}


def replayed(s, test, true_label):
    procedure = Decide(test, tuple(radii[s]), true_label=true_label)
    return replay_log(smooths[s], records[s], procedure)


logs = {
    s: {k: replayed(s, *t) for k, t in tests.items()} for s in BOOK_SIGMAS
}
labelled = list(tests)[2:]  # the procedures that test the true label

# %% [markdown]
# ## Passes per image at each radius
#
# {numref}`fig-label-passes` draws the "fewer by" columns of the chapter's tables as
# passes per image, for the procedures that test the true label.

# %% tags=["hide-input"]
size = {"figsize": (12, 4.2), "sharey": True}
fig, axes = plt.subplots(1, len(BOOK_SIGMAS), **size)
labels = {"xlabel": "r/σ", "ylabel": "forward passes per image"}
for ax, s in zip(np.atleast_1d(axes), BOOK_SIGMAS, strict=True):
    cost = {
        k: decisions_long(logs[s][k], radii[s])
        .groupby("radius")["forward_passes"]
        .mean()
        for k in labelled
    }
    plot_curves(cost, S.r_over_sigma, ax=ax, **labels)
    ax.axhline(S.certify_passes, color="grey", linestyle=":")
    ax.set(yscale="log", title=f"σ = {s}")
    if ax is not axes[0]:
        ax.get_legend().remove()
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
# ### The most any test could save
#
# An image whose label CERTIFY certifies at $r$ must be certified by a test that
# matches CERTIFY's accuracy, and Wald's inequality bounds the mean draws of any
# test that does: $\ln(1/\alpha)$ over the information one draw brings,
# $\mathrm{KL}(p \,\|\, p_0)$ ({func}`~rsutils.core.confidence.least_expected_draws`;
# at $p = 1$ the floor {eq}`eq-draw-floor`). Charging each certified image that
# bound, with $p$ its share of label draws in the record, and every other image
# nothing, gives the most any test could save
# ({func}`~rsutils.book.chapters.fewer_draws.best_possible_savings`). Per model and
# radius, that bound beside what the book's confidence sequence on the true label
# saved:

# %%
sequence = {
    s: decisions_long(logs[s]["label, sequence"], radii[s])
    for s in BOOK_SIGMAS
}


def beside(s):
    best = fd.best_possible_savings(
        standard[s], records[s], S.r_over_sigma, s, S.alpha
    )
    got = fd.decision_table(standard[s], sequence[s], s, S.alpha)
    got = got.set_index("r/σ")["fewer by"].rename("sequence")
    return pd.concat([best, got.set_axis(best.index)], axis=1)


best = pd.concat({s: beside(s) for s in BOOK_SIGMAS}, axis=1)
best.round(1)

# %% tags=["remove-cell"]
bound = best.xs("best possible", axis=1, level=1)
saved = best.xs("sequence", axis=1, level=1).stack()  # by (r/σ, σ)
near = saved.index.get_level_values(0) <= 1
worst_r, worst_sigma = saved[near].idxmin()
glue_all(
    best_min_1=float(bound[bound.index <= 1].min().min()),
    best_min_2=float(bound[bound.index <= 2].min().min()),
    worst_sigma=worst_sigma,
    worst_r=worst_r,
    uncertified=fd.uncertified_share(
        standard[worst_sigma], sequence[worst_sigma], worst_r * worst_sigma
    ),
)

# %% [markdown]
# One column pair per model: the bound, and the sequence's "fewer by" at the same
# radius. A test that knew each image's $p$ could come near the bound: Wald's
# sequential probability ratio test of $p_0$ against that $p$ attains it up to the
# overshoot of its last draw. The confidence sequence does not know $p$. Its mixture
# over $\theta$ in {eq}`eq-mixture-martingale` pays for learning it, about
# $\tfrac12 \ln t$ of evidence after $t$ draws, and it runs at half of $\alpha$;
# both costs are small against $\ln(1/\alpha)$ for a confident image, and grow in
# relative terms as $p$ nears $p_0$, where a draw brings little information.
#
# The bound leaves room for at least {glue:text}`best_min_1:.1f` times up to
# $\sigma$ and {glue:text}`best_min_2:.1f` up to $2\sigma$ on every model; the
# sequence's column beside it shows how much of that room a design uses. The bound
# charges nothing for the images a test does not certify, and a test must still
# decide them: at the model and radius where the sequence saves least up to
# $\sigma$ ($\sigma = $
# {glue:text}`worst_sigma:g`, $r/\sigma = $ {glue:text}`worst_r:g`),
# {glue:text}`uncertified:.0%` of its passes are spent on images that CERTIFY does
# not certify there either. Telling them apart from the certifiable ones near the
# threshold is a cost no design here avoids; a test that gave up on them sooner
# would also lose some of the images it should certify (see the note).
#
# ```{note}
# Two parts of this section are estimates, not measurements. The bound's $p$ is each
# image's share of label draws in the record, an estimate, and images near the
# threshold, where the estimate matters most, dominate it. And that a test which
# gave up on the uncertified images sooner would lose some of the images it should
# certify is a reasoned guess from where the passes go, not a run of such a test.
# ```
#
# ## The cost of a whole curve
#
# A certified-accuracy curve needs the answer at every radius of its grid; one pass
# over an image's stream answers them all, so an image costs its selection draws
# plus the most draws any radius of the grid took
# ({func}`~rsutils.book.chapters.fewer_draws.curve_passes`). Forward passes per
# image for the curve up to $\sigma$, $2\sigma$ and $3\sigma$, and how many times
# fewer than CERTIFY's:


# %%
def curve_row(s, log):
    row = {}
    for top in (1.0, 2.0, 3.0):
        grid = [s * k for k in S.r_over_sigma if k <= top]
        passes = fd.curve_passes(log, grid)
        row[(f"up to {top:g}σ", "passes")] = passes
        row[(f"up to {top:g}σ", "fewer by")] = S.certify_passes / passes
    return row


every = [(s, k) for s in BOOK_SIGMAS for k in tests]
curves = pd.DataFrame({(s, k): curve_row(s, logs[s][k]) for s, k in every})
curves = curves.T.rename_axis(["σ", "procedure"])
curves.round(1)

# %% [markdown]
# One row per model and procedure. An image's cost for a curve is at least its cost
# at any radius of the curve's grid, so a curve's "fewer by" is at most the least
# of the chapter's per-radius factors over that grid; compare a row's "up to 1σ"
# with the chapter's tables at $r \le \sigma$. The procedures that select a class
# pay their $n_0$ selection draws once per image here, as there. The curve to
# $3\sigma$ costs each image the draws of its hardest radius, and the images
# certified near the ceiling need nearly all $n$ whichever radius asked.
#
# The savings also depend on $n$: CERTIFY's cost grows with it, while a confident
# image's does not. For the confidence sequence this can be bounded from the runs
# above without a single further draw: its looks and boundaries do not depend on
# $n$, so an image that stopped before $n$ draws stops at the same draw with a
# longer stream, and one that reached $n$ costs at most the larger $n$. At the
# papers' $n = 10^5$ ({func}`~rsutils.book.chapters.fewer_draws.savings_bound_at`),
# the whole curve costs at least this many times fewer passes than CERTIFY with
# $10^5$ draws:


# %%
def bound_row(log, s):
    grids = {
        t: [s * k for k in S.r_over_sigma if k <= t] for t in (1, 2, 3)
    }
    return {
        f"up to {t}σ": fd.savings_bound_at(log, grid, S.n, 100_000)
        for t, grid in grids.items()
    }


pairs = [
    (s, k) for s in BOOK_SIGMAS for k in ("sequence", "label, sequence")
]
at_large_n = pd.DataFrame(
    {(s, k): bound_row(logs[s][k], s) for s, k in pairs}
)
at_large_n = at_large_n.T.rename_axis(["σ", "procedure"])
at_large_n.round(1)

# %% tags=["remove-cell"]
label_curves = curves.xs("label, sequence", level="procedure")
glue_all(
    bound_min=float(at_large_n["up to 3σ"].min()),
    bound_max=float(at_large_n["up to 3σ"].max()),
    bound_min_1=float(at_large_n["up to 1σ"].min()),
    curve_label_1_min=float(label_curves[("up to 1σ", "fewer by")].min()),
    curve_label_3_max=float(label_curves[("up to 3σ", "fewer by")].max()),
)

# %% [markdown]
# One row per model and procedure, one column per curve. Only the book's confidence
# sequences appear: the argument needs looks and boundaries that do not depend on
# $n$, and the spending schedule's looks are placed by $n$, so its runs at the
# book's $n$ do not say where it would stop with $10^5$ draws. The table is a
# bound, not an estimate: each image that was still undecided at $n$ is charged
# the whole $10^5$ draws, and
# it is these images, with $p_A$ near a threshold, that keep the bound for the
# curve to $3\sigma$ at {glue:text}`bound_min:.1f` to {glue:text}`bound_max:.1f`
# times; the curve to $\sigma$ saves at least {glue:text}`bound_min_1:.1f` times.
#
# ## What radius do fewer draws give?
#
# The chapter's planned draws lose a band of width about the radius loss just under
# CERTIFY's ceiling. Two ways to spend draws differently: a smaller radius loss,
# which asks each image to give up less radius, and looking at the radius itself,
# the looks of the chapter's spending schedule on the estimation stream, stopping
# at the first look whose radius lies within the radius loss of what all $n$ draws
# would give at the look's estimate of $p_A$, with $\alpha$ spent over the looks
# ({class}`~rsutils.sequential.radius_looks.RadiusLooks`). All on the same recorded
# draws; per model, passes per image, how many times fewer than CERTIFY's, and the
# largest gap below the band of the chapter's radius loss:

# %%
variants = {
    "planned, loss 0.05": PlannedDraws(S.n, S.alpha, S.radius_loss),
    "planned, loss 0.02": PlannedDraws(S.n, S.alpha, 0.02),
    "planned, loss 0.01": PlannedDraws(S.n, S.alpha, 0.01),
    "looks at the radius": RadiusLooks(S.schedule, S.radius_loss),
}
curve_radii = np.linspace(0, 4, 161)
below = "largest gap below the band (points)"


def radius_row(s, procedure):
    log = replay_log(smooths[s], records[s], procedure)
    got = fd.planned_summary(
        standard[s], log, curve_radii, sigma=s, radius_loss=S.radius_loss
    )
    keys = ("planned passes", "fewer by", below)
    names = ("passes", "fewer by", "gap below the band")
    return {name: got[key] for name, key in zip(names, keys, strict=True)}


every = [(s, k) for s in BOOK_SIGMAS for k in variants]
rows = {(s, k): radius_row(s, variants[k]) for s, k in every}
radius_task = pd.DataFrame(rows).T.rename_axis(["σ", "procedure"])
radius_task.round(1)

# %% [markdown]
# One row per model and procedure. "Passes" is the mean per image, selection draws
# included; a smaller radius loss plans more estimation draws for every image whose
# selection draws say its radius can still grow, so its passes rise as its gap
# narrows. The gap below the band is measured against the same band (the radius loss
# of {glue:text}`radius_loss:.2f`) in every row, so that the rows compare. Whether
# looking at the radius beats planning is the run's to say:

# %%
by = radius_task.unstack("procedure")
looks_saved = by[("fewer by", "looks at the radius")]
planned_saved = by[("fewer by", "planned, loss 0.05")]
run_chose(
    "on every model, looks at the radius save fewer passes than planned "
    "draws at the same radius loss",
    (looks_saved < planned_saved).all(),
    "Looking at the radius does worse than planning on every model: "
    "splitting α over the looks lowers every look's radius by more than a "
    "better guess of p_A wins back.",
    "Looking at the radius saves at least as many passes as planning on "
    "some model: a better guess of p_A there wins back what splitting α "
    "costs.",
)

# %% [markdown]
# And the floor: to match CERTIFY's curve image by image below the band, each image
# CERTIFY certifies there must be certified at the largest radius of the curve's
# grid below the band that its own radius reaches, which costs at least
# {eq}`eq-draw-floor` draws with every draw in class A
# ({func}`~rsutils.book.chapters.fewer_draws.radius_floor`):

# %%
floors = pd.DataFrame(
    {
        s: fd.radius_floor(
            standard[s], curve_radii, sigma=s, radius_loss=S.radius_loss
        )
        for s in BOOK_SIGMAS
    }
).rename_axis(columns="σ")
floors.round(3)

# %% tags=["remove-cell"]
small = radius_task.xs("planned, loss 0.01", level="procedure")
looked = radius_task.xs("looks at the radius", level="procedure")
glue_all(
    radius_loss=S.radius_loss,
    loss_small=variants["planned, loss 0.01"].radius_loss,
    loss_small_fewer_min=float(small["fewer by"].min()),
    loss_small_fewer_max=float(small["fewer by"].max()),
    loss_small_gap=float(small["gap below the band"].abs().max()),
    looks_fewer_max=float(looked["fewer by"].max()),
    looks_gap=float(looked["gap below the band"].abs().max()),
    floor_most_min=float(floors.loc["most fewer by"].min()),
    floor_most_max=float(floors.loc["most fewer by"].max()),
)

# %% [markdown]
# One column per model: CERTIFY's ceiling, the largest radius of the grid below the
# band, the floor there, the share of images CERTIFY certifies at it and the passes
# per image they alone force, the floor over all images, and the most that leaves
# for "fewer by". The images certified at the top of the grid carry most of the
# floor, and their share is what sets it apart between the models: a model with
# few images certified near its ceiling leaves a procedure more room.
#
# At a loss of {glue:text}`loss_small:g` the curves stay within
# {glue:text}`loss_small_gap:.1f` points below the band, at
# {glue:text}`loss_small_fewer_min:.1f` to {glue:text}`loss_small_fewer_max:.1f`
# times fewer passes; looking at the radius saves at most
# {glue:text}`looks_fewer_max:.1f` times and falls up to
# {glue:text}`looks_gap:.1f` points below the band. The floor leaves
# {glue:text}`floor_most_min:.1f` to {glue:text}`floor_most_max:.1f` times to a
# procedure that matches CERTIFY's curve image by image below the band. It is a
# bound, not a procedure: it charges each image only what certifying its radius
# costs when every draw is in its class, and an image with $p_A$ a little below 1
# needs many times that to come as close to its ceiling. The procedures here sit
# between the two, trading passes against points through the radius loss.
#
# ## What holds up
#
# A whole curve never saves more than the single radii of its grid: on the true
# label, the book's confidence sequence spends at least
# {glue:text}`curve_label_1_min:.1f` times fewer passes than CERTIFY for the curve
# to $\sigma$, and at most {glue:text}`curve_label_3_max:.1f` times fewer for the
# curve to $3\sigma$, on every model.
#
# - The images certified near the ceiling set the price of a curve: each needs
#   nearly all $n$ draws whichever radius asked. At the papers' $n = 10^5$ the
#   curve to $3\sigma$ would save at least {glue:text}`bound_min:.1f` times.
# - Wald's bound leaves room for at least {glue:text}`best_min_1:.1f` times at each
#   radius up to $\sigma$; where the sequence saves least,
#   {glue:text}`uncertified:.0%` of its passes decide images that CERTIFY does not
#   certify either, which the bound does not charge.
# - For the radius, a smaller radius loss trades passes for points: at
#   {glue:text}`loss_small:g`, {glue:text}`loss_small_fewer_min:.1f` to
#   {glue:text}`loss_small_fewer_max:.1f` times fewer passes within
#   {glue:text}`loss_small_gap:.1f` points below the band, against a floor that
#   leaves at most {glue:text}`floor_most_min:.1f` to
#   {glue:text}`floor_most_max:.1f` times.
# - Looking at the radius after each look saves at most
#   {glue:text}`looks_fewer_max:.1f` times on these models and falls up to
#   {glue:text}`looks_gap:.1f` points below the band; the $\alpha$ it splits over
#   its looks lowers each look's radius, a cost the planned draws do not pay.
