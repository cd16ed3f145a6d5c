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
# (chapter-memory)=
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
# avoid it. This chapter builds a case where the repair is needed, checks the
# {class}`~rsutils.memory.balls.CertificateMemory` on it, and then asks how often the
# repair acts on real data, and whether the order of queries matters.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch
from matplotlib.patches import Circle

import rsutils as rs
from rsutils.book import BOOK_SIGMAS as SIGMAS
from rsutils.book import Chapter, glue_all, glue_fields
from rsutils.checks.classifiers import Disk
from rsutils.core.streams import derived_seed
from rsutils.memory import closest_conflict, conflicting_pairs, replay

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The real-data sections reuse the Cohen-DS certificates of
# {ref}`chapter-sigma-ascent` (from the cache; run alone, this chapter computes them).

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
P, test, configs = chapter.profile, chapter.test, chapter.base_models
main, secondary = chapter.main, chapter.secondary
chapter.run_at(
    {
        **chapter.base_model_rows(),
        "probes": f"{P.secondary.images} images (every {P.secondary.skip}th), n = {P.secondary.n:,}",
    }
)

# %% [markdown]
# ## (a) Two certificates that contradict each other
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

# %%
disk = Disk(radius=1.0)
p_cap = float(rs.max_certifiable_pA(100_000, 0.001))
sigma_grid = np.geomspace(0.05, 3.0, 400)
x_a, x_b = np.array([0.0, 0.0]), np.array([1.3, 0.0])
(sigma_a, sigma_b), (radius_a, radius_b) = disk.best_sigma(np.stack([x_a, x_b]), sigma_grid, p_cap)
labels_ab, _ = disk.smoothed(np.stack([x_a, x_b]), np.array([sigma_a, sigma_b]), p_cap)
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
)
# What the prose says: B's ball holds x_A and the whole disk, with sigma* at the top of
# the grid, and the two classes differ.
assert radius_b > np.linalg.norm(x_b) + disk.a and sigma_b == sigma_grid[-1]
assert labels_ab[0] != labels_ab[1]

# %% [markdown]
# Every point of the plane gets the class of its own best $\sigma$, which draws the
# data-dependent classifier:

# %% tags=["hide-input"]
grid = np.linspace(-2.5, 4.0, 131)
points = np.stack(np.meshgrid(grid, grid), axis=-1).reshape(-1, 2)
best_sigmas, _ = disk.best_sigma(points, sigma_grid, p_cap)
grid_labels, _ = disk.smoothed(points, best_sigmas, p_cap)
fig, ax = plt.subplots(figsize=(5.5, 5.5))
ax.contourf(
    grid,
    grid,
    grid_labels.reshape(len(grid), len(grid)),
    levels=[-0.5, 0.5, 1.5],
    colors=["#f0f0f0", "#9ecae1"],
)
for center, radius, color, name in ((x_a, radius_a, "C0", "A"), (x_b, radius_b, "C3", "B")):
    ax.add_patch(Circle(center, radius, fill=False, color=color, linewidth=2))
    ax.plot(*center, "o", color=color)
    ax.annotate(f"$x_{name}$", center, textcoords="offset points", xytext=(6, 6))
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
# ## (b) The memory repairs it, and the order of queries matters
#
# Admitted in the order $x_A, x_B$, the memory keeps $A$'s certificate and shrinks $B$'s
# ball to {glue:text}`shrunk_b:.3f`, the distance to $A$'s ball. Admitted as $x_B, x_A$,
# it keeps $B$'s ball, and $x_A$, which lies inside it, adopts class 0 with radius
# {glue:text}`adopted_a:.3f` (its own ball already fits inside $B$'s): the memory now
# answers class 0 at the centre of the disk.
# Both outcomes are sound (no two regions of different classes meet); which one a
# deployed classifier gives depends on which input it saw first.

# %% tags=["nbval-check-output"]
rows = []
for order in (("A", "B"), ("B", "A")):
    with rs.CertificateMemory() as memory:
        for name in order:
            x, label, radius = (
                (x_a, labels_ab[0], radius_a) if name == "A" else (x_b, labels_ab[1], radius_b)
            )
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
assert orders.loc[("B then A", "A"), "memory radius"] == radius_a < radius_b - np.linalg.norm(x_b)
assert orders["action"].tolist() == ["kept", "shrunk", "kept", "adopted"]
assert orders.loc[("B then A", "A"), "memory class"] == 0

# %% [markdown]
# ## (c) On the test set: how often does the memory act?
#
# The Cohen-DS certificates of {ref}`chapter-sigma-ascent` ({glue:text}`num_images`
# test images per starting $\sigma_0$) went through a memory. Before it, we can count
# the pairs of raw Monte Carlo certificates with different classes whose balls meet,
# and how close the nearest such pair comes, as the ratio of the distance between the
# two images to the sum of their radii (below 1 is an overlap). DDRS report no overlap
# on CIFAR-10 and ImageNet. Here {glue:text}`overlap_verdict`, and the memory
# {glue:text}`memory_verdict`.

# %% tags=["remove-cell"]
glue_all(num_images=len(main.indices))

# %%
ds_logs = {s: main.certify_ds(configs[s], P.ascent(s)) for s in SIGMAS}
rows = []
for s, log in ds_logs.items():
    images = test.images[log["idx"].tolist()].numpy()
    mc_class, mc_radius = log["mc_predict"].to_numpy(), log["mc_radius"].to_numpy()
    with rs.CertificateMemory(log.attrs["memory_path"]) as memory:
        stored = memory.entries()
    rows.append(
        {
            "σ0": s,
            "certificates": int((mc_class != rs.ABSTAIN).sum()),
            "overlapping pairs (Monte Carlo)": len(conflicting_pairs(images, mc_class, mc_radius)),
            "closest pair / radius sum": closest_conflict(images, mc_class, mc_radius),
            "kept": int((stored["action"] == "kept").sum()),
            "shrunk": int((stored["action"] == "shrunk").sum()),
            "adopted": int((stored["action"] == "adopted").sum()),
        }
    )
