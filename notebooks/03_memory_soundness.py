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
# (chapter-memory-soundness)=
# # Memory soundness
#
# A certificate is a promise about a single classifier: $g$ answers $c_A$ everywhere in
# the ball of radius $R$ around $x$. With a data-dependent $\sigma$
# ({ref}`chapter-sigma-ascent`) the classifier that answers at $x'$ is
# $g_{\sigma^*_{x'}}$, not the $g_{\sigma^*_x}$ that certified $x$, so nothing in
# Theorem 1 stops it from answering another class inside $x$'s ball.
# {cite:t}`alfarra2022data` (§3.5) repair this with a memory of past answers: a new
# input inside a stored region of another class adopts that class (its region shrinks
# to fit inside), and a new region that would meet a region of another class shrinks to
# avoid it. The chapter asks whether this makes the certificates sound, and at what
# price:
#
# - (a), (b): a case where the repair is needed, and the
#   {class}`~rsutils.memory.balls.CertificateMemory` on it, in both orders;
# - (c): how often the repair acts on real certificates, and whether the order of
#   queries matters there;
# - (d), (e): what the data-dependent classifier answers inside certified balls, and
#   whom the memory protects when an attacker's first query is already perturbed.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.patches import Circle

import rsutils as rs
from rsutils.book import BOOK_SIGMAS as SIGMAS
from rsutils.book import Chapter, glue_all, glue_fields, run_chose
from rsutils.checks.classifiers import Disk
from rsutils.core.streams import derived_seed
from rsutils.memory import closest_conflict, conflicting_pairs, replay

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The real-data sections reuse the Cohen-DS certificates of
# {ref}`chapter-sigma-ascent` (from the cache; run alone, this chapter computes them).
# The probes of section (d) are new certifications, one per certified image, so they
# run at the smaller secondary scale stated below.

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
P, test, configs = chapter.profile, chapter.test, chapter.base_models
ds_runs, secondary = chapter.replicated, chapter.secondary
chapter.run_at(
    {
        **chapter.base_model_rows(),
        "Cohen-DS certificates": f"{len(ds_runs.indices)} images "
        "(chapter 02's, its replicate images)",
        "probes": f"{P.secondary.images} images "
        f"(every {P.secondary.skip}th), n = {P.secondary.n:,}",
    }
)

# %% [markdown]
# ## (a) Two certificates that contradict each other
#
# The disk is chosen because its smoothed classifier is known exactly: the noisy point
# $x + \sigma\varepsilon$ falls inside the unit disk with the probability that a
# non-central $\chi^2$ variable with 2 degrees of freedom and non-centrality
# $\|x\|^2/\sigma^2$ stays below $1/\sigma^2$, so no Monte Carlo error enters this
# section and every contradiction below is a fact about the classifiers, not luck.
#
# Take the plane, the base classifier "class 1 inside the unit disk, class 0 outside"
# ({class}`~rsutils.checks.classifiers.Disk`), and Gaussian smoothing. The probability that
# $x + \sigma\varepsilon$ falls in the disk is a non-central $\chi^2$ probability, so
# every radius below is exact (capped at the $p_A$ that $n = 10^5$ draws can certify at
# $\alpha = 0.001$). Each input gets the $\sigma$ in $[0.05, 3]$ with the largest
# radius for the class it has at small $\sigma$, as sigma ascent would look for.
#
# At the centre $x_A = (0, 0)$ the best level is $\sigma^*_A = $
# {glue:text}`sigma_a:.3f`, certifying class 1 within {glue:text}`radius_a:.3f`. At
# $x_B = (1.3, 0)$, outside the disk, larger $\sigma$ only helps: the disk becomes a
# smaller and smaller part of the noise, and $\sigma^*_B = $ {glue:text}`sigma_b:.2f`
# certifies class 0 within {glue:text}`radius_b:.2f`, a ball that contains $x_A$ and
# the whole disk ({numref}`fig-disk`). Both statements are true of the classifier that
# made them, $g_{\sigma^*_A}$ and $g_{\sigma^*_B}$. Together they are contradictory:
# the data-dependent classifier answers {glue:text}`label_a` at $x_A$, inside a ball
# certified to be class 0.
#
# The two inputs are placed so that the contradiction is as plain as possible: $x_A$
# at the centre of the disk, where class 1 is certain at small $\sigma$, and $x_B$
# just outside it, where class 0 wins at small $\sigma$ and the radius it certifies
# keeps growing once the noise is much wider than the disk. Every input outside the
# disk shares that last property, so the contradiction is not a matter of a lucky
# choice of point.

