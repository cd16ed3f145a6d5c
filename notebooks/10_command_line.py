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
# (manual-command-line)=
# # The command line
#
# `python -m rsutils` (or the `rsutils` console script that the wheel installs) trains,
# certifies and predicts from a terminal. `certify` and `predict` take the arguments of
# Cohen et al.'s `certify.py` and `predict.py` (`dataset base_classifier sigma outfile
# --batch --skip --max --split --N0 --N --alpha`) and write the same TSV columns,
# followed by ours. Every command on this page runs when the book is built: each cell
# passes the command line to {func}`~rsutils.book.manual.run_command`, which prints
# it as a terminal shows it (`$ ...`), runs it, prints its output and fails the build
# unless the command exits with the status the page expects. In a terminal, type the
# line after the `$`. The modes of
# data-dependent and anisotropic noise are on {ref}`manual-noise`, those that certify
# faster (fewer draws, a faster forward pass, several processes) on
# {ref}`manual-faster`.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import os
import tempfile
from pathlib import Path

import rsutils as rs
from rsutils.book import Chapter, glue_all, kill_part_way, run_command
from rsutils.book.manual import describe_page_model, page_model

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed, data folder)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0
reference_root = None  # released artefacts (None: ../shared/reference)

# %% [markdown]
# The page ran at the scale below: the profile sets the number of draws `--N`, that of
# the book's smaller runs; the model is the small one the page trains in section (a),
# the same at every profile.

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
n = chapter.profile.secondary.n  # the scale of the book's smaller runs
# the library page's model, which `train` trains below
config = page_model(seed)
rows = {
    "model": describe_page_model(config),
    "n (estimation draws)": f"{n:,}",
}
chapter.run_at(rows, standard=("n0", "alpha"))

# %% [markdown]
# The commands write into a fresh folder, so every build writes the files anew. The
# subcommands, and what the modes of `certify` do:

# %%
workdir = tempfile.TemporaryDirectory(prefix="rsutils-manual-")
os.chdir(workdir.name)
run_command("python -m rsutils --help")

# %% [markdown]
# ## (a) Train a model
#
# `train` trains a base model with noise augmentation (or SmoothAdv or MACER, with
# `--method`) and saves it as a checkpoint that records its training configuration and
# environment. This one, the model of {ref}`manual-library`, takes seconds: one epoch
# on the first {glue:text}`train_images:,d` training images.
# Training is deterministic for a `--seed` and a `--threads` count (two by default,
# whatever the machine's cores).

# %%
run_command(
    "python -m rsutils train fashion-mnist small_cnn model.pt "
    f"--noise-sd {config.scale:g} --epochs {config.epochs} "
    f"--train-subset {config.train_subset} --seed {config.seed} --quiet"
)
_, info = rs.load_checkpoint("model.pt")
info["meta"]["train_config"]

# %% tags=["remove-cell"]
assert info["meta"]["train_config"] == config.as_dict()
glue_all(train_images=config.train_subset)

# %% [markdown]
# ## (b) Certify and predict
#
# `certify` runs CERTIFY on every `--skip`-th test image (here every 1,000th) into a
# log, one row per image, written as soon as the image is done:

# %%
run_command(
    f"python -m rsutils certify fashion-mnist model.pt 0.25 certify.tsv "
    f"--N0 100 --N {n} --alpha 0.001 --batch 1000 --skip 1000 --quiet"
)
run_command("cut -f 1-6 certify.tsv")

# %% [markdown]
# The log has Cohen et al.'s columns `idx label predict radius correct time` first,
# listed above with `cut` (`predict` is -1 for an abstention, `time` in seconds), then
# ours: the selected class, the count among `n` draws, the settings, the bound
# `pA_lower` and the noise scale. {func}`~rsutils.logs.read.read_log` reads it, and
# Cohen et al.'s released logs, into a table ({ref}`manual-library`); here, our
# columns:

# %%
rs.read_log("certify.tsv").set_index("idx").iloc[:, 5:]

# %% [markdown]
# The settings go to `certify.tsv.json`, with the environments that wrote rows
# (device, threads, torch version) and a digest of the checkpoint, so that a log is
# never resumed with another model:

# %%
run_command("python -m json.tool certify.tsv.json")

# %% [markdown]
# `predict` runs PREDICT with the same arguments (no `--N0`), into a log without a
# radius:

# %%
run_command(
    "python -m rsutils predict fashion-mnist model.pt 0.25 predict.tsv "
    "--N 1000 --alpha 0.001 --skip 1000 --quiet"
)
run_command("head -n 4 predict.tsv")

