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
# {cite:p}`cohen2019certified`. This page is its manual as a library:
#
# - (a), (b): a model, and a certificate for one input;
# - (c), (d): what a certificate refuses, and what its numbers depend on;
# - (e), (f): runs over a dataset into logs that resume, and checkpoints.
#
# Every example runs when the book is built, so what it prints is what this version
# of the library does. The command line has its
# own page ({ref}`manual-command-line`), data-dependent and anisotropic noise theirs
# ({ref}`manual-noise`), and so do faster certificates ({ref}`manual-faster`); the
# {doc}`../api` lists everything.
#
# `pip install .` (or the wheel) installs the library with ranges of torch and
# torchvision rather than this project's pins. Everything a user needs is imported
# from `rsutils` itself; the page also uses three names from its subpackages (a
# model's accuracy, the training thread count and the log class), and the book's own
# helpers from `rsutils.book`, which the library does not need.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import json
import os
import tempfile
import textwrap
import warnings
from dataclasses import replace
from pathlib import Path

import pandas as pd
import torch

import rsutils as rs
from rsutils.book import Chapter, glue_all, show_refusals
from rsutils.book.manual import describe_page_model, page_model
from rsutils.logs.resumable import ResumableLog
from rsutils.training.train import TRAINING_THREADS, evaluate_accuracy

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The page ran at the scale below. The profile sets only the number of draws $n$, that
# of the book's smaller runs; the model is the small one the page trains in section
# (a), the same at every profile.

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
n = chapter.profile.secondary.n  # the scale of the book's smaller runs
model_row = describe_page_model(page_model(seed))
rows = {"model": model_row, "n (estimation draws)": f"{n:,}"}
chapter.run_at(rows, standard=("n0", "alpha"))

# %% [markdown]
# The files the examples write go to a fresh folder, so that every build writes them
# anew instead of finding the last build's logs and resuming them.

# %%
workdir = tempfile.TemporaryDirectory(prefix="rsutils-manual-")
os.chdir(workdir.name)

# %% [markdown]
# ## (a) A model to certify
#
# Any `torch.nn.Module` that maps a batch of inputs to logits will do. This page
# trains a small CNN for one epoch on {glue:text}`train_images:,d` Fashion-MNIST
# images {cite:p}`xiao2017fashion`, with Gaussian noise augmentation at σ = 0.25: a
# smoothed classifier is only as good as its base model is on noisy copies of an
# input, so the base model sees such copies in training. It takes seconds; the
# chapters train the book's real models. Its accuracy on the test set is
# {glue:text}`clean_accuracy:.1%`, and {glue:text}`noisy_accuracy:.1%` on test images
# with one draw of the noise added.
#
# `TrainConfig` holds everything that determines the trained weights: the architecture
# and dataset (`small_cnn` for Fashion-MNIST by default), the noise family and its
# scale, the epochs, batch size and learning rate, the training subset and the seed.
# `load_dataset` returns the split as tensors, pixels in $[0, 1]$, and `train_model`
# returns the model in eval mode, ready to be smoothed.

# %%
train = rs.load_dataset("fashion-mnist", "train")
test = rs.load_dataset("fashion-mnist", "test")
config = rs.TrainConfig(scale=0.25, epochs=1, train_subset=2000, seed=seed)
model = rs.train_model(config, train, progress=progress)
clean = evaluate_accuracy(model, test)
noisy = evaluate_accuracy(model, test, noise_scale=0.25)

# %% tags=["remove-cell"]
assert config == page_model(seed), "the model the other manual pages train"
glue_all(train_images=config.train_subset)
glue_all(clean_accuracy=clean, noisy_accuracy=noisy)

# %% [markdown]
# ## (b) A certificate
#
# `Smooth` wraps the model with a noise family; `certify` is CERTIFY and `predict` is
# PREDICT. `x` is one input without a batch dimension, in the space where the noise is
# added: pixels as floats in $[0, 1]$, with any normalisation inside the model. The
# noisy copies are drawn on the model's device, `batch_size` (1,000 by default) at a
# time. The arguments are those of Cohen et al.'s code: $n_0$ draws select the class,
# $n$ more estimate its probability, and $\alpha$ is the probability that the answer
# is wrong.