# %%
disk = Disk(radius=1.0)
p_cap = float(rs.max_certifiable_pA(100_000, 0.001))
sigma_grid = np.geomspace(0.05, 3.0, 400)

# %% [markdown]
# In the plane there is no need for a stochastic ascent: the exact radius is cheap at
# every $\sigma$, so {meth}`~rsutils.checks.classifiers.Disk.best_sigma` scans a grid
# of {glue:text}`n_sigma_grid` levels, spaced evenly on a log scale, and keeps the
# class that the smallest level predicts, as DDRS do (a level that flips the class
# does not count). Capping $p_A$ at {glue:text}`p_cap:.6f` keeps every radius one
# that CERTIFY could actually return with $10^5$ draws.

# %%
x_a, x_b = np.array([0.0, 0.0]), np.array([1.3, 0.0])
both = np.stack([x_a, x_b])
(sigma_a, sigma_b), (radius_a, radius_b) = disk.best_sigma(
    both, sigma_grid, p_cap
)
labels_ab, _ = disk.smoothed(both, np.array([sigma_a, sigma_b]), p_cap)
toy = pd.DataFrame(
    {
        "σ*": [sigma_a, sigma_b],
        "class at σ*": labels_ab,
        "certified radius": [radius_a, radius_b],
    },
    index=pd.Index(["x_A = (0, 0)", "x_B = (1.3, 0)"], name="input"),
)
toy.round(3)

# %% tags=["remove-cell"]
glue_all(
    sigma_a=float(sigma_a),
    sigma_b=float(sigma_b),
    radius_a=float(radius_a),
    radius_b=float(radius_b),
    label_a=f"class {int(labels_ab[0])}",
    n_sigma_grid=len(sigma_grid),
    p_cap=p_cap,
)
# What the prose says: B's ball holds x_A and the whole disk, with sigma*
# at the top of the grid, and the two classes differ.
assert (
    radius_b > np.linalg.norm(x_b) + disk.a and sigma_b == sigma_grid[-1]
)
assert labels_ab[0] != labels_ab[1]

# %% [markdown]
# Each row is one input's own certificate: its best level, the class the smoothed
# classifier gives at that level, and the radius. Each is correct about the smoothed
# classifier it comes from; the trouble is that the two come from different ones.
# $x_B$'s level is the largest of the grid: its radius grows with every level
# tried, as a stochastic ascent would find by climbing until its steps ran out.
#
# Every point of the plane gets the class of its own best $\sigma$, which draws the
# data-dependent classifier:

# %% tags=["hide-input"]
grid = np.linspace(-2.5, 4.0, 131)
points = np.stack(np.meshgrid(grid, grid), axis=-1).reshape(-1, 2)
best_sigmas, _ = disk.best_sigma(points, sigma_grid, p_cap)
grid_labels, _ = disk.smoothed(points, best_sigmas, p_cap)
fig, ax = plt.subplots(figsize=(5.5, 5.5))
label_map = grid_labels.reshape(len(grid), len(grid))
colours = ["#f0f0f0", "#9ecae1"]
ax.contourf(grid, grid, label_map, levels=[-0.5, 0.5, 1.5], colors=colours)
balls = ((x_a, radius_a, "C0", "A"), (x_b, radius_b, "C3", "B"))
for center, radius, color, name in balls:
    ball = Circle(center, radius, fill=False, color=color, linewidth=2)
    ax.add_patch(ball)
    ax.plot(*center, "o", color=color)
    offset = {"textcoords": "offset points", "xytext": (6, 6)}
    ax.annotate(f"$x_{name}$", center, **offset)
ax.set(xlim=(grid[0], grid[-1]), ylim=(grid[0], grid[-1]), aspect="equal")
ax.set_title("blue: the data-dependent classifier answers class 1")
glue_all(fig_disk=fig)
plt.close(fig)