# %% [markdown]
# ## (c) Resuming a killed run
#
# A killed run resumes where it stopped when the same command is run again. Below, the
# certify command of (b) writes into `killed.tsv`, and is killed with `SIGKILL` as soon
# as its log holds three rows (without warning, possibly while it writes the fourth).
# Run again, it keeps the rows already there, cuts a torn last row, certifies the
# rest, and ends with the rows of the uninterrupted run (only `time` differs).

# %%
certify = (
    f"python -m rsutils certify fashion-mnist model.pt 0.25 killed.tsv "
    f"--N0 100 --N {n} --alpha 0.001 --batch 1000 --skip 1000 --quiet"
)
print("rows when killed:", kill_part_way(certify, "killed.tsv", rows=3))
run_command(certify)
killed, uninterrupted = (
    rs.read_log("killed.tsv"),
    rs.read_log("certify.tsv"),
)
killed.drop(columns="time").equals(uninterrupted.drop(columns="time"))

# %% tags=["remove-cell"]
assert killed.drop(columns="time").equals(
    uninterrupted.drop(columns="time")
)

# %% [markdown]
# A log may also be extended: its rows depend only on the checkpoint, the settings and
# each image's index, so the same command with another `--skip` or `--max` (stop
# before this index) adds the missing rows, as {ref}`manual-library` shows with the
# library's `certify_dataset`. Under `torchrun`, write `--stop` for `--max`
# ({ref}`manual-faster`).
#
# ## (d) Mistakes
#
# The command line checks what it is given before it writes anything. A mistake, here
# a malformed option and a truncated checkpoint, is said in one line (after the usage,
# for a malformed option), with exit status 2, and nothing is written;
# `RSUTILS_TRACEBACK=1` adds the traceback, as the help at the top of this page says.
# `tests/cli/test_errors.py` holds a test for each kind of mistake (a sigma map of the
# wrong shape, a device this machine lacks, an output path that is a folder, ...).

# %%
certify = "python -m rsutils certify fashion-mnist"
run_command(f"{certify} model.pt 0.25 out.tsv --alpha 2", status=2)
Path("truncated.pt").write_bytes(Path("model.pt").read_bytes()[:4096])
run_command(f"{certify} truncated.pt 0.25 out.tsv", status=2)
sorted(path.name for path in Path().glob("out*"))

# %% [markdown]
# A log also names the kind of device its rows were computed on, with the rows of
# every forward pass there (100 on a CPU, 1,000 on a GPU,
# {func}`~rsutils.core.inference.device_identity`): the same model is a different
# base classifier on another kind of device. Resuming a log elsewhere is refused in
# one line; `--allow-device-change` resumes it anyway and records the change in the
# sidecar (`adopted_devices`). Here the sidecar of `certify.tsv` is made to say that
# a GPU wrote it:

# %%
import json

recorded = json.loads(Path("certify.tsv.json").read_text())
elsewhere = {**recorded, "device": "cuda", "rows": 1000}
Path("moved.tsv").write_bytes(Path("certify.tsv").read_bytes())
Path("moved.tsv.json").write_text(json.dumps(elsewhere))
run_command(
    f"{certify} model.pt 0.25 moved.tsv --N0 100 --N {n} --alpha 0.001 "
    "--batch 1000 --skip 1000 --quiet",
    status=2,
)

# %% [markdown]
# ## (e) Your own images: `folder:PATH` and `imagenet`
#
# Besides `fashion-mnist`, `mnist` and `cifar10`, the dataset may be `imagenet` or
# `folder:PATH`. ImageNet is a tree of `train/` and `val/` (the test split, as in
# Cohen et al.'s `certify.py`), each with one folder per class, found by
# `--data-root`, else the `IMAGENET_DIR` or `RSUTILS_DATA` variable, and prepared as
# Cohen et al. did: the short side resized to 256, the centre 224×224 kept.
# `folder:PATH` is a folder of your own in the same layout: one subfolder per class,
# whose sorted names give the labels; with `train/` and `test/` (or `val/`)
# subfolders, `--split` picks one, else PATH is the test split. Images are read when
# they are certified, so a folder may be larger than the memory
# ({mod}`~rsutils.image_folders`).
#
# Here, two test images of each class saved as PNG files, in folders named so that
# their sorted order is the model's class order; the second image of each class is
# enlarged to 56×56:

# %%
from PIL import Image

test = rs.load_dataset("fashion-mnist", "test")
for label, name in enumerate(test.classes):
    folder = Path("my_images") / f"{label}-{name.replace('/', '-')}"
    folder.mkdir(parents=True)
    found = (test.labels == label).nonzero().flatten()[:2].tolist()
    for k, idx in enumerate(found):
        pixels = (test.images[idx, 0] * 255).round().byte().numpy()
        image = Image.fromarray(pixels, "L")
        image.resize((56, 56) if k else (28, 28)).save(
            folder / f"{idx}.png"
        )