# %%
smooth = rs.Smooth(model, num_classes=10, noise=rs.Gaussian(sigma=0.25))
x, label = test.images[0], int(test.labels[0])
cert = smooth.certify(x, n0=100, n=n, alpha=0.001, seed=seed)
answer = smooth.predict(x, n=1000, alpha=0.001, seed=seed)
shown = {"label": label, **cert.as_dict(), "PREDICT": answer}
pd.Series(shown).to_frame("")

# %% [markdown]
# CERTIFY counts how many of the $n$ draws land in the selected class, and bounds that
# class's probability from below (`pA_lower`, Clopper–Pearson at level $\alpha$). With
# probability at least $1 - \alpha$ the smoothed classifier then predicts
# `prediction` everywhere within `radius` (ℓ2) of `x`. When `pA_lower` is below
# $\tfrac12$ it abstains: `prediction` is `rs.ABSTAIN` ({glue:text}`abstain`) and
# `radius` is 0. PREDICT answers a class, or abstains; it answers another class than
# the smoothed classifier's with probability at most $\alpha$.
#
# A certificate is about the smoothed classifier, whatever the true label: a wrong
# class can be certified too, and a log's `correct` column (section e) compares the
# answer with the label. `seed` and `index` name the noise, so the same call gives the
# same certificate again; without a `seed`, each call draws a fresh one.

# %% tags=["remove-cell"]
glue_all(abstain=rs.ABSTAIN)

# %% [markdown]
# ## (c) What a certificate refuses
#
# A certificate is never issued on garbage: a bad call raises an error that names the
# fix, before any draw. The input range is part of the smoothed classifier, since σ is
# measured in its units: `input_range=(0.0, 1.0)` is the default, and another range,
# or `None` for any finite input, can be declared. A model must be in eval mode in
# every submodule (a Dropout in training mode would make the counts depend on more than
# the seed), its weights must be loaded, and its outputs finite on every batch of
# noisy copies.
#
# Each case below builds a bad input or model, and
# {func}`~rsutils.book.manual.show_refusals` prints the error that certifying it gets.
# It fails the build if a call is accepted, so the page cannot claim a refusal that
# does not happen. The last check, for outputs that are not finite, runs on the device
# with every batch of noisy copies and is read once per input, so a model that breaks
# on some noise, not on the clean input, is caught too.


# %%
def certify_with(classifier, image=x):
    smoothed = rs.Smooth(classifier, 10, rs.Gaussian(0.25))
    return lambda: smoothed.certify(image, 10, 100, 0.001, seed=0)


with_dropout = torch.nn.Sequential(model, torch.nn.Dropout(0.1)).eval()
with_dropout[1].train()  # one submodule left in training mode
with torch.device("meta"):
    not_loaded = rs.build_model("small_cnn", "fashion-mnist").eval()
linear = torch.nn.Linear(784, 10)
torch.nn.init.constant_(linear.weight, float("nan"))
nan_logits = torch.nn.Sequential(torch.nn.Flatten(), linear).eval()
cases = {
    "integer pixels": certify_with(model, (x * 255).to(torch.uint8)),
    "pixels in 0..255": certify_with(model, x * 255),
    "a NaN pixel": certify_with(model, torch.where(x > 0.5, torch.nan, x)),
    "a Dropout in training mode": certify_with(with_dropout),
    "weights on the meta device": certify_with(not_loaded),
    "NaN logits": certify_with(nan_logits),
}
show_refusals(cases)

# %% [markdown]
# ## (d) What the numbers depend on
#
# Given a model, a certificate depends only on the model, the input, the settings, the
# `seed` and the input's `index`: the noise for input `index` is drawn from a generator
# seeded by `(seed, index)`, and nothing else feeds it. So neither the batch size nor
# the number of torch threads changes a certificate, and neither does how a run over a
# dataset is split or resumed (section e, and the sharded run of
# {ref}`manual-faster`). Here the certificate of (b) is made again, at $n$ = 1,000, for
# two batch sizes and two thread counts:

# %%
rows, threads_before = {}, torch.get_num_threads()
for batch in (7, 1000):
    for threads in (1, 2):
        torch.set_num_threads(threads)
        c = smooth.certify(x, 100, 1000, 0.001, batch, seed=seed)
        rows[batch, threads] = [c.count, c.pA_lower, c.radius]
torch.set_num_threads(threads_before)
reproducible = pd.DataFrame(rows, index=["count", "pA_lower", "radius"]).T
reproducible.rename_axis(["batch size", "threads"])

# %% tags=["remove-cell"]
assert (reproducible.nunique() == 1).all(), reproducible

