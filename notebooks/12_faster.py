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
# (manual-faster)=
# # Certifying faster
#
# CERTIFY spends $n_0 + n$ forward passes of the base model on every input, and nearly
# all of its time is that forward pass on noisy copies. This page shows how `rsutils`
# certifies faster, and how to measure it:
#
# - (b) fewer draws for the same guarantee;
# - (c) a faster forward pass;
# - (d) several processes;
# - (e) `bench` and `device-check`, which time this machine;
# - (f) training faster.
#
# {ref}`chapter-fewer-draws` measures the first two on the book's models.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import os
import tempfile
import time
from dataclasses import replace

import pandas as pd

import rsutils as rs
import rsutils.book.measurements as measurements
from rsutils.analysis.differences import replicated_comparisons
from rsutils.book import (
    BOOK_SIGMAS,
    Chapter,
    glue_all,
    run_chose,
    run_command,
)
from rsutils.book.manual import describe_page_model, page_model
from rsutils.book.margins import MARGINS
from rsutils.book.profiles import PROFILES
from rsutils.cli.bench import BenchSettings, benchmark_modes
from rsutils.core.confidence import min_samples_for_radius
from rsutils.core.inference import fixed_rows
from rsutils.sequential.runs import read_procedure_log
from rsutils.training.speed import training_step_seconds

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The page ran at the scale below: the profile sets the number of draws $n$, that of
# the book's smaller runs; the model is the small one trained in section (a).

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
n = chapter.profile.secondary.n  # the scale of the book's smaller runs
model_row = describe_page_model(page_model(seed))
rows = {"model": model_row, "n (estimation draws)": f"{n:,}"}
chapter.run_at(rows, standard=("n0", "alpha"))

# %% [markdown]
# ## (a) A model, saved for the command line
#
# The same small model as on {ref}`manual-library`, saved for the commands, in a fresh
# folder. `CERTIFY` and `ON_THREE` hold the parts of the command lines below that do
# not change: the model and its σ, and three test images (every 1,000th, up to index
# 3,000) at the page's $n$. Each command prints its line, `$ ...`, before its output.

# %%
workdir = tempfile.TemporaryDirectory(prefix="rsutils-manual-")
os.chdir(workdir.name)
train = rs.load_dataset("fashion-mnist", "train")
test = rs.load_dataset("fashion-mnist", "test")
config = page_model(seed)  # the TrainConfig of the library page
model = rs.train_model(config, train, progress=progress)
ARCH = {"arch": "small_cnn", "dataset": "fashion-mnist"}
rs.save_checkpoint(model, "model.pt", **ARCH)
smooth, x = rs.Smooth(model, 10, rs.Gaussian(0.25)), test.images[2000]
CERTIFY = "python -m rsutils certify fashion-mnist model.pt 0.25"
ON_THREE = f"--N {n} --skip 1000 --max 3000 --quiet"

# %% [markdown]
# ## (b) Fewer draws for the same guarantee
#
# The procedures of {mod}`rsutils.sequential` stop before $n$ draws at the same
# $\alpha$. Each is one frozen object, its settings, and runs live on an input with
# `rs.settle(procedure, smooth, x, ...)`. `Decide` answers "is `x` certified at radius
# $r$?". With a `LookSchedule` it looks at prefixes of CERTIFY's stream of draws after
# 32, 64, … up to $n$ draws, and at each look tests at that look's level; the levels
# sum to $\alpha$, so a *certified* holds with probability at least $1 - \alpha$
# whatever the look it stopped at.
#
# `PlannedDraws` answers "what radius do at most $n$ draws give?". The $n_0$
# selection draws also estimate $p_A$, and choose how many estimation draws lose at
# most about `radius_loss` of radius against all $n$ {cite:p}`chen2022input`; those
# draws certify at the full $\alpha$, and the certificate records how many it used.
# Both beside CERTIFY on the same input, with the forward passes each spent:

# %%
schedule = rs.LookSchedule.geometric(n, 0.001)
decide = rs.Decide(schedule, radii=(0.5,))
(answer,) = rs.settle(decide, smooth, x, n0=100, seed=seed)
plan = rs.PlannedDraws(n_max=n, alpha=0.001, radius_loss=0.05)
planned = rs.settle(plan, smooth, x, n0=100, seed=seed)
full = smooth.certify(x, n0=100, n=n, alpha=0.001, seed=seed)
rows = {
    "Decide, r = 0.5": [answer.certified, "", answer.forward_passes],
    "PlannedDraws": [
        "",
        f"{planned.radius:.4f}",
        planned.n0 + planned.n,
    ],
    "CERTIFY": ["", f"{full.radius:.4f}", full.n0 + full.n],
}
columns = ["certified at r", "radius", "forward passes"]
pd.DataFrame.from_dict(rows, orient="index", columns=columns)

# %% [markdown]
# The schedule's looks were {glue:text}`looks`. Neither procedure beats the floor
# $\ln\alpha / \ln\Phi(r/\sigma)$ of draws below which no level-$\alpha$ test certifies
# radius $r$ (here {glue:text}`floor_half:,d` draws for $r = 0.5$, σ = 0.25): inputs
# whose radius is near CERTIFY's ceiling need nearly all $n$ draws whichever way they
# are certified. `rs.run_procedure` runs any procedure over a dataset into a
# resumable log, `rs.replay` runs it on recorded draws (`rs.record_draws`), and
# `rs.false_rate` counts its false certificates on draws whose answer is known.
#
# On the command line, `certify --procedure NAME` runs a procedure by its name, with
# the options it takes: `decide --radii R [R ...]` writes `certified@R` and `draws@R`
# per radius; `planned --radius-loss L` writes CERTIFY's log, its `n` column each
# input's own number of draws. The tables show the logs as
# {func}`~rsutils.sequential.runs.read_procedure_log` reads them, without the `time`
# column and the settings every row shares (`n0`, `alpha`, `scale` and `seed`):

# %% tags=["remove-cell"]
glue_all(
    looks=", ".join(f"{look:,}" for look in schedule.looks),
    floor_half=min_samples_for_radius(0.5 / 0.25, 0.001),
)

# %%
DECIDE = "--procedure decide --radii 0.25 0.5"
run_command(f"{CERTIFY} decide.tsv {DECIDE} {ON_THREE}")
shared = ["time", "n0", "alpha", "scale", "seed"]
decisions = read_procedure_log("decide.tsv")
decisions.drop(columns=decisions.columns.intersection(shared)).set_index(
    "idx"
)

# %%
PLANNED = "--procedure planned --radius-loss 0.05"
run_command(f"{CERTIFY} planned.tsv {PLANNED} {ON_THREE}")
rs.read_log("planned.tsv").drop(columns=shared).set_index("idx")

# %% [markdown]
# `--test sequence` replaces the spending looks with a confidence sequence
# ({class}`~rsutils.sequential.sequence.AnytimeSchedule`: a test after every batch at the
# full $\alpha$, valid whenever it stops), and `--test randomised` randomises
# Clopper–Pearson at the spending looks, writing each input's uniform `u` in the
# log. `--true-label` is for measuring certified accuracy on a labelled test set:
# it tests each input's label with no selection draws, so it certifies nothing a
# deployed classifier could use. Both together, on the same three images:

# %%
label_run = f"label.tsv {DECIDE} --test sequence --true-label"
run_command(f"{CERTIFY} {label_run} {ON_THREE}")
labelled = read_procedure_log("label.tsv")
labelled.drop(columns=labelled.columns.intersection(shared)).set_index(
    "idx"
)

# %% [markdown]
# ## (c) A faster forward pass
#
# `Smooth(..., inference=...)` runs the base model in one of {glue:text}`modes`:
# `bf16_channels_last` is bfloat16 autocast in the NHWC memory layout, which recent x86
# CPUs (with AMX or AVX512-BF16) and GPUs run several times as fast as float32. That is
# a different base classifier, and its certificates are exact for it, not for the
# float32 model; logs record the mode, and certificates stay deterministic for a seed
# and a mode. CERTIFY also needs the base classifier to be one function: kernels choose
# their order of summation by the batch's shape, so a draw near a tie could change
# class with the batch it comes in. Every mode therefore calls the model on batches of
# one fixed shape, {glue:text}`rows` inputs on a CPU (the last chunk padded), and a
# draw's logits are bit for bit the same whatever its batch
# ({func}`~rsutils.core.inference.fixed_rows`). The Monte Carlo loop runs at about
# the speed of the forward pass, so a faster forward pass is a faster certificate. Ten test images at $n$ =
# {glue:text}`n:,d`, in float32 and in `bf16_channels_last`, timed on the machine that
# built this page:

# %%
timed, comparison = {}, {}
for mode in ("fp32", "bf16_channels_last"):
    fast = rs.Smooth(model, 10, rs.Gaussian(0.25), inference=mode)
    start = time.perf_counter()
    certs = [
        fast.certify(image, 100, n, 0.001, seed=seed, index=i)
        for i, image in enumerate(test.images[:10])
    ]
    timed[mode] = time.perf_counter() - start
    comparison[mode, "prediction"] = [c.prediction for c in certs]
    comparison[mode, "radius"] = [c.radius for c in certs]
print(
    "seconds:",
    {mode: round(seconds, 1) for mode, seconds in timed.items()},
)
pd.DataFrame(comparison).rename_axis("test image")

# %% tags=["remove-cell"]
glue_all(modes=", ".join(f"`{m}`" for m in rs.INFERENCE_MODES), n=n)
glue_all(rows=fixed_rows("cpu"))
glue_all(speedup=timed["fp32"] / timed["bf16_channels_last"])

# %% [markdown]
# Here `bf16_channels_last` certified {glue:text}`speedup:.1f` times as fast as
# float32: a timing of this build, on a machine other builds may share, and on a CPU
# without bfloat16 units it can be slower. Where the two modes' radii differ, the
# counts differ: the two base classifiers disagree on a few noisy copies.
# Data-dependent certification takes the mode too (`DataDependentSmooth(...,
# inference=...)`, or `--ascent-steps K --inference ...`): CERTIFY runs in it, sigma
# ascent in float32, since it only chooses each input's σ. On the command line,
# `--inference`; the log's settings record the mode:

# %%
run_command(
    f"{CERTIFY} bf16.tsv --inference bf16_channels_last {ON_THREE}"
)
run_command("grep inference bf16.tsv.json")

# %% [markdown]
# ## (d) Several processes
#
# `torchrun` splits a run across processes (gloo on CPUs, NCCL with one GPU per local
# rank): each rank certifies every $K$-th input into a resumable shard, and rank 0
# merges the shards into the log a single process writes, rows identical but for
# `time`. Under torchrun write `--stop` for `--max`, since torchrun reads `--max` as
# its own option. `OMP_NUM_THREADS=1` gives each process one thread (torchrun would
# set it, with a warning). Two processes on this machine's CPU, against one, on four
# test images:

# %%
TORCHRUN = "OMP_NUM_THREADS=1 torchrun --standalone --nproc_per_node 2"
SHARDED = "-m rsutils certify fashion-mnist model.pt 0.25 sharded.tsv"
ON_FOUR = f"--N {n} --skip 1000 --device cpu --quiet"
run_command(f"{TORCHRUN} {SHARDED} --stop 4000 {ON_FOUR}")
run_command(f"{CERTIFY} single.tsv --max 4000 {ON_FOUR}")
sharded, single = rs.read_log("sharded.tsv"), rs.read_log("single.tsv")
sharded.drop(columns="time").equals(single.drop(columns="time"))

# %% tags=["remove-cell"]
assert sharded.drop(columns="time").equals(single.drop(columns="time"))

# %% [markdown]
# On several machines, the same command runs on each with `--nnodes 2 --node-rank R
# --rdzv-endpoint HOST:29500` instead of `--standalone` (the book cannot show this
# one: it builds on one machine). With GPUs, `--nproc_per_node` is the number of GPUs,
# and each rank certifies on its own.
#
# ## (e) How fast this machine certifies
#
# `bench` times the base model's raw forward pass and the Monte Carlo loop (noise,
# forward pass, counting) for a checkpoint or a random network, in each inference mode
# against the float32 forward. `ratio` is the loop's throughput over the raw
# forward's (1.0: the loop adds nothing to the forward pass), `best` the same from the
# fastest rounds, and `bound` the ratio the loop would reach if drawing the noise were
# its only other cost. With `--sampler plain sound` it times each mode with both
# samplers of {ref}`manual-noise` in the same rounds, so the `sampling` column of a
# `+sound` row against its plain row is what the sound sampler costs there. A short
# run of the page's model, two batches of 200 per timing, so its numbers are rough:

# %%
bench = "python -m rsutils bench --checkpoint model.pt --device cpu"
modes = "--inference bf16_channels_last"
run_command(f"{bench} --batch 200 --batches 2 {modes}")

# %% [markdown]
# `--sampler plain sound` adds a `+sound` row per mode. In Python,
# {func}`~rsutils.cli.bench.benchmark_modes` returns the same timings as objects;
# here the loop's throughput (inputs per second, from each variant's fastest round)
# with both samplers in both modes, four batches of 200 per timing:

# %%
timing = BenchSettings(batch_size=200, num_batches=4, repeats=5)
variants = benchmark_modes(
    model, (1, 28, 28), rs.Gaussian(0.25), timing, num_classes=10,
    modes=["bf16_channels_last"], samplers=["plain", "sound"],
)  # fmt: skip
loop = pd.Series(
    {
        (v.inference, v.sampler): v.best_sampling_per_second
        for v in variants
    }
)
loop.unstack().round(0)

# %% tags=["remove-cell"]
glue_all(
    sound_cost_fp32=loop["fp32", "plain"] / loop["fp32", "sound"],
    sound_cost_bf16=loop["bf16_channels_last", "plain"]
    / loop["bf16_channels_last", "sound"],
)

# %% [markdown]
# The plain loop's throughput over the sound loop's is
# {glue:text}`sound_cost_fp32:.2f` in float32 and {glue:text}`sound_cost_bf16:.2f` in
# `bf16_channels_last` (1: the sound sampler costs nothing). The noise costs the same
# in both modes, so the faster the forward pass, the larger its share of the loop.
# The run is short and the machine shared, and the spread of its rounds is not
# measured here: a ratio near 1 is no evidence of a cost either way.
#
# `device-check` (`make gpu-check`) runs such tables for the small CNN and a CIFAR-10
# ResNet-110 in every inference mode, on the CPU and on each CUDA GPU, and more. On a
# CPU its ResNet-110 part alone takes minutes, more than a page of this book may spend:
# the page runs the quick part above (`bench`, the check's first table for the page's
# model) and shows what the rest does with `--help`:

# %%
run_command("python -m rsutils device-check --help")

# %% [markdown]
# ## (f) Training faster
#
# Training has a fast path of its own: `TrainConfig(precision="bf16")` runs each
# forward and backward pass under bfloat16 autocast on channels-last tensors, while the
# weights, gradients and optimiser state stay in float32. A bf16 model is another model
# (its own cache key), trained as deterministically as an fp32 one. The median time of
# a training step of the page's model, each way, on this machine
# ({func}`~rsutils.training.speed.training_step_seconds`):

# %%
fast = replace(config, precision="bf16")
step_seconds = pd.Series(
    {c.precision: training_step_seconds(c, train) for c in (config, fast)},
    name="seconds per step",
)
step_seconds.to_frame()

# %% [markdown]
# Here bf16 trains {glue:text}`train_speedup:.1f` times as fast as fp32. The ratio
# depends on the CPU (bfloat16 matrix units: AMX on recent Intel Xeons, AVX-512 BF16 on
# AMD EPYC), on the batch and on the model, so a user should time their own; the two
# numbers above come from the same machine in the same run, which is the only
# comparison they support.
#
# Speed is only welcome if the models are as good. `book/measure_bf16_training.py` trains the book's
# base models both ways from the same seeds (the same initial weights, data order and
# training noise: only the arithmetic differs), {glue:text}`bf16_seeds` seeds per
# $\sigma$, measures them on the whole test split, and certifies each on the same
# {glue:text}`bf16_images` test images with $n =$ {glue:text}`bf16_n:,d`. Accuracy
# of the base models, averaged over the seeds:

# %% tags=["remove-cell"]
glue_all(
    train_speedup=float(step_seconds["fp32"] / step_seconds["bf16"]),
)

# %%
# one row per sigma: the mean over the seeds of each precision
trained = measurements.bf16_training_models()
accuracy = ["clean accuracy", "accuracy under noise"]
trained.pivot_table(index="sigma", columns="precision", values=accuracy)