# %% [markdown]
# ```{glue:figure} fig_disk
# :name: fig-disk
#
# The data-dependent classifier (each point smoothed with its own best $\sigma$) and
# the certified balls of $x_A$ (class 1, blue) and $x_B$ (class 0, red).
# ```
#
# What to look at: the blue region, where the data-dependent classifier answers class
# 1, lies entirely inside the red circle that $x_B$'s certificate claims for class 0.
# Every blue point is a counterexample to $B$'s certificate, not only $x_A$; the
# repair below has to decide which of the two statements to give up.
#
# ## (b) The memory repairs it, and the order of queries matters
#
# The memory cannot know which of two contradicting certificates is right; it can
# only refuse to hold both. Here are the two orders in which it can meet $x_A$ and
# $x_B$, each starting from an empty memory.
#
# Admitted in the order $x_A, x_B$, the memory keeps $A$'s certificate and shrinks $B$'s
# ball to {glue:text}`shrunk_b:.3f`, the distance to $A$'s ball. Admitted as $x_B, x_A$,
# it keeps $B$'s ball, and $x_A$, which lies inside it, adopts class 0 with radius
# {glue:text}`adopted_a:.3f` (its own ball already fits inside $B$'s): the memory now
# answers class 0 at the centre of the disk.
# Both outcomes are sound (no two regions of different classes meet); which one a
# deployed classifier gives depends on which input it saw first. Neither is
# "correct" in any deeper sense: the memory does not know the true class of either
# point, only that two statements cannot both stand, and it keeps the older one.
#
# {class}`~rsutils.memory.balls.CertificateMemory` admits one certificate at a time:
# `admit` takes the input, the Monte Carlo class and radius, compares them with every
# stored region, and returns the answer it will stand by, with the action it took.
# Each order starts from an empty memory, and after each the memory checks that no
# two stored regions of different classes meet.
#
# The memory stores each input with its class, radius and action. Here it lives in
# RAM; given a path it is a file, so that a deployed classifier can keep its past
# answers across restarts, which soundness requires: a memory that forgets lets a
# contradicting certificate in again.

# %% tags=["nbval-check-output"]
rows = []
inputs = {
    "A": (x_a, labels_ab[0], radius_a),
    "B": (x_b, labels_ab[1], radius_b),
}
for order in (("A", "B"), ("B", "A")):
    with rs.CertificateMemory() as memory:
        for name in order:
            x, label, radius = inputs[name]
            answer = memory.admit(x, int(label), float(radius))
            rows.append(
                {
                    "order": " then ".join(order),
                    "input": name,
                    "Monte Carlo class": answer.mc_prediction,
                    "Monte Carlo radius": answer.mc_radius,
                    "memory class": answer.prediction,
                    "memory radius": answer.radius,
                    "action": answer.action,
                }
            )
        assert memory.violations() == []
orders = pd.DataFrame(rows).set_index(["order", "input"])
orders.round(3)

# %% tags=["remove-cell"]
glue_all(
    shrunk_b=float(orders.loc[("A then B", "B"), "memory radius"]),
    adopted_a=float(orders.loc[("B then A", "A"), "memory radius"]),
)
assert (
    orders.loc[("B then A", "A"), "memory radius"]
    == radius_a
    < radius_b - np.linalg.norm(x_b)
)
assert orders["action"].tolist() == ["kept", "shrunk", "kept", "adopted"]
assert orders.loc[("B then A", "A"), "memory class"] == 0

