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
# (chapter-deployed-soundness)=
# # The deployed classifier: do UCAN's certificates hold?
#
# UCAN's certification-wise generator {cite:p}`ucan2025` computes the noise's offset
# $\mu(x)$ and scales $\sigma(x)$ from the input, and its Theorem 7 certifies the
# classifier $g_x$ that smooths with the noise computed at $x$. Theorem 7 is a
# statement about one input at a time. A user who queries the classifier at
# $x + \delta$ gets noise computed at $x + \delta$, not at $x$, so the certificate
# issued at $x$ describes a classifier that the user never runs.
# {ref}`chapter-memory-soundness` met the same gap for a data-dependent noise level; here the
# noise's whole shape moves with the input.
#
# This chapter asks whether the certification-wise certificates of
# {ref}`chapter-npg-training` hold for the classifier a user would deploy, which recomputes
# $\mu$ and $\sigma$ at each input it receives, and what a certificate sound for that
# classifier can claim:
#
# - how much of the certification-wise decision the offset $\mu$ makes;
# - a search, whose power is measured, for points of the certified regions where the
#   deployed classifier answers another class;
# - the same search through an anisotropic certificate memory;
# - a radius that provably holds for the deployed classifier;
# - what holds up.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import numpy as np
import pandas as pd
import torch

import rsutils as rs
from rsutils.anisotropic.soundness import leakage, local, sound
from rsutils.anisotropic.soundness import lipschitz as lip
from rsutils.anisotropic.soundness.audit import summarize_audits
from rsutils.anisotropic.soundness.deployed import (
    admit_log,
    query_audit_points,
)
from rsutils.book import glue_all, glue_table, run_chose
from rsutils.book.chapters import npg_per_model as by_model
from rsutils.book.chapters.pages import open_page
from rsutils.book.replicate_logs import median_scale, npg_replicates
from rsutils.book.trained import trained_npg
from rsutils.core.streams import derived_seed
from rsutils.memory import anisotropic_conflicting_pairs

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The classifiers and generators are {ref}`chapter-npg-training`'s, read from the cache with
# their certificates ({func}`~rsutils.book.replicate_logs.npg_replicates` with
# `cached=True`: run that chapter first). The run-at table adds the audit's scale:
# how many certificates it searches and how many fresh draws verify each point it
# finds.

# %% tags=["hide-input"]
chapter, S = open_page(
    "chapter-deployed-soundness", profile, seed=seed, progress=progress
)
P, test, runs = chapter.profile, chapter.test, chapter.secondary
trained = {
    name: trained_npg(config, device=chapter.device, progress=progress)
    for name, config in S.methods.items()
}
images = test.images[runs.indices]
first = npg_replicates(chapter, cached=True)[0]
logs = {name: first[name] for name in S.methods}

# %% [markdown]
# (chapter-deployed-soundness-offset)=
# ## How much does the offset decide?
#
# The one part of the certification-wise noise that the other methods lack is the
# input-dependent offset, which may carry up to $\lambda =$ {glue:text}`lam:g` per
# pixel: as large as the noise itself, large enough to write a faint picture into
# the input. If $\mu(x)$ carried the class, a classifier could read it there, and
# the certificate would then certify the generator's guess as much as the image.
# Two probes measure what it carries. The **swap** classifies
# $x_i + \mu(x_j) + \sigma(x_j)\odot\lambda\varepsilon$ for pairs of test images of
# different classes ({func}`~rsutils.anisotropic.soundness.leakage.mu_swap_votes`):
# does the offset alone move the vote? The **ablation** certifies with
# $\mu \equiv 0$ and the same $\sigma$: how much of the certified accuracy survives
# without it?

# %%
cw_model, cw_generator = trained["certification-wise"]
labels = test.labels[runs.indices]
pairs = leakage.different_class_pairs(labels, len(runs.indices), seed=seed)
cw, votes = (cw_model, cw_generator), {"draws": 100, "seed": seed}
swap = leakage.mu_swap_votes(*cw, images, labels, pairs, S.lam, **votes)

# %% [markdown]
# `swap` holds, for each pair, the share of votes for each image's class. The
# ablation certifies the same images again with the offset set to zero and the same
# $\sigma(x)$, so the two rows below differ only by $\mu$:

# %%
without_mu = runs.certify_generated(
    S.methods["certification-wise"], without_mu=True
)
with_and_without = {
    "with μ(x)": logs["certification-wise"],
    "μ ≡ 0": without_mu,
}
ablation = pd.DataFrame(
    {
        name: [
            rs.certified_accuracy(log, [0.0])[0],
            rs.average_certified_radius(log),
        ]
        for name, log in with_and_without.items()
    },
    index=["certified accuracy at r = 0", "ACR"],
).T
ablation.round(3)

# %% tags=["remove-cell"]
glue_all(
    lam=S.lam,
    n_pairs=len(swap),
    offset_votes=float(swap["offset"].mean()),
    own_votes=float(swap["own"].mean()),
)
rows = {"with μ(x)": "with_mu", "μ ≡ 0": "without_mu"}
columns = {"certified accuracy at r = 0": "acc", "ACR": "acr"}
glue_table(ablation, "{column}_{row}", rows=rows, columns=columns)