run_command("ls my_images")

# %% [markdown]
# The images do not share one size, so the command is refused before it writes
# anything, naming a file that differs and the fix. A folder is checked when it is
# loaded: every image's header is read (not its pixels), so a damaged file or one of
# another size is found before the first draw, not an hour into the run; a file whose
# pixels are damaged behind a sound header is named when its turn comes.

# %%
on_folder = "python -m rsutils certify folder:my_images model.pt 0.25"
run_command(f"{on_folder} folder.tsv --N0 100 --N {n} --quiet", status=2)

# %% [markdown]
# `--image-size 28` resizes each image's short side to 28 pixels and keeps the
# centre 28×28, the input of the page's model:

# %%
run_command(
    f"{on_folder} folder.tsv --N0 100 --N {n} --image-size 28 --quiet"
)
run_command("cut -f 1-6 folder.tsv")

# %% [markdown]
# Folders named by class alone sort in another order than the model's outputs
# (`Ankle boot/` first, though it is class 9). When the model knows its class names
# (a checkpoint of a named dataset, or torchvision's weights by name), the folders'
# names are compared with them: the same classes in another order take the model's
# order, and a notice says so; other names are refused, naming both orders. For
# folders whose names say nothing, `--class-order` lists them in the order of the
# model's outputs, and it is checked against the model's names where it can be:

# %%
import shutil

for folder in Path("my_images").iterdir():
    shutil.copytree(folder, Path("by_name") / folder.name.split("-", 1)[1])
on_names = "python -m rsutils certify folder:by_name model.pt 0.25"
options = f"by_name.tsv --N0 100 --N {n} --image-size 28 --skip 5 --quiet"
run_command(f"{on_names} {options}")
run_command("cut -f 1-5 by_name.tsv")
names = sorted(f"'{path.name}'" for path in Path("by_name").iterdir())
run_command(
    f"{on_names} {options} --class-order {' '.join(names)}", status=2
)

# %% [markdown]
# ## (f) Your own model
#
# `base_classifier` may also be the model you have: a program saved with
# `torch.export.save` (a `.pt2` file), a TorchScript file (`torch.jit.save`), a module
# pickled whole with `torch.save(model, path)`, or `torchvision:NAME`, torchvision's
# classifier NAME with `--weights` (a state-dict file, or torchvision's own weights by
# name, downloaded when online; {mod}`~rsutils.models.sources`). The kind is read
# from the file's content, not its name. rsutils feeds images in [0, 1], so a model
# trained on normalised inputs gets a normalisation layer in front: `--normalize
# DATASET` (that dataset's mean and std) or `--mean` and `--std`. Below, the network
# of `model.pt` without its normalisation layer is exported and certified with
# `--normalize fashion-mnist`: the rows are those of (b), and the sidecar records the
# file's digest and the normalisation.

# %%
import warnings

import torch

model, _ = rs.load_checkpoint("model.pt")  # Sequential(Normalize, network)
example = (torch.rand(2, 1, 28, 28),)
batch = {0: torch.export.Dim("batch")}  # any batch size, not the example's
program = torch.export.export(model[1], example, dynamic_shapes=(batch,))
torch.export.save(program, "network.pt2")
run_command(
    "python -m rsutils certify fashion-mnist network.pt2 0.25 "
    f"exported.tsv --normalize fashion-mnist --N0 100 --N {n} "
    "--alpha 0.001 --batch 1000 --skip 1000 --quiet"
)
run_command("python -m json.tool exported.tsv.json")

# %% tags=["remove-cell"]
assert (
    rs.read_log("exported.tsv")
    .drop(columns="time")
    .equals(rs.read_log("certify.tsv").drop(columns="time"))
)

# %% [markdown]
# A TorchScript file loads the same way. A pickled module is refused unless
# `--trust-pickle` says you trust where it came from, since unpickling runs code
# named in the file:

# %%
with warnings.catch_warnings():  # torch deprecates TorchScript
    warnings.simplefilter("ignore", FutureWarning)
    torch.jit.save(torch.jit.trace(model, example), "model.ts")
torch.save(model, "whole.pt")
predict = "python -m rsutils predict fashion-mnist"
options = "--N 1000 --skip 1000 --quiet"
run_command(f"{predict} model.ts 0.25 scripted.tsv {options}")
run_command(f"{predict} whole.pt 0.25 pickled.tsv {options}", status=2)
run_command(
    f"{predict} whole.pt 0.25 pickled.tsv {options} --trust-pickle"
)