# %% [markdown]
# The table reads row by row as the memory sees the queries: the Monte Carlo columns
# are what CERTIFY said, the memory columns what the memory answers. The second query
# of each order is the one the memory has to change: in the first order $B$'s ball
# shrinks to stop short of $A$'s, in the second $A$ takes $B$'s class because it lies
# inside $B$'s ball.
#
# ## (c) On the test set: how often does the memory act?
#
# Section (a) built a contradiction on purpose. Whether real certificates ever come
# close to one is an empirical question, and the answer decides whether the memory is
# a formality or a part of the method that changes its results.
#
# The Cohen-DS certificates of {ref}`chapter-sigma-ascent` ({glue:text}`num_images`
# test images per starting $\sigma_0$) went through a memory. Before it, we can count
# the pairs of raw Monte Carlo certificates with different classes whose balls meet,
# and how close the nearest such pair comes, as the ratio of the distance between the
# two images to the sum of their radii (below 1 is an overlap). DDRS report no overlap
# on CIFAR-10 and ImageNet.
#
# When the memory only keeps, it answers exactly as CERTIFY alone would, and the
# certified accuracy of the data-dependent classifier is the Monte Carlo one; a
# shrink or an adoption changes it, for better or worse.
#
# DDRS found that the memory's radius equals the Monte Carlo radius for every input
# of their experiments, and therefore use the memory-based and the plain
# data-dependent classifier interchangeably {cite:p}`alfarra2022data`. The table
# tests the same on our images: where the memory only keeps, the two are the same
# classifier on these queries.
#
# The two counts answer different questions. The overlapping pairs are a property of
# the raw certificates, whatever order they arrive in; the actions are what one
# memory did with them in test order. An overlap that the memory never sees as such
# (because the second input of the pair shrank for another reason first) would show
# in the first count and not in the second.

# %% tags=["remove-cell"]
glue_all(num_images=len(ds_runs.indices))

# %%
ds_logs = {s: ds_runs.certify_ds(configs[s], P.ascent(s)) for s in SIGMAS}


def certificates(log: pd.DataFrame) -> tuple:
    """The images of a log and its raw Monte Carlo classes and radii."""
    images = test.images[log["idx"].tolist()].numpy()
    return (
        images,
        log["mc_predict"].to_numpy(),
        log["mc_radius"].to_numpy(),
    )


# %% [markdown]
# For each starting level, the raw certificates and what the run's own memory stored
# (read back from its file, `memory_path`):

# %%
rows = []
for s, log in ds_logs.items():
    images, mc_class, mc_radius = certificates(log)
    with rs.CertificateMemory(log.attrs["memory_path"]) as memory:
        actions = memory.entries()["action"]
    pairs = conflicting_pairs(images, mc_class, mc_radius)
    rows.append(
        {
            "σ0": s,
            "certificates": int((mc_class != rs.ABSTAIN).sum()),
            "overlapping pairs (Monte Carlo)": len(pairs),
            "closest pair / radius sum": closest_conflict(
                images, mc_class, mc_radius
            ),
            "kept": int((actions == "kept").sum()),
            "shrunk": int((actions == "shrunk").sum()),
            "adopted": int((actions == "adopted").sum()),
        }
    )
overlaps = pd.DataFrame(rows).set_index("σ0")
overlaps.round(2)

# %% [markdown]
# Reading the table: "certificates" counts the images where CERTIFY did not abstain;
# a pair overlaps when its two images are closer than the sum of their radii; the
# ratio column is the smallest distance over radius sum among pairs of different
# classes, so 1 means two balls touching and a large value means every such pair is
# far apart. The last three columns are the memory's actions; an image where CERTIFY
# abstained is stored as an abstention and counted in none of them.

# %%
closest = float(overlaps["closest pair / radius sum"].min())
overlapping = int(overlaps["overlapping pairs (Monte Carlo)"].sum())
run_chose(
    "no overlapping pair over all σ0",
    overlapping == 0,
    "As DDRS found, no two certificates of different classes overlap: the "
    f"closest pair is {closest:.2f} times its radius sum apart.",
    "Unlike DDRS, some certificates of different classes overlap (the "
    f"table counts them; closest ratio {closest:.2f}).",
)

# %% [markdown]
# Whether the memory acted, over all starting levels:

# %%
changed_by_memory = int(overlaps[["shrunk", "adopted"]].to_numpy().sum())
run_chose(
    "no certificate shrunk or adopted",
    changed_by_memory == 0,
    "The memory kept every certificate as it was: on these queries it is "
    "the plain data-dependent classifier.",
    "The memory shrank or adopted some certificates (the table counts "
    "them): on these queries it is not the plain data-dependent "
    "classifier.",
)

# %% tags=["remove-cell"]
glue_all(
    overlapping_pairs=overlapping,
    closest_ratio=closest,
    memory_changed=changed_by_memory,
)

