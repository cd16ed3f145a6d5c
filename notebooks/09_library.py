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
# (manual-library)=
# # Certifying your own classifier
#
# `rsutils` certifies any PyTorch classifier by randomized smoothing
# {cite:p}`cohen2019certified`. This page is its manual as a library: a certificate for
# one input, what a certificate refuses, what its numbers depend on, runs over a
# dataset into logs, and checkpoints. Every example runs when the book is built, so
# what it prints is what this version of the library does. The command line has its
# own page ({ref}`manual-command-line`), data-dependent and anisotropic noise theirs
# ({ref}`manual-noise`), and so do faster certificates ({ref}`manual-faster`); the
# {doc}`../api` lists everything.
#
# `pip install .` (or the wheel) installs the library with ranges of torch and
# torchvision rather than this project's pins; everything a user needs is imported
# from `rsutils` itself.

# %%
import json
import os
import shutil
import tempfile
import textwrap
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch

import rsutils as rs
from rsutils.book import Chapter, glue_all
from rsutils.logs.resumable import ResumableLog
from rsutils.training.train import TRAINING_THREADS, evaluate_accuracy

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The page ran at the scale below: the profile sets the number of draws $n$; the
# model is the small one it trains in section (a) at every profile.

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
P = chapter.profile
TRAIN_IMAGES = 2000  # the page's model trains on the first 2,000 training images
chapter.run_at(
    {"model": f"small_cnn, σ = 0.25, 1 epoch on {TRAIN_IMAGES:,} images (section a)"},
    standard=("n0", "n", "alpha"),
)

# %% [markdown]
# The files the examples write go to a fresh folder, so every build writes them anew.

# %%
workdir = tempfile.TemporaryDirectory(prefix="rsutils-manual-")
os.chdir(workdir.name)

# %% [markdown]
# ## (a) A model to certify
#
# Any `torch.nn.Module` that maps a batch of inputs to logits will do. This page
# trains a small CNN for one epoch on {glue:text}`train_images:,d` Fashion-MNIST
# images with Gaussian noise augmentation at σ = 0.25 {cite:p}`xiao2017fashion`, which
# takes seconds; the chapters train the book's real models. Its accuracy on the test
# set is {glue:text}`clean_accuracy:.1%`, and {glue:text}`noisy_accuracy:.1%` on test
# images with one draw of the noise added.

# %%
train = rs.load_dataset("fashion-mnist", "train")
test = rs.load_dataset("fashion-mnist", "test")
config = rs.TrainConfig(scale=0.25, epochs=1, train_subset=TRAIN_IMAGES, seed=seed)
model = rs.train_model(config, train, progress=progress)
clean, noisy = evaluate_accuracy(model, test), evaluate_accuracy(model, test, noise_scale=0.25)

# %% tags=["remove-cell"]
glue_all(train_images=TRAIN_IMAGES, clean_accuracy=clean, noisy_accuracy=noisy)

# %% [markdown]
# ## (b) A certificate
#
# `Smooth` wraps the model with a noise family; `certify` is CERTIFY and `predict` is
# PREDICT. `x` is one input without a batch dimension, in the space where the noise is
# added: pixels as floats in $[0, 1]$, with any normalisation inside the model. The
# noisy copies are drawn on the model's device. A certificate is about the smoothed
# classifier, whatever the true label: a wrong class can be certified too (a log's
# `correct` column, section e, compares it with the label).

# %%
smooth = rs.Smooth(model, num_classes=10, noise=rs.Gaussian(sigma=0.25))
x, label = test.images[0], int(test.labels[0])
cert = smooth.certify(x, n0=100, n=P.certify.n, alpha=0.001, batch_size=1000, seed=seed)
answer = smooth.predict(x, n=1000, alpha=0.001, batch_size=1000, seed=seed)
pd.Series({"true label": label, **cert.as_dict(), "PREDICT's answer": answer}).to_frame("")

# %% [markdown]
# CERTIFY selects a class with $n_0$ draws, counts how many of $n$ fresh draws land in
# it, and bounds that class's probability from below (`pA_lower`, Clopper–Pearson at
# level $\alpha$). With probability at least $1 - \alpha$ the smoothed classifier then
# predicts `prediction` everywhere within `radius` (ℓ2) of `x`. When `pA_lower` is
# below $\tfrac12$ it abstains: `prediction` is `rs.ABSTAIN` ({glue:text}`abstain`) and
# `radius` is 0. PREDICT answers a class, or abstains, with probability at most
# $\alpha$ of answering another class than the smoothed classifier's.