# %% [markdown]
# Without its offset the classifier's ACR goes from
# {glue:text}`acr_with_mu:.3f` to {glue:text}`acr_without_mu:.3f`. A share of
# votes for the donor's class means little without references. Three more probes
# give them, on the same images
# ({func}`~rsutils.anisotropic.soundness.leakage.label_channel_votes`): the image
# with its **own** offset (the smoothed classifier itself), the image with the
# offset of another image **of the same class** (any loss against the own offset is
# the cost of a foreign offset as such), and the offset **without the image**: the
# input replaced by a constant background $c$, the mean pixel of the training set
# ($c =$ {glue:text}`background:.3f`), so that the classifier sees
# $c + \mu(x) + \sigma(x)\odot\lambda\varepsilon$. The generator still reads $x$;
# only the classifier is denied it. The background with no offset is this
# classifier's chance level: near $1/K =$ {glue:text}`chance:.2f` when the classes
# are balanced. Each row names the offset the classifier sees and the class whose
# votes it counts, with the mean share over images and a 95% bootstrap interval
# ({func}`~rsutils.anisotropic.soundness.leakage.vote_share_table`).

# %%
train_mean = rs.load_dataset(test.name, "train").images.mean()
votes["background"] = float(train_mean)
at = (test.images, test.labels, runs.indices, S.lam)
channel = leakage.label_channel_votes(*cw, *at, **votes)
shares = {
    "own μ(x_i): for y_i": channel["own"],
    "same-class μ(x_j): for y_i": channel["same_class"],
    "other-class μ(x_j): for y_j": swap["offset"],
    "other-class μ(x_j): for y_i": swap["own"],
    "μ(x_i) on c, no image: for y_i": channel["mu_only"],
    "c alone, no μ: for y_i": channel["background_only"],
}
label_channel = leakage.vote_share_table(shares, seed=seed)
label_channel.round(3)

# %% tags=["remove-cell"]
short = ["own", "same", "swap", "swap_own", "mu_only", "blank"]
probes = dict(zip(shares, short, strict=True))
glue_table(label_channel, "lc_{row}_{column}", rows=probes)
glue_all(background=float(train_mean), chance=1 / test.num_classes)

# %% [markdown]
# How to read it: the gap between the own and the same-class rows is what a foreign
# offset costs whatever its class; the other-class rows, measured against it, are
# what the donor's class adds; and a μ-only row above the background's is the label
# written into the offset, read by the classifier with no image to look at. The row
# that matters is that one: the offset alone draws {glue:text}`lc_mu_only_mean:.1%`
# of the votes to the image's class, the background alone
# {glue:text}`lc_blank_mean:.1%`.

# %%
mu_only = label_channel.loc["μ(x_i) on c, no image: for y_i"]
blank = label_channel.loc["c alone, no μ: for y_i"]
run_chose(
    "the μ-only interval lies wholly above the background's",
    bool(mu_only["low"] > blank["high"]),
    "μ is a label channel: the classifier reads the image's class off the "
    "offset alone, with no image to look at.",
    "These images do not show the offset alone carrying the class beyond "
    "the background's chance level.",
)

# %% [markdown]
# These rates are one trained model's. The same probes on the certification-wise
# classifier of every replicate model, on the same images, pairs and draws
# ({func}`~rsutils.book.chapters.npg_per_model.offset_probes_by_replicate`), with the
# mean, lowest and highest over the models:

# %%
probes_by_model = by_model.offset_probes_by_replicate(
    chapter, background=float(train_mean)
)
by_model.with_spread(probes_by_model).round(3).T

# %% [markdown]
# On every one of the {glue:text}`n_probe_models` models the offset alone on a blank
# image draws at least {glue:text}`mu_only_low:.1%` of the votes to the image's
# class, against at most {glue:text}`blank_high:.1%` for the blank alone.

# %% tags=["remove-cell"]
spread_of = probes_by_model.agg(["min", "max", "mean"])
columns = dict(enumerate(probes_by_model.columns))
glue_all(
    n_probe_models=len(probes_by_model),
    swap_low=float(spread_of.loc["min", columns[0]]),
    swap_high=float(spread_of.loc["max", columns[0]]),
    mu_only_low=float(spread_of.loc["min", columns[1]]),
    mu_only_high=float(spread_of.loc["max", columns[1]]),
    blank_low=float(spread_of.loc["min", columns[2]]),
    blank_high=float(spread_of.loc["max", columns[2]]),
    probe_acc_with=float(spread_of.loc["mean", columns[3]]),
    probe_acc_without=float(spread_of.loc["mean", columns[4]]),
)