# %% [markdown]
# `torchvision:NAME` needs its weights (or `--untrained`, for tests and demos):
# certifying a network's random initialisation by mistake would give certificates of
# a classifier nobody meant, so the command asks for the weights by name.
# Before any draw, one forward pass checks the model against the dataset's input
# shape and class count: torchvision's classifiers take three-channel images, and
# Fashion-MNIST's have one. With a three-channel dataset, such as `cifar10` or a
# folder of colour images, the same command certifies (with `--normalize` for the
# data the weights were trained on).

# %%
import torchvision

resnet = torchvision.models.resnet18(num_classes=10)
torch.save(resnet.state_dict(), "resnet18.pt")
certify = "python -m rsutils certify fashion-mnist torchvision:resnet18"
run_command(f"{certify} 0.25 out.tsv", status=2)
run_command(f"{certify} 0.25 out.tsv --weights resnet18.pt", status=2)
sorted(path.name for path in Path().glob("out*"))

# %% [markdown]
# ## (g) What logs say: `analyze`
#
# `analyze` reads one or more logs (this library's, or Cohen et al.'s released ones)
# and prints, per log, the number of inputs, the share of abstentions, the ACR, the
# certified accuracy at each radius with its 95% Clopper–Pearson interval over the
# test images, and the run time ({mod}`~rsutils.analysis.report`; for the logs of
# `certify --procedure decide`, {ref}`manual-faster`, the certified accuracy and the
# draws at the radii they asked). `--radii` chooses the radii (by default 0 up to the
# largest radius certified); `--format markdown` or `--format latex` prints a table
# to paste into a paper:

# %%
run_command(
    "python -m rsutils analyze certify.tsv --radii 0 0.25 0.5 "
    "--format markdown"
)

# %% [markdown]
# Logs of the same test images are compared with the first, image by image: the
# difference of ACR and of certified accuracy at each radius, its interval over the
# images (one model each: not over retrained models) and the verdict of the rule the
# book's chapters use, Holm-corrected over the table. The run killed in (c) and
# resumed holds the certificates of the uninterrupted one, so every difference is 0;
# logs of different images are refused in one line, with the fix (`--common` compares
# them on the images they share):

# %%
run_command(
    "python -m rsutils analyze certify.tsv killed.tsv --radii 0 0.5"
)
run_command("python -m rsutils analyze certify.tsv folder.tsv", status=2)

# %% [markdown]
# Cohen et al.'s released CIFAR-10 logs of the models trained and certified at
# $\sigma = 0.25$ and $0.5$ hold the same 500 test images (linked here from the
# folder of released artefacts, not copied). `--plot` draws the curves (it needs
# matplotlib, and says how to install it when it is missing):

# %%
from IPython.display import Image as Picture

from rsutils.book.papers.released import cohen2019_certify_log

released = Path("cohen2019")
released.mkdir()
for sigma in ("0.25", "0.50"):
    log = cohen2019_certify_log(
        "cifar10", sigma, sigma, root=reference_root
    )
    (released / f"sigma_{sigma}").symlink_to(log)
run_command(
    "python -m rsutils analyze cohen2019/sigma_0.25 cohen2019/sigma_0.50 "
    "--radii 0 0.5 1 --plot released.png"
)
Picture("released.png", width=480)

# %% [markdown]
# ## (h) Every option
#
# `--help` after a subcommand lists its options with their defaults:

# %%
run_command("python -m rsutils certify --help")

# %% [markdown]
# ## What holds up
#
# A log written by `certify` holds the certificates that the library gives for the
# same checkpoint and settings, one row per image: a run killed part way and run
# again ends with the rows of the uninterrupted run, and an exported copy of the
# network, with `--normalize`, gives the rows of the checkpoint it came from.
#
# - A log is never resumed with another model, other settings or another kind of
#   device without saying so: the sidecar records the checkpoint's digest, the
#   settings and the environments, and `--allow-device-change` records the change.
# - Mistakes exit with status 2 before anything is written: a malformed option, a
#   truncated checkpoint, images of mixed sizes, a pickle not marked as trusted, a
#   torchvision network without its weights or of the wrong input shape.
# - A folder's labels follow the model's classes wherever its folders' names can be
#   compared with them; where they cannot, `--class-order` says the order.
# - `analyze` compares logs of the same images image by image; its intervals are over
#   the images of one model each, not over retrained models.
# - The page's model, one epoch on {glue:text}`train_images:,d` images, shows the
#   commands, not a good classifier.