# %% [markdown]
# Training is deterministic for a seed and a thread count, and always runs on
# `TRAINING_THREADS` = {glue:text}`training_threads` threads, whatever the machine's
# core count: a sum split across more threads rounds differently, so the thread count,
# not the machine, must be fixed. Training the configuration of (a) again gives the
# same weights, bit for bit. Another kind of CPU, a GPU or another torch version can
# train another model, and every number computed from it then moves; logs, the
# chapters' run-at tables and the {doc}`../status` page record the device, the thread
# count and the torch version, and {doc}`../reproduce` shows how far the book's
# headline numbers move with a retrained model.

# %%
again = rs.train_model(config, train, progress=progress).state_dict()
all(torch.equal(w, again[k]) for k, w in model.state_dict().items())

# %% tags=["remove-cell"]
assert all(torch.equal(w, again[k]) for k, w in model.state_dict().items())
glue_all(training_threads=TRAINING_THREADS)

# %% [markdown]
# ## (e) A dataset into a log
#
# Over a dataset, the Monte Carlo settings travel as one `CertifySettings`, and
# `certify_dataset` writes one row per input into the TSV log of Cohen et al.'s
# `certify.py`. `CertifySettings` holds CERTIFY's arguments (`n0`, `n`, `alpha`,
# `seed`, `batch_size`, with Cohen et al.'s values as defaults), and the log records
# them with the noise, the dataset and whatever identifies the model, so that a resumed
# run can be checked against them. Here every 1,000th test image,
# {glue:text}`log_images` of them; the log's columns are printed above a table of some
# of them.

# %%
settings = rs.CertifySettings(n0=100, n=n, alpha=0.001, seed=seed)
indices = range(0, len(test), 1000)
log = rs.certify_dataset(
    smooth, test, indices, "certify.tsv", settings, progress=progress
)
print(textwrap.fill(" ".join(log.columns), 75))
log[["idx", "label", "predict", "radius", "correct", "count", "pA_lower"]]

# %% [markdown]
# The log has Cohen et al.'s columns `idx label predict radius correct time` first
# (`time` is the seconds each input took, the one column that changes from run to run,
# left out of the table), then ours: the selected class, the count, the settings, the
# bound and the noise scale. `read_log` reads ours and Cohen et al.'s logs alike, and
# the analyses take either: the certified accuracy at each radius (the fraction of
# inputs certified correctly with at least that radius), the average certified radius
# (ACR), and the papers' tables (`accuracy_table`).

# %%
read = rs.read_log("certify.tsv")
radii = [0.0, 0.25, 0.5]
accuracy = rs.certified_accuracy(read, radii)
table = pd.DataFrame([accuracy], columns=[f"r = {r}" for r in radii])
table.assign(ACR=rs.average_certified_radius(read))

# %% tags=["remove-cell"]
glue_all(log_images=len(read))

# %% [markdown]
# Each row is flushed to disk as soon as its input is done, and a settings file
# (`certify.tsv.json`) is written next to the log first. A run that is killed resumes
# where it stopped when called again with the same settings: the rows already there
# are kept, a torn last row (a kill in mid-write) is cut, and only the missing inputs
# are certified. Here a log of the first four inputs, with the start of a fifth row
# torn off, is resumed over all ten, and ends with the rows of the uninterrupted run.
# The resumed run says what it cut, in a `LogRepairedWarning` (caught here to print
# its message). The same mechanism extends a finished log with more inputs.

# %%
first_four = indices[:4]
rs.certify_dataset(
    smooth, test, first_four, "resumed.tsv", settings, progress=progress
)
with open("resumed.tsv", "a") as torn:
    torn.write("4000\t9\t9\t0.3")
with warnings.catch_warnings(record=True) as repaired:
    warnings.simplefilter("always", rs.LogRepairedWarning)
    resumed = rs.certify_dataset(
        smooth, test, indices, "resumed.tsv", settings, progress=progress
    )
print(*(textwrap.fill(f"{w.message}", 75) for w in repaired))
resumed.drop(columns="time").equals(log.drop(columns="time"))

# %% tags=["remove-cell"]
assert resumed.drop(columns="time").equals(log.drop(columns="time"))