# %% [markdown]
# Why a label channel matters, whatever its size here. Theorem 7 holds for *any*
# offset $\mu(x)$: it never asks what $\mu$ encodes. Take a classifier $h$ with no
# robustness at all and a generator that writes $h(x)$ into the offset, say a bright
# corner whose position codes the class, and a base classifier $f$ trained to read
# the corner. Under noise $f$ still reads it, so CERTIFY at $x$ returns $h(x)$ with
# $p_A$ near one and a large $R$, and Theorem 7 is right: the classifier $g_x$ with
# $\mu$ frozen at $\mu(x)$ keeps $h(x)$ on the whole region. But the classifier a
# user runs recomputes $\mu(x + \delta)$, which codes $h(x + \delta)$ and changes
# as soon as $h$ does, at perturbations far below $R$. The certificate then vouches
# for the encoding, not for the robustness of anything deployed: an input-dependent
# offset that carries the label can make a non-robust network look certified. The
# audit asks the sharper question of whether the certificates still hold once the
# generator sees the perturbed input.
#
# (chapter-deployed-soundness-audit)=
# ## Soundness audit: do the certificates hold?
#
# A certification-wise certificate at $x$ is computed with $\mu(x)$ and $\sigma(x)$.
# Theorem 7 covers the classifier $g_x$ that keeps them at every $x + \delta$. A
# deployed system does not know $x$: at the input it receives, $x + \delta$, it
# computes $\mu(x+\delta)$ and $\sigma(x+\delta)$, a different smoothed classifier
# $G$. For the first {glue:text}`n_audited` correctly certified test images we search
# the claimed region $\{\|\delta\oslash\sigma(x)\|_2 < R\}$, inside the pixel range
# $[0, 1]$, for points where $G$ answers another class
# ({func}`~rsutils.anisotropic.soundness.audit.runs.audit_certificate`):
#
# - two random points at 0.99 of the boundary;
# - the ends of two {glue:text}`audit_steps`-step projected gradient ascents through
#   the classifier **and** both generators, one on the noisy cross-entropy and one
#   on the noisy logit margin, the mean over draws of $\max_{k\ne c} z_k - z_c$
#   ({func}`~rsutils.anisotropic.soundness.audit.attack.attack_objective`). The
#   second is there because the first can stall: where the classifier is very
#   sure, the softmax rounds to one-hot and the cross-entropy's gradient underflows
#   to zero, while a difference of logits keeps its slope.
#
# A point counts as a contradiction only when {glue:text}`audit_n` fresh draws bound
# another class's probability above $\tfrac12$ (Clopper–Pearson, level $\alpha$
# shared by the points of an image), never from a single vote. Two controls must show
# none: the same search against $g_x$ (parameters frozen at $x$, Theorem 7's object)
# and against the isotropic model inside its own certificates. Against $g_x$ the
# cross-entropy ascent alone runs: Theorem 7 guarantees that $g_x$ keeps its class on
# the region, so a stronger search there could only test the verification, whose
# error the level $\alpha$ already bounds.
#
# A zero from those controls means something only if the search can find
# contradictions where they exist. The **positive control** runs the same search on
# the isotropic model in the shell $1.5R \le \|\delta\oslash\sigma\|_2 \le 2R$
# just outside each certificate (AuditSettings' `region_scale`): boundary points at
# 0.99 of $2R$, and ascents kept in the shell by projecting onto the ball of $2R$
# and pushing back out any step that falls inside $1.5R$. Contradictions may exist
# there, since the certificate only promises the class up to $R$; they do exist when
# the smoothed classifier's boundary comes within $2R$, as for a linear classifier
# whose $R$ is tight (the case the library's tests construct), which a network need
# not be.

# %%
audit = rs.AuditSettings(
    alpha=P.certify.alpha,
    n_verify=S.audit_scale.n_verify,
    boundary=2,
    steps=S.audit_scale.steps,
    draws=S.audit_scale.draws,
    seed=seed,
    input_range=(0.0, 1.0),
    losses=("ce", "margin"),
)
cw_config, iso_config = (
    S.methods["certification-wise"],
    S.methods["isotropic"],
)
shell = audit.replace(region_scale=(1.5, 2.0))
ce_only = audit.replace(losses=("ce",))
searched = {  # (generator pair, settings, frozen parameters?)
    "certification-wise, deployed G": (cw_config, audit, False),
    "certification-wise, frozen g_x": (cw_config, ce_only, True),
    "isotropic control": (iso_config, audit, False),
    "isotropic, 1.5R to 2R (positive control)": (iso_config, shell, False),
}
audits = {
    name: runs.audit_generated(
        config, settings, freeze=freeze, limit=S.audit_scale.images
    )
    for name, (config, settings, freeze) in searched.items()
}

# %% [markdown]
# Per audit: the images audited, those with at least one contradiction and its
# interval, then how many images each search found a contradiction on
# ({meth}`~rsutils.anisotropic.soundness.audit.records.AuditSummary.by_search`; an
# image found by two searches counts under both):

# %%
summaries = {
    name: summarize_audits(records) for name, records in audits.items()
}
deployed, frozen_control, iso_control, positive = summaries.values()
found = (
    pd.DataFrame(
        {
            name: summary.by_search()["with a contradiction"]
            for name, summary in summaries.items()
        }
    )
    .T.reindex(columns=["boundary", "attack", "margin attack"])
    .astype("Int64")  # <NA>: the search did not run
    .rename(columns={"attack": "CE attack"})
)
pd.DataFrame(
    {name: summary.row() for name, summary in summaries.items()}
).T.join(found.add_prefix("found by "))