# %% [markdown]
# Each model was measured on the whole test split, once clean and once under one draw of
# its training noise; the columns pair the two precisions, so a difference within a
# row is the arithmetic's. Accuracy is not the measure a certificate lives on, though.
#
# The certificates of the two precisions, compared as every comparison of the book is:
# per seed and image, bf16 minus fp32, with an interval over both the images and the
# seeds and the book's verdict rule ({ref}`the verdict rule <chapter-tight-radius-verdict-rule>`, with the margin of each
# measure). The decision to train in bf16 needs *every* comparison equivalent: an
# intersection–union test, whose level is that of each of its tests, so here each
# comparison is judged alone (`family=False`), not with Holm's correction:

# %%
replicates = measurements.bf16_training()
pairs = [(f"bf16, σ = {s:g}", f"fp32, σ = {s:g}") for s in BOOK_SIGMAS]
measures = {"r = 0": ("radius", 0.0), "r = 0.5": ("radius", 0.5)}
measures["ACR"] = "radius"
precision_verdicts = replicated_comparisons(
    replicates, pairs, measures=measures, margin=MARGINS, family=False
)
shown = ["gain", "low", "high", "per model", "p equivalent", "verdict"]
precision_verdicts[shown].round(3)

# %% [markdown]
# Whether every comparison is equivalent, as the decision needs:

# %%
said = precision_verdicts["verdict"]
equivalent = said.map(lambda v: v.equivalent)
run_chose(
    "every comparison equivalent within its margin",
    equivalent.all(),
    "Every comparison is equivalent within its margin: training in bf16 "
    "moves no certificate measure by a margin that matters.",
    "Not every comparison is equivalent within its margin (the verdicts "
    "above say which): the case for training in bf16 is not made.",
)

# %% [markdown]
# The book's smoke and cpu profiles declare bf16 for their base models
# ({class}`~rsutils.book.scales.TrainingScale`) and use it where the device computes
# bfloat16 in hardware ({func}`~rsutils.core.inference.native_bf16`); elsewhere they
# train and certify in float32 ({meth}`~rsutils.book.profiles.Profile.on`), because
# emulated bfloat16 is slower than float32 (the two timings above compare them on this
# build's machine). This build trained in {glue:text}`build_precision` and ran the
# forward pass in {glue:text}`build_inference` mode. The paper profile, which states
# the papers' recipe, trains in fp32.

# %% tags=["remove-cell"]
glue_all(
    build_precision=chapter.profile.training.precision,
    build_inference=chapter.profile.certify.inference,
    bf16_seeds=int(trained["seed"].nunique()),
    bf16_images=int(replicates[0][pairs[0][0]]["idx"].nunique()),
    bf16_n=int(PROFILES["cpu"].certify.n),
    bf16_equivalent=int(equivalent.sum()),
    bf16_comparisons=len(said),
)
assert not said.map(lambda v: v.decided and not v.within_margin).any()

# %% [markdown]
# ## What holds up
#
# Every way of certifying faster shown here keeps a guarantee, each about a stated
# classifier: `Decide` and `PlannedDraws` certify at level $\alpha$ with fewer draws
# than CERTIFY, a `bf16_channels_last` certificate is exact for the bf16 base
# classifier (not the float32 model), and a sharded run writes the rows of a single
# process.
#
# - No procedure beats the floor of draws ({glue:text}`floor_half:,d` for $r = 0.5$
#   at σ = 0.25): near CERTIFY's ceiling there is little to save.
# - The speeds are this build's, on a shared machine: `bf16_channels_last` certified
#   {glue:text}`speedup:.1f` times as fast, bf16 training ran
#   {glue:text}`train_speedup:.1f` times as fast, and the plain sampler's loop ran
#   {glue:text}`sound_cost_fp32:.2f` and {glue:text}`sound_cost_bf16:.2f` times as
#   fast as the sound one's, in float32 and bf16. Time your own CPU.
# - Models trained in bf16 against those trained in fp32:
#   {glue:text}`bf16_equivalent` of {glue:text}`bf16_comparisons` comparisons are
#   equivalent within the margin (the run's choice above says what that means), over {glue:text}`bf16_seeds` seeds per $\sigma$.
