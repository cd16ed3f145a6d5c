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
# (chapter-design-costs)=
# # The fewer-draws designs: their price, and how often they are wrong
#
# Two properties of each design of {ref}`chapter-fewer-draws` that need no model,
# only CERTIFY's $n$ and $\alpha$:
#
# - what it pays above the floor {eq}`eq-draw-floor` when every draw is in the
#   class, and how far a randomised test can go below that floor;
# - the exact probability that it certifies a radius falsely, at the book's
#   $\alpha$, where a false certificate is too rare to count by simulation.
#
# Both hold for the book's own designs and for the published ones
# {cite:p}`horvath2022boosting,voracek2024treatment`, re-implemented from their
# papers ({mod}`rsutils.sequential.published`).

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
from scipy.stats import norm

import rsutils as rs
from rsutils.book import glue_all, run_chose
from rsutils.book.chapters import fewer_draws as fd
from rsutils.book.chapters.pages import open_page
from rsutils.core.confidence import min_samples_for_radius
from rsutils.sequential.procedure import labelled_tests
from rsutils.sequential.voracek import VoracekBetting

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The designs at the chapter's CERTIFY settings, with the radii in units of
# $\sigma$ as there: every test of the library's registry
# ({data}`~rsutils.sequential.procedure.TESTS`), by the name the chapter gives it.

# %% tags=["hide-input"]
chapter, S = open_page(
    "chapter-design-costs", profile, seed=seed, progress=progress
)

# %% [markdown]
# ## What each design pays when every draw is in the class
#
# The floor binds every *non-randomised* test, and each design pays something above
# it even when every draw is in class A: a test split over looks pays for its
# smaller levels, a confidence sequence for looking at every batch, a staged design
# for its stage sizes. Draws to certify $r$ at $p_A = 1$, each design with at most
# $n = $ {glue:text}`n:,d` draws (0: never within them):

# %%
designs = labelled_tests(S.n, S.alpha)
p_one = fd.draws_at_p_one((1.0, 2.0, 3.0), S.alpha, designs)
p_one = p_one.rename(columns={"spending": "spending looks"})
p_one.astype(int)

# %% [markdown]
# One row per radius, in units of $\sigma$; the columns are the floor, then each
# design's first certifying look, read off its exact rule: the book's spending
# schedule ("spending looks"), the one-sided confidence sequence, the staged test of
# {cite:t}`horvath2022boosting` and the two confidence sequences of
# {cite:t}`voracek2024treatment`, and every other test of the registry
# ({func}`~rsutils.book.chapters.fewer_draws.draws_at_p_one`; the randomised test,
# whose draws there are the luck of its $u$, is discussed below). The spending
# schedule's doubling looks overshoot the floor; the sequence, which looks after
# every batch, lands between them. Which design is cheapest at this end is the
# run's to say:

# %%
spent = p_one.drop(columns="floor").replace(0, S.n + 1)  # 0: never
least = spent.min(axis=1)
reached = least <= S.n  # radii that some design certifies within n
fewest = spent["confidence sequence"] == least
run_chose(
    "the one-sided sequence needs the fewest draws at every radius that "
    "some design certifies within n",
    fewest[reached].all(),
    "The book's one-sided confidence sequence needs the fewest draws of "
    "the designs at every radius that any of them certifies.",
    "At some radius another design needs fewer draws than the book's "
    "one-sided sequence; the table shows where.",
)

# %% tags=["remove-cell"]
sequence, spending = p_one["confidence sequence"], p_one["spending looks"]
never = sequence == 0  # not within n draws
assert ((sequence >= p_one["floor"]) | never).all()
assert ((sequence <= spending) & ~never | (spending == 0)).all()
half_floor = min_samples_for_radius(1.0, S.alpha) // 2
glue_all(
    alpha=S.alpha,
    n=S.n,
    half_floor=half_floor,
    half_floor_chance=min(1.0, S.alpha / norm.cdf(1.0) ** half_floor),
)