# %% tags=["remove-cell"]
def rate(summary) -> str:
    return f"{summary.contradicted} of {summary.images}"


glue_all(
    n_audited=deployed.images,
    audit_steps=S.audit_scale.steps,
    audit_n=f"{S.audit_scale.n_verify:,}",
    rate_deployed=rate(deployed),
    ci_deployed=f"[{deployed.low:.2f}, {deployed.high:.2f}]",
    rate_frozen=rate(frozen_control),
    rate_iso=rate(iso_control),
    rate_pos=rate(positive),
    ci_pos=f"[{positive.low:.2f}, {positive.high:.2f}]",
)
short = ["deployed", "frozen", "iso", "pos"]
audit_rows = dict(zip(summaries, short, strict=True))
del audit_rows["certification-wise, frozen g_x"]  # no margin search
searches = {
    "boundary": "boundary",
    "CE attack": "ce",
    "margin attack": "margin",
}
glue_table(
    found, "found_{row}_{column}", rows=audit_rows, columns=searches
)

# %% [markdown]
# The deployed certification-wise classifier contradicts its certificate on
# {glue:text}`rate_deployed` of the audited images (95% interval
# {glue:text}`ci_deployed`); the two controls inside their certificates on
# {glue:text}`rate_frozen` and {glue:text}`rate_iso`. The columns "found by" say
# which search found them: random boundary points test the region without aiming;
# the ascents aim, and the two losses aim differently only where the classifier is
# so sure that the cross-entropy goes flat.
#
# Does the search have power? It is strong when the lower end of the positive
# control's 95% interval exceeds one half, weak when the control finds some
# contradictions but not that many, and absent when it finds none; what each level
# makes of the controls' zeros, and the one this run met:

# %%
met = [
    positive.low > 0.5,
    positive.contradicted > 0 and positive.low <= 0.5,
    positive.contradicted == 0,
]
levels = pd.DataFrame(
    {
        "the controls' zeros are": [
            "evidence: most images just outside a certificate hold a "
            "contradiction that the search finds",
            "a loose bound: the search finds some contradictions where "
            "they may exist, but its interval admits a minority of images",
            "silent: the smoothed boundaries lie beyond 2R or the search "
            "cannot find them",
        ],
        "this run": np.where(met, "◀", ""),
    },
    index=pd.Index(["strong", "weak", "absent"], name="power"),
)
levels

# %% tags=["remove-cell"]
power = str(levels.index[np.flatnonzero(met)[0]])
glue_all(power=power, power_reading=levels.iloc[:, 0][power])

# %% [markdown]
# Here the search's power is {glue:text}`power`, with {glue:text}`rate_pos` images
# of the positive control holding a contradiction (95% interval
# {glue:text}`ci_pos`). That rate is itself a lower bound on what the search can
# do, since an image may hold no contradiction within $2R$ at all; and it measures
# power at the isotropic model's depth outside its certificates, the natural
# yardstick for contradictions that the deployed classifier's moving $\mu$ would
# create inside them.
#
# The rate above is one trained model's. The same audit on every replicate model,
# each on its own first correct certificates and with its own positive control
# ({func}`~rsutils.book.chapters.npg_per_model.audit_by_replicate`); the mean,
# lowest and highest over the models, and every model's audits taken together
# ({func}`~rsutils.book.chapters.npg_per_model.pooled_audit`):

# %%
audit_by_model = by_model.audit_by_replicate(
    chapter, audit, positive_control=shell
)
audit_pooled = by_model.pooled_audit(audit_by_model)
positive_pooled = by_model.pooled_audit(
    audit_by_model, prefix=by_model.POSITIVE
)
pd.concat(
    [by_model.with_spread(audit_by_model), audit_pooled.to_frame().T]
).round(3)

# %% [markdown]
# Over the {glue:text}`n_audit_models` models, between {glue:text}`audit_rate_low:.0%`
# and {glue:text}`audit_rate_high:.0%` of the audited certificates of the deployed
# classifier hold a contradiction the search found; taken together,
# {glue:text}`rate_pooled` (95% interval {glue:text}`ci_pooled`, an interval over
# the images that leaves the spread between models to the rows above it). Their
# positive controls together hold a contradiction on
# {glue:text}`positive_pooled` images (95% interval
# {glue:text}`ci_positive_pooled`).

# %% tags=["remove-cell"]
glue_all(
    n_audit_models=len(audit_by_model),
    audit_rate_low=float(audit_by_model["rate"].min()),
    audit_rate_high=float(audit_by_model["rate"].max()),
    rate_pooled="{:.0f} of {:.0f}".format(
        *audit_pooled[["with a contradiction", "images"]]
    ),
    ci_pooled=f"[{audit_pooled['low']:.2f}, {audit_pooled['high']:.2f}]",
    positive_pooled="{:.0f} of {:.0f}".format(
        *positive_pooled[["with a contradiction", "images"]]
    ),
    ci_positive_pooled=(
        f"[{positive_pooled['low']:.2f}, {positive_pooled['high']:.2f}]"
    ),
)