overlaps = pd.DataFrame(rows).set_index("σ0")
overlaps.round(2)

# %% tags=["remove-cell"]
closest = float(overlaps["closest pair / radius sum"].min())
overlapping = int(overlaps["overlapping pairs (Monte Carlo)"].sum())
changed_by_memory = int(overlaps[["shrunk", "adopted"]].to_numpy().sum())
glue_all(
    overlap_verdict="no two certificates of different classes overlap: the closest pair is "
    f"{closest:.2f} times its radius sum apart"
    if overlapping == 0
    else f"{overlapping} pairs of certificates of different classes overlap "
    f"(closest ratio {closest:.2f})",
    memory_verdict="kept every certificate as it was"
    if changed_by_memory == 0
    else f"changed {changed_by_memory} certificates",
)

# %% [markdown]
# The reason is scale: the median ℓ2 distance from a certified test image to the
# nearest one of another certified class is {glue:text}`median_gap:.2f`, while the
# median certified radius is {glue:text}`median_radius:.2f` ($\sigma_0 = 0.25$). The
# order of queries can only matter where the memory acts: replaying the same Monte
# Carlo certificates through a fresh memory in {glue:text}`num_orders` random orders
# per $\sigma_0$ changes {glue:text}`order_changes` answers.

# %% tags=["remove-cell"]
certified = ds_logs[0.25][ds_logs[0.25]["mc_predict"] != rs.ABSTAIN]
flat = test.images[certified["idx"].tolist()].flatten(1).double()
distances = torch.cdist(flat, flat)
other_class = (
    certified["mc_predict"].to_numpy()[:, None] != certified["mc_predict"].to_numpy()[None, :]
)
distances[~torch.as_tensor(other_class)] = float("inf")
glue_all(
    median_gap=float(distances.min(dim=1).values.median()),
    median_radius=float(certified["mc_radius"].median()),
)

# %%
rng = np.random.default_rng(derived_seed(seed, 0, "example", 3))
num_orders, changed = 20, 0
for log in ds_logs.values():
    images = test.images[log["idx"].tolist()].numpy()
    mc_class, mc_radius = log["mc_predict"].to_numpy(), log["mc_radius"].to_numpy()
    reference = replay(images, mc_class, mc_radius, np.arange(len(log)))
    for _ in range(num_orders):
        shuffled = replay(images, mc_class, mc_radius, rng.permutation(len(log)))
        changed += int(
            (shuffled[["prediction", "radius"]] != reference[["prediction", "radius"]])
            .any(axis=1)
            .sum()
        )
pd.Series({"orders per σ0": num_orders, "answers changed": changed})

# %% tags=["remove-cell"]
glue_all(num_orders=num_orders, order_changes=changed)

# %% [markdown]
# ## (d) Queries inside certified regions
#
# Held-out images are a gentle test: an attacker queries points *near* a certified
# input. For every test image certified with a positive radius $R$ (model $\sigma_0 =
# 0.25$, {glue:text}`probe_images` images at the secondary scale), we draw a point at
# distance $0.9R$ in a random direction and run the same data-dependent certification
# there, through a copy of the memory that holds the original certificates
# ({meth}`~rsutils.book.experiments.Experiments.probe_ds`). Without the memory, the data-dependent
# classifier answers another class at {glue:text}`probe_contradictions` of the
# {glue:text}`probe_count` probes and abstains at {glue:text}`probe_abstains`; the
# memory overrides {glue:text}`probe_adopted` answers, so that every probe's answer
# agrees with the certificate it lies in ({glue:text}`probe_agree` of
# {glue:text}`probe_count`).

# %%
probes = secondary.probe_ds(configs[0.25], P.ascent(0.25), fraction=0.9)
probe_table = pd.DataFrame(
    {
        "probes": [len(probes)],
        "Monte Carlo: same class": [int((probes["mc_predict"] == probes["label"]).sum())],
        "Monte Carlo: other class": [
            int(
                (
                    (probes["mc_predict"] != probes["label"]) & (probes["mc_predict"] != rs.ABSTAIN)
                ).sum()
            )
        ],
        "Monte Carlo: abstain": [int((probes["mc_predict"] == rs.ABSTAIN).sum())],
        "memory: adopted": [int((probes["memory"] == "adopted").sum())],
        "memory: agrees with the certificate": [int(probes["correct"].sum())],
    }
)
probe_table

# %% tags=["remove-cell"]
fields = {"contradictions": "Monte Carlo: other class", "abstains": "Monte Carlo: abstain"}
fields |= {"adopted": "memory: adopted", "agree": "memory: agrees with the certificate"}
glue_fields(probe_table.iloc[0], "probe_", fields)
glue_all(probe_images=len(secondary.indices), probe_count=len(probes))
assert probe_table["memory: agrees with the certificate"].iloc[0] == len(probes)

# %% [markdown]
# Every probe lies inside a stored region, so the memory answers with that region's
# class by construction; the interesting number is how often the data-dependent
# classifier alone would have broken a certificate. An abstention is not a
# contradiction (the smoothed classifier declines to answer), but a deployed system
# that reads the memory first answers there too.
