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
# (chapter-forward-pass)=
# # A faster forward pass, and what it certifies
#
# The procedures of {ref}`chapter-fewer-draws` save draws; the base model's forward
# pass sets the cost of each. This page asks how far a faster forward pass moves the
# certificates, and what it costs to turn its certificates into certificates of the
# float32 model:
#
# - float32 against the book's fast mode, on the same images, seeds and draws;
# - certificates for the float32 model from the fast mode's counts, with a few
#   draws classified by both models.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
from dataclasses import replace

import pandas as pd
from scipy.stats import norm

import rsutils as rs
from rsutils.book import glue_all
from rsutils.book.chapters import fewer_draws as fd
from rsutils.book.chapters.pages import open_page
from rsutils.core.reference_precision import FAST_MODES

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The page runs at the book's secondary scale, with the $\sigma = 0.25$ base model;
# the paired draws are the float32 model's extra forward passes per image.

# %% tags=["hide-input"]
chapter, S = open_page(
    "chapter-forward-pass", profile, seed=seed, progress=progress
)
P, configs = chapter.profile, chapter.base_models

# %% [markdown]
# ## float32 against the fast mode
#
# The book's {glue:text}`profile` profile runs the base model in
# {glue:text}`mode` ({mod}`rsutils.core.inference`). A lower precision is a different
# base classifier, so every certificate in this book is exact for the model as run in
# that mode, not for its float32 twin; and since every mode calls the model on batches
# of one fixed shape ({func}`~rsutils.core.inference.fixed_rows`), that model is one
# function: a draw's class does not depend on the batch it is computed in. How
# different the two classifiers are, on {glue:text}`n_secondary` test images at
# $n = $ {glue:text}`n_secondary_draws:,d`:

# %%
fast_log = chapter.secondary.certify(configs[0.25], rs.Gaussian(0.25))
fp32_runs = replace(chapter.secondary, inference="fp32")
fp32_log = fp32_runs.certify(configs[0.25], rs.Gaussian(0.25))

# %% [markdown]
# The same images, seeds and draws in both modes, so any difference comes from the
# arithmetic of the forward pass
# ({func}`~rsutils.book.chapters.fewer_draws.mode_agreement`): the share of images with
# the same answer, the largest radius difference, accuracy and time per image in each
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
# The times, and the speed-up computed from them, are the only numbers of this page
# measured with a clock: they change from run to run with the machine's load, while
# the answers and radii, computed from seeded draws, do not. A speed-up near 1 on a
# busy shared machine says little about the mode itself; the bench command reports
# the fastest of several rounds for that reason.
#
# ## Certificates for the float32 model from the fast counts
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
    for m in S.reference_draws
}
precision_radii = [sigma_ref * k for k in (0.0, 0.5, 1.0, 1.5, 2.0)]
fast_ref = fast_runs.certify(configs[sigma_ref], rs.Gaussian(sigma_ref))
precision = fd.precision_table(
    {"fp32": fp32_log, mode_ref: fast_ref, **references}, precision_radii
)
precision.round(3)

# %% [markdown]
# One row per run: certified accuracy in percent at each radius (0 to $2\sigma$),
# the ACR, seconds per image and how many times as fast as float32. How often the
# two models' classes differed on the paired draws, pooled over the images, with
# one-sided Clopper–Pearson upper bounds at $\alpha = $ {glue:text}`alpha:g`
# ({func}`~rsutils.book.chapters.fewer_draws.disagreement_table`):

# %%
fd.disagreement_table(references, S.alpha).round(3)

# %% tags=["remove-cell"]
n2 = P.secondary.n
ceilings = {
    m: fd.reference_ceiling(sigma_ref, n2, m, S.alpha)
    for m in S.reference_draws
}
glue_all(
    alpha=S.alpha,
    reference_small=min(S.reference_draws),
    reference_large=max(S.reference_draws),
    ceiling_small=ceilings[min(S.reference_draws)],
    ceiling_large=ceilings[max(S.reference_draws)],
    ceiling_certify=sigma_ref * norm.ppf(S.alpha ** (1 / n2)),
    reference_acc_2=precision.iloc[-1, len(precision_radii) - 1],
    fp32_acc_2=precision.iloc[0, len(precision_radii) - 1],
    reference_acc_1=precision.iloc[-1, 2],
    fp32_acc_1=precision.iloc[0, 2],
)

# %% [markdown]
# With every draw in the class and none in disagreement, the certificate reaches
# {glue:text}`ceiling_small:.3f` at $m = $ {glue:text}`reference_small:,d` and
# {glue:text}`ceiling_large:.3f` at $m = $ {glue:text}`reference_large:,d`, against
# CERTIFY's {glue:text}`ceiling_certify:.3f` at the same $n$: no radius above that
# cap can be certified, whatever the paired draws show. At
# $m = $ {glue:text}`reference_large:,d` the float32 certificates hold
# {glue:text}`reference_acc_1:.0f`% at $r = \sigma$ (float32 CERTIFY
# {glue:text}`fp32_acc_1:.0f`%) and {glue:text}`reference_acc_2:.0f`% at $2\sigma$
# ({glue:text}`fp32_acc_2:.0f`%). `python -m rsutils certify ...
# --inference bf16_channels_last --reference-draws M` gives the same certificates
# from the command line.
#
# ```{note}
# Whether this is cheaper than running float32 is a guess from the cost model, not
# a measurement: the $m$ float32 forward passes cost what they cost in float32, so
# the option should pay when the fast mode is several times faster and $m$ is a
# small fraction of $n$. The table's times are this run's, on this machine.
# ```
#
# ## What holds up
#
# On the same images and draws, the fast forward pass moved the radii by at most
# {glue:text}`radius_diff:.3f` from float32's, with the same answer on
# {glue:text}`same_answer:.0%` of the images, and {glue:text}`mode` certified
# {glue:text}`mode_faster:.1f` times as fast on this machine.
#
# - Its certificates are exact for the model as run in that mode; for the float32
#   model they follow from {eq}`eq-reference-bound` with $m$ paired draws, at the
#   price of a ceiling of {glue:text}`ceiling_large:.3f` at
#   $m = $ {glue:text}`reference_large:,d` against CERTIFY's
#   {glue:text}`ceiling_certify:.3f`.
# - The speed-up multiplies with every saving in draws of
#   {ref}`chapter-fewer-draws`; it is measured with a clock, the certificates are
#   not.