# %% [markdown]
# Per search, medians over the audited images of how far the generators move when the
# input moves (the largest $\|\mu(x+\delta) - \mu(x)\|_2 / \|\delta\|_2$ and the
# largest change of $\sigma$ among the searched points), and of the lowest estimated
# probability of the certified class under $G$ and under $g_x$ on the same draws:

# %%
columns = {
    "max_mu_ratio": "‖Δμ‖/‖δ‖",
    "max_sigma_change": "max |Δσ|",
    "min_pA_deployed": "pA under G",
    "min_pA_frozen": "pA under g_x",
    "contradictions": "contradictions",
}
deployed.table.groupby("search")[list(columns)].median().rename(
    columns=columns
).round(3)

# %% [markdown]
# (chapter-deployed-soundness-memory)=
# ## The audit through an anisotropic certificate memory
#
# The memory of {ref}`chapter-memory-soundness` stores every answer with its region and admits a
# new certificate only so that no two regions of different classes meet; here the
# regions are the certification-wise super-ellipsoids
# $\{z : \|(z - x)\oslash\sigma(x)\|_2 < R\}$, whose shapes differ from input to
# input ({class}`~rsutils.memory.superellipsoids.AnisotropicMemory`). Two regions are
# proved disjoint by a separating hyperplane: a normal $w$ with
# $w\cdot(c_B - c_A) \ge R_A\|\sigma_A\odot w\|_2 + R_B\|\sigma_B\odot w\|_2$, checked
# in floating point with a rounding margin ({mod}`~rsutils.geometry.separation`);
# without such a proof the memory treats them as intersecting. The certificates are
# admitted in test order; then the deployed classifier answers, through the memory,
# at every point the audit searched.

# %%
memory = rs.AnisotropicMemory()
cw_smooth = rs.GeneratedSmooth(
    cw_model, test.num_classes, rs.Gaussian(S.lam), cw_generator
)
cw_log = logs["certification-wise"]
admitted = admit_log(cw_smooth, memory, test.images, cw_log)
queried = query_audit_points(
    cw_smooth,
    memory,
    test.images,
    audits["certification-wise, deployed G"],
    runs.settings.replace(seed=derived_seed(seed, 0, "requery")),
)
queried.groupby("search")[
    ["inside", "flipped", "contradiction"]
].sum().assign(points=queried.groupby("search").size())

# %% tags=["remove-cell"]
with torch.no_grad():  # one image at a time, as CERTIFY computes them
    one = [test.images[i : i + 1].to(chapter.device) for i in cw_log.idx]
    cw_sigmas = torch.cat([cw_generator(x)[1].cpu() for x in one])
raw_radii = np.where(cw_log.predict >= 0, cw_log.region_radius, 0.0)
overlaps = anisotropic_conflicting_pairs(
    test.images[cw_log.idx.to_list()].numpy(),
    cw_sigmas.numpy(),
    cw_log.predict.to_numpy(),
    raw_radii,
)
actions = admitted["memory"].value_counts()
glue_all(
    n_cw=len(cw_log),
    n_overlaps=len(overlaps),
    n_kept=int(actions.get("kept", 0)),
    n_shrunk=int(actions.get("shrunk", 0)),
    n_adopted=int(actions.get("adopted", 0)),
    n_abstained=int(actions.get("abstained", 0)),
    n_queried=len(queried),
    n_flipped=int((queried.mc_predict != queried.stored).sum()),
    n_memory_contradictions=int(queried.contradiction.sum()),
)
assert memory.violations() == [] and not queried.contradiction.any()

