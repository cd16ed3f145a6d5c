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

# %%
import os
import tempfile
from pathlib import Path

import rsutils as rs
from rsutils.book import Chapter, glue_all, kill_part_way, run_command
from rsutils.book.manual import describe_page_model, page_model

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

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
# ## (e) Every option
#
# `--help` after a subcommand lists its options with their defaults:

# %%
run_command("python -m rsutils certify --help")