# %% [markdown]
# What keeps certificates apart is scale: the median ℓ2 distance from a certified
# test image to the nearest one of another certified class is
# {glue:text}`median_gap:.2f`, while the median certified radius is
# {glue:text}`median_radius:.2f` ($\sigma_0 = 0.25$). The
# order of queries can only matter where the memory acts: replaying the same Monte
# Carlo certificates through a fresh memory in {glue:text}`num_orders` random orders
# per $\sigma_0$ changes {glue:text}`order_changes` answers.
#
# Why scale decides: a Fashion-MNIST image has 784 pixels in $[0, 1]$, and two images
# of different classes differ in many of them, so their ℓ2 distance adds up over
# hundreds of pixels, while a certified radius is at most a few times the noise level
# it was certified with. We
# expect overlaps only where two images of different classes nearly coincide, which
# the median gap says is far from the typical case.
#
# The replay below uses {func}`~rsutils.memory.balls.replay`: it admits the same Monte
# Carlo certificates into a fresh in-memory store in a given order, without drawing
# again, so any change of answer is due to the order alone.

# %% tags=["remove-cell"]
certified = ds_logs[0.25][ds_logs[0.25]["mc_predict"] != rs.ABSTAIN]
flat = test.images[certified["idx"].tolist()].flatten(1).double()
distances = torch.cdist(flat, flat)
other_class = (
    certified["mc_predict"].to_numpy()[:, None]
    != certified["mc_predict"].to_numpy()[None, :]
)
distances[~torch.as_tensor(other_class)] = float("inf")
glue_all(
    median_gap=float(distances.min(dim=1).values.median()),
    median_radius=float(certified["mc_radius"].median()),
)

# %%
rng = np.random.default_rng(derived_seed(seed, 0, "example", 3))
num_orders, changed = 20, 0
answer_columns = ["prediction", "radius"]
for log in ds_logs.values():
    images, mc_class, mc_radius = certificates(log)
    reference = replay(images, mc_class, mc_radius, np.arange(len(log)))
    for _ in range(num_orders):
        order = rng.permutation(len(log))
        shuffled = replay(images, mc_class, mc_radius, order)
        differs = shuffled[answer_columns] != reference[answer_columns]
        changed += int(differs.any(axis=1).sum())
pd.Series({"orders per σ0": num_orders, "answers changed": changed})

# %% [markdown]
# The count is over every order and every starting level together: an answer counts
# once for each shuffled order in which it differs from the test-order replay. When
# the memory never acts, each admission keeps its Monte Carlo answer whatever came
# before, and the count is zero for any order.

# %% tags=["remove-cell"]
glue_all(num_orders=num_orders, order_changes=changed)

# %% [markdown]
# ## (d) Queries inside certified regions
#
# Sections (a) to (c) asked whether certificates *of test images* contradict each
# other. A certificate is a promise about every point of its ball, most of which no
# test image will ever visit, so the sharper question is what the data-dependent
# classifier answers at points inside the balls.
#
# Held-out images are a gentle test: an attacker queries points *near* a certified
# input. For every test image certified with a positive radius $R$ (model $\sigma_0 =
# 0.25$, {glue:text}`probe_images` images at the secondary scale), we draw a point at
# distance $0.9R$ in a random direction and run the same data-dependent certification
# there, through a copy of the memory that holds the original certificates
# ({meth}`~rsutils.book.experiments.Experiments.probe_ds`). The number that matters:
# without the memory, the data-dependent classifier answers another class at
# {glue:text}`probe_contradictions` of the {glue:text}`probe_count` probes.
#
# Why $0.9R$: far enough from the input that the data-dependent classifier may pick
# a very different level there, near enough that the probe lies well inside the
# certified ball, where the certificate promises the original class. In the probes'
# log, `label` is the class certified at the original input, not the image's true
# label, so a probe is judged against the certificate it lies in.
#
# The probes are certified through a copy of the run's memory, so that probing
# leaves the memory of section (c) as it was. A random direction is
# a mild attacker, far weaker than a search for the worst point; a contradiction
# found this way is therefore a floor on how often one exists.

# %%
probes = secondary.probe_ds(configs[0.25], P.ascent(0.25), fraction=0.9)
answered = probes["mc_predict"]
abstained = answered == rs.ABSTAIN