# %% [markdown]
# Among the raw certification-wise certificates of the {glue:text}`n_cw` test images,
# {glue:text}`n_overlaps` pairs of different classes have regions that are not proved
# disjoint. Admitted in test order, the memory keeps {glue:text}`n_kept` regions,
# shrinks {glue:text}`n_shrunk`, changes the answer of {glue:text}`n_adopted` and
# stores {glue:text}`n_abstained` abstentions. At {glue:text}`n_flipped` of the
# {glue:text}`n_queried` audited points the deployed classifier's own Monte Carlo
# answer was another class than the one stored for the audited image, and the memory
# answers with a contradiction at {glue:text}`n_memory_contradictions` of them.
#
# That zero holds by construction, not by measurement. A query inside a stored
# region gets the stored class, and a new region is admitted only where it meets no
# region of another class, so no answer can contradict a stored region whatever
# $\mu$ and $\sigma$ do (the page asserts it above). And it holds only because
# every audited image was admitted before its perturbed points were asked: had
# $x + \delta$ come first, the memory would have stored the Monte Carlo answer there,
# the flipped one in the count above, and the clean $x$ asked later would have
# inherited it. The memory makes the deployed classifier consistent with its own
# earlier answers; it does not make it robust, and the certificates it keeps say
# nothing about inputs nobody has asked yet.
#
# (chapter-deployed-soundness-sound)=
# ## A sound radius for the deployed classifier
#
# Is there a radius, smaller than Theorem 7's, that provably holds for $G$ itself,
# without a memory? One case has a short proof. Let $\sigma \equiv c$ be constant
# and write $h$ for the isotropic smoothed classifier of scale $c\lambda$; then
# $G(z) = h(z + \mu(z))$, and CERTIFY at $x$ certifies $h$ on the ball of radius
# $cR$ around $w = x + \mu(x)$. If $\mu$ is $L$-Lipschitz in $\ell_2$,
#
# $$
# \|x + \delta + \mu(x + \delta) - w\|_2 \le \|\delta\|_2
#   + \|\mu(x + \delta) - \mu(x)\|_2 \le (1 + L)\,\|\delta\|_2,
# $$ (eq-npg-lipschitz)
#
# so $G$ is constant on the ball of radius $cR/(1 + L)$ around $x$
# ({func}`~rsutils.anisotropic.soundness.sound.sound_log`). For noise that does not
# depend on the input (the isotropic controls, the patterns, the dataset-wise
# generators) $G$ is $g_x$ and $L = 0$: Theorem 7's radius stands. For UCAN's
# certification-wise $\sigma(x + \mu(x))$ the argument says nothing:
# {cite:t}`sukenik2022intriguing` show that a certificate for input-dependent
# $\sigma$ needs a bound on its semi-elasticity (the Lipschitz constant of
# $\log\sigma$) that the curse of dimensionality pushes down as the input grows.
# Adaptive randomized smoothing {cite:p}`lyu2024adaptive` is a sound alternative: it
# computes the adaptive parameters from a *noisy* query of the input and composes
# the Gaussian differential-privacy guarantees of that query and the final one.
#
# What remains is $L$. The certification-wise $\mu$ is
# $\lambda\tanh(G_\mu(x))$, a chain of $3\times3$ convolutions, LeakyReLU and
# dense concatenations; tanh and LeakyReLU are 1-Lipschitz. A zero-padded
# convolution's operator norm is at most that of the circular one on a slightly
# larger torus, which the 2-D Fourier transform of the kernel gives exactly
# {cite:p}`sedghi2019singular`, and the dense block is bounded feature map by
# feature map ({func}`~rsutils.anisotropic.soundness.lipschitz.mu_lipschitz_bound`;
# its docstring has the recursion and the float64 margin). The bound of each
# convolution of $G_\mu$:

# %%
shape = tuple(images.shape[-2:])
bound = lip.mu_lipschitz_bound(cw_generator, shape)
pd.Series(bound.layers, name="operator norm ≤").round(3)

# %% [markdown]
# With $\lambda =$ {glue:text}`lam:g` in front, the bound is
# $L \le$ {glue:text}`lip_bound:.4g` (the plain product of the layer norms,
# which treats each concatenation as one wide convolution, gives
# {glue:text}`lip_plain:.4g`). An upper bound can be loose, so we also look for
# pairs that move $\mu$ fast
# ({func}`~rsutils.anisotropic.soundness.lipschitz.empirical_mu_ratios`): random
# perturbations of the first certified images, and a gradient ascent on the
# ratio $\|\mu(a + \delta) - \mu(a)\|_2 / \|\delta\|_2$ over both $a$ and
# $\delta$. Every ratio found is a lower bound on $L$, and so is every ratio the
# audit measured.

# %%
steps = {"smoke": 10, "cpu": 300, "paper": 1000}[profile]
found = lip.empirical_mu_ratios(
    cw_generator, images[:8], seed=seed, steps=steps
)
audit_ratio = float(deployed.table["max_mu_ratio"].max())
pd.Series(
    {
        "random pairs": found.random,
        f"gradient ascent ({steps} steps)": found.adversarial,
        "the audit": audit_ratio,
        "upper bound": bound.value,
    },
    name="‖Δμ‖/‖δ‖",
).round(3)

# %% tags=["remove-cell"]
assert bound.value >= max(found.best, np.nan_to_num(audit_ratio))
glue_all(
    lip_bound=bound.value,
    lip_plain=bound.plain,
    lip_random=found.random,
    lip_found=found.best,
    lip_audit=audit_ratio,
    lip_gap=bound.value / found.best if found.best > 0 else float("inf"),
)

# %% [markdown]
# The true constant of this $\mu$ therefore lies between
# {glue:text}`lip_found:.3g` and {glue:text}`lip_bound:.4g`: the bound is
# {glue:text}`lip_gap:.3g` times the largest ratio found. The gap is the price
# of multiplying layer norms whose worst directions need not line up; the lower
# end is a pair that $\mu$ really moves that fast, so no valid bound can go below
# it.
#
# To certify a classifier of the kind the argument covers, we keep $\mu(x)$ and
# set $\sigma \equiv c$ ({class}`~rsutils.anisotropic.soundness.sound.ConstantScale`),
# with $c$ the median of the learned $\sigma$ over the certified images rounded
# to two decimals ({func}`~rsutils.book.replicate_logs.median_scale`), $c =$
# {glue:text}`sound_c`: the classifier was fine-tuned under the learned $\sigma$,
# so this noise is close to the one it knows. The run is certified like the
# others, with the same images and settings ({ref}`chapter-npg-training` certified it on
# every replicate, so it comes from the cache):