# %% tags=["remove-cell"]
glue_all(abstain=rs.ABSTAIN)

# %% [markdown]
# ## (c) What a certificate refuses
#
# A certificate is never issued on garbage: a bad call raises an error that names the
# fix, before any draw. The input range is part of the smoothed classifier, since
# σ is measured in its units: `input_range=(0.0, 1.0)` is the default, and another
# range, or `None` for any finite input, can be declared. Below, each refused call and
# what it is told.


# %%
def refusal(call) -> str:
    """The error ``call`` raises (it must raise one)."""
    try:
        call()
    except (TypeError, ValueError) as error:
        return f"{type(error).__name__}: {error}"
    raise AssertionError("the call was accepted")


def show_refusals(cases: dict[str, str]) -> None:
    for case, message in cases.items():
        print(f"{case}:", textwrap.fill(message, 92, initial_indent="  ", subsequent_indent="  "))


def certify_with(classifier, x=x):
    return lambda: rs.Smooth(classifier, 10, rs.Gaussian(0.25)).certify(x, 10, 100, 0.001, seed=0)


with_dropout = torch.nn.Sequential(model, torch.nn.Dropout(0.1)).eval()
with_dropout[1].train()  # one submodule left in training mode
with torch.device("meta"):
    not_loaded = rs.build_model("small_cnn", "fashion-mnist").eval()
nan_logits = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 10)).eval()
torch.nn.init.constant_(nan_logits[1].weight, float("nan"))
refused = {
    "integer pixels": certify_with(model, (x * 255).to(torch.uint8)),
    "pixels in 0..255": certify_with(model, x * 255),
    "a NaN pixel": certify_with(model, torch.where(x > 0.5, float("nan"), x)),
    "a Dropout in training mode": certify_with(with_dropout),
    "weights on the meta device": certify_with(not_loaded),
    "NaN logits": certify_with(nan_logits),
}
show_refusals({case: refusal(call) for case, call in refused.items()})

# %% [markdown]
# ## (d) What the numbers depend on
#
# Given a model, a certificate depends only on the model, the input, the settings, the
# `seed` and the input's `index`: the noise for input `index` is drawn from a generator
# seeded by `(seed, index)`. So the batch size, the torch thread count, and how a run
# over a dataset is split or resumed (section e) change nothing:

# %%
rows, threads_before = {}, torch.get_num_threads()
for batch_size in (7, 1000):
    for threads in (1, 2):
        torch.set_num_threads(threads)
        c = smooth.certify(x, 100, 1000, 0.001, batch_size=batch_size, seed=seed, index=0)
        rows[batch_size, threads] = {"count": c.count, "pA_lower": c.pA_lower, "radius": c.radius}
torch.set_num_threads(threads_before)
reproducible = pd.DataFrame(rows).T.rename_axis(["batch size", "threads"])
reproducible

# %% tags=["remove-cell"]
assert (reproducible.nunique() == 1).all(), reproducible

# %% [markdown]
# Training is deterministic for a seed and a thread count, and always runs on
# `TRAINING_THREADS` = {glue:text}`training_threads` threads, whatever the machine's
# core count: training the same configuration again gives the same weights, bit for
# bit. Another kind of CPU, a GPU or another torch version can train another model,
# and every number computed from it then moves; logs, the chapters' run-at tables and
# the {doc}`../status` page record the device, the thread count and the torch version,
# and {doc}`../reproduce` shows how far the book's headline numbers move.

# %%
again = rs.train_model(config, train, progress=progress)
same = [torch.equal(w, again.state_dict()[name]) for name, w in model.state_dict().items()]
all(same)

# %% tags=["remove-cell"]
assert all(same)
glue_all(training_threads=TRAINING_THREADS)

# %% [markdown]
# ## (e) A dataset into a log
#
# Over a dataset, the Monte Carlo settings travel as one `CertifySettings`, and
# `certify_dataset` writes one row per input into the TSV log of Cohen et al.'s
# `certify.py`: their columns `idx label predict radius correct time` first, then ours.
# Here every 1,000th test image, {glue:text}`log_images` of them:

# %%
settings = rs.CertifySettings(n0=100, n=P.certify.n, alpha=0.001, seed=seed, batch_size=1000)
indices = range(0, len(test), 1000)
log = rs.certify_dataset(smooth, test, indices, "certify.tsv", settings, progress=progress)
log.drop(columns="time")  # seconds per input: the one column that changes between runs