# %% [markdown]
# A log is never appended to unless it can be checked. It is refused when resumed with
# other settings, when its settings file is gone, when a row before the last good one
# is damaged, when another writer holds it, and when the path is a folder. One writer
# at a time is kept by a lock on `certify.tsv.lock` that the operating system releases
# when its holder dies, so a killed run leaves nothing locked
# ({ref}`manual-command-line` kills one). The cell makes each situation: copies of the
# log without its settings file and with a damaged row, a folder, and a second
# `ResumableLog` holding the log open with its own settings. Then it shows what a run
# that resumes each is told.


# %%
def resume(path: str, run_settings=settings):
    return lambda: rs.certify_dataset(
        smooth, test, indices, path, run_settings, progress=False
    )


lines = Path("certify.tsv").read_text().splitlines(keepends=True)
Path("no-settings.tsv").write_text("".join(lines))
Path("damaged.tsv").write_text(
    "".join([*lines[:3], "garbage\n", *lines[3:]])
)
Path("damaged.tsv.json").write_text(Path("certify.tsv.json").read_text())
Path("a-folder").mkdir()
recorded = json.loads(Path("certify.tsv.json").read_text())
recorded.pop("environments")  # the settings, without where they ran
header = lines[0].rstrip("\n").split("\t")
with ResumableLog("certify.tsv", header, recorded):  # a second writer
    show_refusals({"a second writer": resume("certify.tsv")})
other = replace(settings, n=500)
show_refusals(
    {
        "other settings (n = 500)": resume("certify.tsv", other),
        "no settings file": resume("no-settings.tsv"),
        "a damaged row": resume("damaged.tsv"),
        "a folder": resume("a-folder"),
    }
)

# %% [markdown]
# ## (f) Checkpoints
#
# `save_checkpoint` writes a model with its architecture and dataset, and whatever
# `meta` holds (here the training configuration); it writes through a temporary file,
# so a killed save leaves no torn file. `load_checkpoint` reads ours and Cohen et al.'s
# `{'arch', 'state_dict'}` format (`resnet50`, `cifar_resnet20`, `cifar_resnet110`,
# with or without the `module.` prefixes of `DataParallel`). It always reads with
# `torch.load(weights_only=True)`, so that a checkpoint from elsewhere cannot run code,
# and returns the model in eval mode with what the file says about it.
#
# The `meta` of our checkpoints is a free dictionary: `python -m rsutils train` stores
# its training configuration and environment there ({ref}`manual-command-line` shows
# one). Below, the page's model goes through our format, and a CIFAR-10 ResNet-20,
# saved as Cohen et al.'s code saved theirs, is read back:

# %%
meta = {"train": config.as_dict()}
arch = {"arch": "small_cnn", "dataset": "fashion-mnist"}
rs.save_checkpoint(model, "model.pt", **arch, meta=meta)
loaded, info = rs.load_checkpoint("model.pt")
network = rs.build_model("cifar_resnet20", "cifar10")[1]
state = {f"module.{k}": v for k, v in network.state_dict().items()}
torch.save(
    {"arch": "cifar_resnet20", "state_dict": state}, "cohen.pth.tar"
)
cohen, cohen_info = rs.load_checkpoint("cohen.pth.tar")
both = {"ours": (loaded, info), "Cohen et al.'s": (cohen, cohen_info)}
pd.DataFrame(
    {
        k: [i["arch"], i["dataset"], not m.training]
        for k, (m, i) in both.items()
    },
    index=["arch", "dataset", "in eval mode"],
)

# %% tags=["remove-cell"]
state = loaded.state_dict()
assert all(torch.equal(w, state[k]) for k, w in model.state_dict().items())

# %% [markdown]
# ## What holds up
#
# A certificate from `certify` holds for the model you give it, at level $\alpha$:
# with probability at least $1 - \alpha$ the smoothed classifier predicts
# `prediction` everywhere within `radius` (ℓ2) of `x`, whether or not that class is
# the true label.
#
# - It is a function of the model, the input, the settings, `seed` and `index`: the
#   batch size and the thread count did not change it (section d), and a log resumed
#   after a torn row ends with the rows of the uninterrupted run (section e).
# - Garbage is refused before any draw: integer or out-of-range pixels, NaN inputs or
#   logits, a module left in training mode, weights not loaded, and logs that cannot
#   be checked.
# - Its limits: it is about the smoothed classifier of *this* base model on *this*
#   device kind and torch version; training is reproducible only for a seed and
#   `TRAINING_THREADS` = {glue:text}`training_threads` threads, and a retrained model
#   is another classifier. The page's model ({glue:text}`clean_accuracy:.1%` clean
#   accuracy) shows the calls, not a good classifier.