# %% [markdown]
# A *randomised* test can go below the floor: randomised Clopper–Pearson with $m$
# draws all in class A certifies $p_A > p_0$ whenever its uniform $u$ is at most
# $\alpha / p_0^m$. With {glue:text}`half_floor:,d` draws, half the floor at
# $\sigma$, it certifies $\sigma$ with probability
# {glue:text}`half_floor_chance:.2%`: rarely, and only by the luck of $u$, which
# must be drawn before the counts and stated in the certificate.
#
# ## The probability of a false certificate, exactly, at the book's level
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
# ({func}`~rsutils.sequential.coverage.certify_probability`). The thresholds are read
# off each test's own decision functions, and the library's tests check them against
# the procedure itself at every look, and the whole computation against brute-force
# enumeration and the Monte Carlo rates of {ref}`chapter-fewer-draws`. A randomised
# test is a mixture of such rules over the intervals of its $u$ on which they are
# fixed. Raising $p_A$ only makes a test certify sooner, so $p_A = p_0$ is the worst
# case of $p_A \le p_0$.
#
# Per test of the registry at $\alpha = $ {glue:text}`alpha:g` and $n = $
# {glue:text}`n:,d`, the exact probability that it certifies falsely at each
# decision radius, in units of $\alpha$; the last two rows are Voráček's betting
# test at the threshold of his released code (below) and, as a control, every look
# tested at the full $\alpha$:

# %%
released = "Voráček, betting at 1/(2α)"
control = "every look at full α"
exact_tests = {
    **designs,
    # the betting test's wealth threshold 1/α' is 1/(2α) at α' = 2α
    released: VoracekBetting(S.n, 2 * S.alpha),
    control: rs.LookSchedule(
        S.schedule.looks, (S.alpha,) * len(S.schedule.looks)
    ),
}
exact = fd.exact_coverage_table(exact_tests, S.r_over_sigma, S.alpha)
exact.round(3)

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
# One row per test, one column per radius in units of $\sigma$ (0 where $n$ draws
# cannot certify that radius at all); at most 1 is the guarantee. Every test of the
# chapter stays within it (the cell above checks it), the highest being
# {glue:text}`exact_worst_name` at {glue:text}`exact_worst:.3f`: the tests lose part
# of $\alpha$ to the discreteness of the counts and to the overlap of their looks.
# Testing every look at the full $\alpha$ reaches {glue:text}`exact_naive:.2f` times
# $\alpha$.
#
# Voráček's released code stops his betting test once the wealth exceeds
# $1/(2\alpha)$ (the threshold of its `thresholds.py`), where the book, as his
# Algorithm 2, waits for $1/\alpha$
# ({func}`~rsutils.sequential.voracek.voracek_betting_test`). The higher bar is
# crossed no sooner on any stream of draws, so the book's version of his design
# reads at least as many draws as the same test at $1/(2\alpha)$, and certifies
# falsely no more often (checked above): at most {glue:text}`betting_exact:.3f`
# times $\alpha$ against {glue:text}`betting_half_exact:.3f` at $1/(2\alpha)$, both
# within $\alpha$. The chapter's comparison therefore charges his design at least
# the draws his released threshold would spend: if anything it understates that
# design's savings.
#
# ## What holds up
#
# Every design of {ref}`chapter-fewer-draws`, the book's and the published ones,
# certifies falsely with probability at most $\alpha$ at the book's $\alpha$,
# computed exactly: the highest is {glue:text}`exact_worst:.3f` times $\alpha$,
# against {glue:text}`exact_naive:.2f` for the unsound control.
#
# - When every draw is in the class, each design pays above the floor
#   {eq}`eq-draw-floor`; the table above gives each one's draws.
# - Only a randomised test goes below the floor, by the luck of its $u$: half the
#   floor certifies $\sigma$ with probability
#   {glue:text}`half_floor_chance:.2%`.
# - Voráček's betting test at Algorithm 2's threshold, as the book runs it, is the
#   more conservative of his two thresholds.