# %% [markdown]
# `read_log` reads ours and Cohen et al.'s logs alike, and the analyses take either:
# the certified accuracy at each radius (the fraction of inputs certified correctly
# with at least that radius), the average certified radius, and the tables of the
# papers (`accuracy_table`).

# %%
read = rs.read_log("certify.tsv")
radii = [0.0, 0.25, 0.5]
pd.Series(rs.certified_accuracy(read, radii), index=[f"r = {r}" for r in radii]).to_frame(
    "certified accuracy"
).T.assign(ACR=rs.average_certified_radius(read))

# %% tags=["remove-cell"]
glue_all(log_images=len(read))

# %% [markdown]
# Each row is flushed as soon as its input is done, and a settings file
# (`certify.tsv.json`) is written next to the log first. A run that is killed resumes
# where it stopped when called again with the same settings: the rows already there
# are kept, a torn last row (a kill in mid-write) is cut, and only the missing inputs
# are certified. Here a log of the first four inputs, with the start of a fifth row
# torn off, is resumed over all of them, and gives the rows of the uninterrupted run:

# %%
rs.certify_dataset(smooth, test, indices[:4], "resumed.tsv", settings, progress=progress)
with open("resumed.tsv", "a") as torn:
    torn.write("4000\t9\t9\t0.3")
resumed = rs.certify_dataset(smooth, test, indices, "resumed.tsv", settings, progress=progress)
resumed.drop(columns="time").equals(log.drop(columns="time"))

# %% tags=["remove-cell"]
assert resumed.drop(columns="time").equals(log.drop(columns="time"))

# %% [markdown]
# A log is never appended to unless it can be checked. Resuming with other settings, a
# log whose settings file is gone, a damaged row before the last good one, a second
# writer while a run holds the log (a lock that the kernel releases when its holder
# dies, so a killed run leaves nothing locked) and a folder as the log are refused:


# %%
def resume(path: str, run_settings=settings):
    return lambda: rs.certify_dataset(smooth, test, indices, path, run_settings, progress=False)


lines = Path("certify.tsv").read_text().splitlines(keepends=True)
Path("no-settings.tsv").write_text("".join(lines))
Path("damaged.tsv").write_text("".join([*lines[:3], "garbage\n", *lines[3:]]))
shutil.copy("certify.tsv.json", "damaged.tsv.json")
Path("a-folder").mkdir()
recorded = json.loads(Path("certify.tsv.json").read_text())
recorded.pop("environments")  # the settings another writer opens the log with
with ResumableLog("certify.tsv", lines[0].rstrip("\n").split("\t"), recorded):
    second_writer = refusal(resume("certify.tsv"))
log_refusals = {
    "other settings (n = 500)": refusal(resume("certify.tsv", replace(settings, n=500))),
    "no settings file": refusal(resume("no-settings.tsv")),
    "a damaged row": refusal(resume("damaged.tsv")),
    "a second writer": second_writer,
    "a folder": refusal(resume("a-folder")),
}
show_refusals(log_refusals)

# %% [markdown]
# ## (f) Checkpoints
#
# `save_checkpoint` writes a model with its architecture and dataset (and whatever
# `meta` holds, here the training configuration), atomically: a killed save leaves no
# torn file. `load_checkpoint` reads ours and Cohen et al.'s `{'arch', 'state_dict'}`
# format (`resnet50`, `cifar_resnet20`, `cifar_resnet110`, with or without the
# `module.` prefixes of `DataParallel`), always with `torch.load(weights_only=True)`, so
# a checkpoint from elsewhere cannot run code, and returns the model in eval mode.

# %%
rs.save_checkpoint(
    model, "model.pt", arch="small_cnn", dataset="fashion-mnist", meta={"train": config.as_dict()}
)
loaded, info = rs.load_checkpoint("model.pt")
network = rs.build_model("cifar_resnet20", "cifar10")[1]  # as Cohen et al. saved theirs:
weights = {f"module.{key}": value for key, value in network.state_dict().items()}
torch.save({"arch": "cifar_resnet20", "state_dict": weights}, "cohen.pth.tar")
cohen, cohen_info = rs.load_checkpoint("cohen.pth.tar")
pd.DataFrame(
    {
        "ours": [info["arch"], info["dataset"], not loaded.training],
        "Cohen et al.'s": [cohen_info["arch"], cohen_info["dataset"], not cohen.training],
    },
    index=["arch", "dataset", "in eval mode"],
)

# %% tags=["remove-cell"]
assert all(torch.equal(a, loaded.state_dict()[k]) for k, a in model.state_dict().items())