# %% [markdown]
# One row: how the data-dependent classifier alone answered the probes (the Monte
# Carlo columns), and how the memory answered them. The three Monte Carlo columns
# add up to the number of probes; the last column counts the probes where the
# memory's answer is the class of the certificate the probe lies in, which the
# memory guarantees.

# %%
probe_table = pd.DataFrame(
    {
        "probes": [len(probes)],
        "Monte Carlo: same class": [
            int((answered == probes["label"]).sum())
        ],
        "Monte Carlo: other class": [
            int(((answered != probes["label"]) & ~abstained).sum())
        ],
        "Monte Carlo: abstain": [int(abstained.sum())],
        "memory: adopted": [int((probes["memory"] == "adopted").sum())],
        "memory: agrees with the certificate": [
            int(probes["correct"].sum())
        ],
    }
)
probe_table

# %% tags=["remove-cell"]
fields = {"contradictions": "Monte Carlo: other class"}
fields |= {
    "abstains": "Monte Carlo: abstain",
    "adopted": "memory: adopted",
}
fields["agree"] = "memory: agrees with the certificate"
glue_fields(probe_table.iloc[0], "probe_", fields)
glue_all(probe_images=len(secondary.indices), probe_count=len(probes))
agreeing = probe_table["memory: agrees with the certificate"].iloc[0]
assert agreeing == len(probes)

# %% [markdown]
# Every probe lies inside a stored region, so the memory answers with that region's
# class by construction; the interesting number is how often the data-dependent
# classifier alone would have broken a certificate. An abstention is not a
# contradiction (the smoothed classifier declines to answer), but a deployed system
# that reads the memory first answers there too.
#
# ## (e) Whom the memory protects
#
# The agreement above has a condition that the threat model decides. Inside a stored
# region the memory answers the stored class by construction, so a point is
# protected only if the point itself, or a point whose stored region covers it, was
# answered *before* the perturbed query arrived. The probes met exactly that
# condition: every clean image had been certified, and its region stored, before any
# probe near it was queried.
#
# In the standard threat model of certified robustness the attacker perturbs an input
# that was never submitted clean: the first query the classifier sees is $x + \delta$.
# No region of $x$ is stored, so, unless the region of some other earlier query covers
# $x + \delta$, the memory has nothing to adopt and answers what the data-dependent
# classifier answers there, with its own level $\sigma^*_{x+\delta}$. The
# {glue:text}`probe_contradictions` probes above where that classifier alone
# contradicted a certificate are such answers; with the clean image never submitted,
# they would have stood. The certificate computed for $x$ at $\sigma^*_x$ is a
# statement about $g_{\sigma^*_x}$, which is not the classifier that answers at
# $x + \delta$. So the memory keeps the answers it has given consistent with one
# another (no two stored regions of different classes meet), and the certified
# accuracies of {ref}`chapter-sigma-ascent` hold for a deployment that answered each
# clean test image first; they give no protection to a clean input the attacker
# never submitted.
#
# The memory makes the certificates sound at a price: its answers depend on the
# queries it has seen, and it must be kept, in order, for as long as the classifier is
# deployed. The same question returns with UCAN's certification-wise noise in
# {ref}`chapter-npg-training`, where the regions are ellipsoids of different shapes and the
# memory proves two of them disjoint by a separating hyperplane.
#
# ## What holds up
#
# The memory makes the answers it gives sound with one another, not the certificates
# of inputs it never saw: every probe's answer agreed with the certificate it lies in
# ({glue:text}`probe_agree` of {glue:text}`probe_count`), where the data-dependent
# classifier alone contradicted {glue:text}`probe_contradictions` of them.
#
# - The contradiction is real: on the disk, two exact certificates of different
#   classes overlap, and the memory resolves them in favour of whichever came first.
# - On Fashion-MNIST the raw certificates of test images are far apart (overlapping
#   pairs: {glue:text}`overlapping_pairs`; closest pair
#   {glue:text}`closest_ratio:.2f` radius sums apart), the memory changed
#   {glue:text}`memory_changed` of them, and {glue:text}`num_orders` shuffled orders
#   per $\sigma_0$ changed {glue:text}`order_changes` answers.
# - Limits: the probes go in random directions, a floor on how often a contradiction
#   exists; they ran on {glue:text}`probe_images` images at the secondary scale; and a
#   clean input that an attacker never submitted is not protected at all.