# %%
c = median_scale(cw_generator, images.to(chapter.device))
constant = runs.certify_generated(
    S.methods["certification-wise"], constant_sigma=c
)

# %% [markdown]
# For every method the table puts the certified accuracy at three radii and
# the ACR by Theorem 7's radius $\min_i\sigma_i R$ (the certificate of $g_x$)
# next to the radius sound for the deployed classifier, $\min_i\sigma_i
# R/(1 + L)$ ({func}`~rsutils.anisotropic.soundness.sound.deployed_lipschitz` gives
# $L$: 0 where the noise does not depend on the input, the bound above for
# $\sigma \equiv c$, and none for the learned certification-wise $\sigma$, whose
# row stays empty on the right).

# %%
name_c = f"certification-wise, σ ≡ {c:g}"
L = {
    name: sound.deployed_lipschitz(g, shape)
    for name, (_, g) in trained.items()
}
L[name_c] = sound.deployed_lipschitz(
    sound.ConstantScale(cw_generator, c), shape
)
at = [0.25, 0.5, 1.0]
measures = [*(f"r = {r:g}" for r in at), "ACR"]


def measured(log: pd.DataFrame) -> list[float]:
    """Certified accuracy at the radii ``at``, then the ACR."""
    accuracy = rs.certified_accuracy(log, at)
    return [*accuracy, rs.average_certified_radius(log)]


rows = {}
for name, log in {**logs, name_c: constant}.items():
    k = L[name]  # None: no sound radius known
    held = [np.nan] * 4 if k is None else measured(sound.sound_log(log, k))
    rows[name] = [np.nan if k is None else k, *measured(log), *held]
header = [("L", "")] + [
    (kind, m)
    for kind in ("Theorem 7 (g_x)", "deployed G")
    for m in measures
]
deployed_table = pd.DataFrame(
    rows, index=pd.MultiIndex.from_tuples(header)
)
deployed_table.T.round(3)

# %% tags=["remove-cell"]
table_t = deployed_table.T
fixed = [name for name, k in L.items() if k == 0.0]
for name in fixed:
    row = table_t.loc[name]
    assert row["Theorem 7 (g_x)"].equals(row["deployed G"]), name
at_found_ratio = sound.sound_log(constant, found.best)
acr_of = table_t.xs("ACR", axis=1, level=1).astype(float)
glue_all(
    sound_c=f"{c:g}",
    n_fixed=len(fixed),
    acr_cw_learned=float(
        acr_of.loc["certification-wise", "Theorem 7 (g_x)"]
    ),
    acr_c=float(acr_of.loc[name_c, "Theorem 7 (g_x)"]),
    acr_c_sound=float(acr_of.loc[name_c, "deployed G"]),
    acr_c_ceiling=rs.average_certified_radius(at_found_ratio),
    sound_acc_025=float(table_t.loc[name_c, ("deployed G", "r = 0.25")]),
    learned_acc_025=float(
        table_t.loc["certification-wise", ("Theorem 7 (g_x)", "r = 0.25")]
    ),
    sound_factor=1 + bound.value,
    ceiling_factor=1 + found.best,
)

# %% [markdown]
# For the {glue:text}`n_fixed` methods whose noise does not depend on the input
# the two halves of the table agree, as they must. The certification-wise
# classifier with $\sigma \equiv$ {glue:text}`sound_c` certifies an ACR of
# {glue:text}`acr_c:.3f` by Theorem 7 (the learned $\sigma$:
# {glue:text}`acr_cw_learned:.3f`), and the radius that holds for its deployed
# classifier divides each radius by $1 + L =$ {glue:text}`sound_factor:.4g`,
# leaving an ACR of {glue:text}`acr_c_sound:.2g`. How much could a tighter
# bound recover? With $L$ equal to the largest ratio found, which $\mu$
# provably reaches so that no global constant can be smaller, the factor would be
# {glue:text}`ceiling_factor:.3g` and the ACR {glue:text}`acr_c_ceiling:.3f`:
# the most this route, with one global Lipschitz constant for $\mu$, can give this
# generator, not a certificate. A local bound is not held to it:
# {eq}`eq-npg-lipschitz` needs only $D(r)$, the largest move of $\mu$ over the
# ball of radius $r$ around $x$, so $G$ keeps its class up to the largest $r$
# with $r + D(r) < cR$. Two measurements on the same certificates
# ({mod}`~rsutils.anisotropic.soundness.local`): an upper bound on $D(r)$ by
# interval bound propagation through $G_\mu$ {cite:p}`gowal2018effectiveness`
# (its first convolution exactly over the $\ell_2$ ball), which gives a radius
# sound for $G$; and a search for the largest move on each ball,
# whose smallest $r$ with $r + D_{\text{found}}(r) \ge cR$ caps every certificate
# of this argument, however tight its bound on $D$:

# %%
held = constant[constant["radius"] > 0]
x_held = test.images[list(held["idx"])]
c_r = torch.tensor(held["radius"].to_numpy(copy=True))
cw_constant = sound.ConstantScale(cw_generator, c)
by_route = {
    "global L": c_r.numpy() / (1 + bound.value),
    "interval bound": local.local_radius(cw_constant, x_held, c_r).numpy(),
}
by_route["sound: the larger"] = np.maximum(*by_route.values())
by_route["ceiling of the argument"] = local.local_ceiling(
    cw_constant, x_held, c_r, seed=seed
).numpy()


def acr_with(radii):
    """The ACR of ``constant`` with its certified radii replaced."""
    log = constant.copy()
    log.loc[held.index, "radius"] = radii
    return rs.average_certified_radius(log)


local_acr = pd.Series({k: acr_with(r) for k, r in by_route.items()})
local_acr.rename("ACR").round(4)

# %% tags=["remove-cell"]
glue_all(
    acr_interval=local_acr["interval bound"],
    acr_local_sound=local_acr["sound: the larger"],
    acr_local_ceiling=local_acr["ceiling of the argument"],
)

# %% [markdown]
# Interval bounds give an ACR of {glue:text}`acr_interval:.2g` (the global bound:
# {glue:text}`acr_c_sound:.2g`); no bound on $D$ can give more than
# {glue:text}`acr_local_ceiling:.3f`. Between the two lies what a tighter bound (linear
# relaxations such as CROWN {cite:p}`zhang2018efficient`) could recover; the book
# does not build one.
#
# Where that factor is large, the reason is the offset itself: it may be as
# large as the noise ($|\mu_i| < \lambda$) and is trained only to help the
# classifier, so nothing keeps it from changing quickly with the input. A
# useful radius needs a slowly varying $\mu$, which training would have to
# enforce, and is at most the radius of $h$ at $x + \mu(x)$.
#
# The question is not UCAN's alone. ANCER {cite:p}`eiras2022ancer` optimises an
# anisotropic $\sigma$ for each input to maximise the certified volume and makes its
# certificates hold for the deployed classifier through the memory-based
# certification of data-dependent classifiers {cite:p}`alfarra2022data`; RANCER
# {cite:p}`rumezhak2023rancer` extends those regions beyond the coordinate axes.
# Both share the memory section's conclusion: a $\sigma$ optimised per input
# certifies $g_x$, and a memory makes the deployed classifier's answers consistent
# rather than the classifier robust.
#
# ## What holds up
#
# Whether the certificates hold for the classifier one deploys, as the audit of every
# replicate model answers it. A contradiction the search finds is a proof that a
# certificate is false; a search that finds none proves nothing, so the answer is
# "no" only when every replicate model yields one, and otherwise says what was not
# shown. For either answer to mean anything, the controls audited inside their own
# certificates (the frozen generator and the isotropic classifier) must show no
# contradiction: their counts follow the answer.

# %%
run_chose(
    "the audit contradicts a certificate of the deployed "
    "classifier on every replicate model",
    bool((audit_by_model["rate"] > 0).all()),
    "No: UCAN's certification-wise certificates hold for g_x, "
    "a classifier nobody deploys, and not for the classifier a "
    "user runs.",
    "Not shown here: on some replicate model the audit found "
    "no contradiction, which does not make the certificates "
    "sound (the search's power is measured below).",
)

# %% [markdown]
# On the deployed classifier of the {glue:text}`n_audit_models` replicate models
# the audit contradicts {glue:text}`rate_pooled` of the audited certificates (95%
# interval {glue:text}`ci_pooled`; between {glue:text}`audit_rate_low:.0%` and
# {glue:text}`audit_rate_high:.0%` on each model) while, on the first model, the
# controls inside their own certificates show {glue:text}`rate_frozen` and
# {glue:text}`rate_iso`. The radius one can prove for
# a deployable version, the same offset with $\sigma \equiv$ {glue:text}`sound_c`,
# leaves an ACR of {glue:text}`acr_c_sound:.2g` against {glue:text}`acr_c:.3f` by
# Theorem 7, and a certified accuracy at radius 0.25 of
# {glue:text}`sound_acc_025:.2f` against {glue:text}`learned_acc_025:.2f` by UCAN's
# radius with the learned $\sigma$, because the offset moves up to
# {glue:text}`lip_found:.3g` times as fast as the input.
#
# What the page shows beyond that: the offset is where much of the
# certification-wise decision is made, since on every replicate model the offset
# alone, with no image to look at, draws at least {glue:text}`mu_only_low:.1%` of
# the votes to the image's class, against at most {glue:text}`blank_high:.1%` for
# the blank; a memory makes the
# deployed classifier's answers consistent by construction, but only with the
# answers it has already given. Two limits: the audit's search has the power its
# positive controls measured ({glue:text}`power` on the first model; a
# contradiction on {glue:text}`positive_pooled` images over every model), so a
# certificate it did not
# contradict is not thereby shown sound; and the sound radius uses one global
# Lipschitz bound. A local bound over each input's ball is sound too: interval
# bounds give {glue:text}`acr_interval:.2g`, and no bound on the offset's move can
# give more than {glue:text}`acr_local_ceiling:.3f` by this argument.
