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
# (manual-noise)=
# # Data-dependent and anisotropic noise
#
# Beyond one Gaussian σ for every input, `rsutils` smooths with a noise level chosen
# per input {cite:p}`alfarra2022data`, with anisotropic noise and noise parameter
# generators {cite:p}`ucan2025`, and with the other noise families of UCAN's Table I;
# it also trains base models for them. This page shows each in Python and, where the
# command line has it, as a command ({ref}`manual-command-line` explains how the
# commands run; each prints its line, `$ ...`, before its output). The chapters measure
# what these methods are worth ({ref}`chapter-sigma-ascent`, {ref}`chapter-memory-soundness`,
# {ref}`chapter-anisotropic-transform`, {ref}`chapter-npg-training`); this page only shows how to call
# them, on a small model it trains itself.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import dataclasses
import os
import sqlite3
import tempfile

import pandas as pd
import torch

import rsutils as rs
from rsutils.book import Chapter, glue_all, run_command, show_refusals
from rsutils.book.manual import describe_page_model, page_model
from rsutils.checks.float_attack import float_attack
from rsutils.cli.bench import BenchSettings, benchmark_modes
from rsutils.core.devices import model_device
from rsutils.core.environment import describe_environment
from rsutils.core.radius import rules

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The page ran at the scale below: the profile sets the number of draws $n$ (that of
# the book's smaller runs) and the steps $K$ of sigma ascent (the chapters' $K$, at most
# 20 here); the model is the small one trained in section (a), the
# same at every profile.

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
n = chapter.profile.secondary.n
K = min(chapter.profile.ds.iterations, 20)  # the chapters' K, at most 20
rows = {
    "model": describe_page_model(page_model(seed)),
    "n (estimation draws)": f"{n:,}",
    "sigma ascent steps K": K,
}
chapter.run_at(rows, standard=("n0", "alpha"))

# %% [markdown]
# ## (a) A model, saved for the command line
#
# The same small model as on {ref}`manual-library`, saved as a checkpoint for the
# commands below. The files go to a fresh folder, so every build writes them anew.
# Every command certifies the same three test images (every 1,000th, up to index
# 3,000), so `CERTIFY` and `ON_THREE` below hold the parts of the command line that do
# not change.

# %%
workdir = tempfile.TemporaryDirectory(prefix="rsutils-manual-")
os.chdir(workdir.name)
train = rs.load_dataset("fashion-mnist", "train")
test = rs.load_dataset("fashion-mnist", "test")
config = page_model(seed)  # the TrainConfig of the library page
model = rs.train_model(config, train, progress=progress)
ARCH = {"arch": "small_cnn", "dataset": "fashion-mnist"}
rs.save_checkpoint(model, "model.pt", **ARCH)
images = {i: test.images[i] for i in (0, 1000, 2000)}
CERTIFY = "python -m rsutils certify fashion-mnist"
ON_THREE = f"--N {n} --skip 1000 --max 3000 --quiet"
# left out of the listings: the time, the selection draws' class and count,
# and the settings every row shares; numbers shown to four decimals
LEFT_OUT = ["time", "selected", "count", "n0", "n", "alpha", "seed"]
pd.set_option("display.precision", 4)

# %% [markdown]
# ## (b) Data-dependent smoothing and the certificate memory
#
# {cite:t}`alfarra2022data` give each input the noise level that maximises its radius.
# `SigmaAscent` runs $K$ steps of gradient ascent on a smooth surrogate of the radius,
# from `sigma0`; CERTIFY then runs at the level found, `scale`. Certificates at
# different noise levels can contradict each other: two inputs close together can get
# balls of different classes that overlap. So the answer goes through a certificate
# memory, a SQLite file, that keeps every answer consistent with all earlier ones,
# across queries, processes and restarts. `key` names a query: asking again under the
# same key returns the stored answer.

# %%
ascent = rs.SigmaAscent(sigma0=0.25, iterations=K)
with rs.CertificateMemory("answers.sqlite") as memory:  # ℓ2 balls
    ds = rs.DataDependentSmooth(model, 10, ascent, memory)
    answers = {
        i: ds.certify(x, 100, n, 0.001, seed=seed, index=i, key=f"q{i}")
        for i, x in images.items()
    }
table = pd.DataFrame({i: vars(a) for i, a in answers.items()}).T
table.drop(columns="certificate").rename_axis("test image")

# %% [markdown]
# Each row is one answer: `prediction` and `radius` are the memory's, `scale` is the
# input's noise level σ*, and `action` says what the memory did with CERTIFY's answer
# at that level. Reopened, as after a restart or in another process, the memory gives
# the stored answer to the repeated query `q0`: {glue:text}`repeated_answer`, the
# first row above, without running CERTIFY again. A memory holds balls of one norm, ℓ2
# for Gaussian noise (`norm="l1"` for uniform noise), and refuses a classifier that
# certifies the other. Without a memory (`memory=None`) each answer is CERTIFY's at the
# input's own level, true for that level's smoothed classifier alone.

# %%
with rs.CertificateMemory("answers.sqlite") as reopened:
    smooth = rs.DataDependentSmooth(model, 10, ascent, reopened)
    again = smooth.certify(images[0], 100, n, 0.001, seed=seed, key="q0")
(again.prediction, again.radius, again.action)

# %% tags=["remove-cell"]
first = answers[0]
assert (again.prediction, again.radius) == (first.prediction, first.radius)
glue_all(
    repeated_answer=f"class {again.prediction}, radius {again.radius:.3f}"
)

# %% [markdown]
# `SigmaAscent`'s defaults are the settings the book and the command line use: the
# ascent's step `lr`, `draws` noisy copies per step (M in the paper), and `clamp`, how
# far the surrogate's probabilities are kept from 0 and 1 so that its gradient stays
# finite.

# %%
pd.Series(dataclasses.asdict(rs.SigmaAscent())).to_frame("default").T

# %% [markdown]
# A new certificate is *kept* when it meets no region of another class, *shrunk* to
# the largest radius that keeps it apart from them, or *adopted*: an input inside a
# stored region of another class gets that region's class with radius 0, so that the
# answers never contradict each other (it can also be *abstained*). Three certificates
# in the plane, in a memory held in RAM (`path=None`), show the first three actions.
# `admit` is what `DataDependentSmooth` calls with each certificate; it can be called
# directly with the certificates of any other procedure.


# %%
def at(*point: float) -> torch.Tensor:
    return torch.tensor(point)


with rs.CertificateMemory() as toy:  # admit(input, class, radius)
    admitted = {
        "class 0 at (0, 0), R = 1": toy.admit(at(0.0, 0.0), 0, 1.0),
        "class 1 at (1.5, 0), R = 1": toy.admit(at(1.5, 0.0), 1, 1.0),
        "class 1 at (0.2, 0), R = 0.5": toy.admit(at(0.2, 0.0), 1, 0.5),
    }
toy_table = pd.DataFrame({k: vars(a) for k, a in admitted.items()}).T
toy_table[["prediction", "radius", "action"]]

# %% [markdown]
# A file that is not a certificate memory, such as another application's SQLite
# database, is refused and left untouched. On the command line, `--ascent-steps K`
# turns data-dependent certification on, with the memory in `--memory` (by default
# next to the log). Its log has the memory's answer in `predict` and `radius`,
# CERTIFY's in `mc_predict` and `mc_radius`, what the memory did in `memory`, and each
# input's noise level in `scale` (the listing, the log as `read_log` reads it, leaves
# out the time, the selection draws' class and count, the settings and `pA_lower`).

# %%
with sqlite3.connect("other.sqlite") as other:
    other.execute("CREATE TABLE IF NOT EXISTS notes (text)")


def open_other_file() -> rs.CertificateMemory:
    return rs.CertificateMemory("other.sqlite")


show_refusals({"another application's file": open_other_file})
ds_options = f"--ascent-steps {K} --memory ds.sqlite"
run_command(f"{CERTIFY} model.pt 0.25 ds.tsv {ds_options} {ON_THREE}")
ds_log = rs.read_log("ds.tsv")
ds_log.drop(columns=[*LEFT_OUT, "pA_lower"]).set_index("idx")

# %% [markdown]
# ## (c) Anisotropic noise and certified regions
#
# `Anisotropic` turns any noise family into `mu + sigma ⊙ eps`, with a `sigma` (and an
# optional `mu`) of the shape of one input {cite:p}`ucan2025`. The certificate is then
# the region $\lVert\delta \oslash \sigma\rVert_p < R$ around the input, an ellipsoid for
# Gaussian noise: `region_radius` is $R$,
# `radius` the ℓp ball inside the region, $\min(\sigma)\,R$, and `alm` UCAN's ALM
# $(\prod_i \sigma_i)^{1/d} R$, a measure of the region's size rather than a radius
# that holds in every direction. `spatial_pattern` gives UCAN's patterns: here a
# multiplier of mean 1 on the Gaussian's σ = 0.25, smaller at the centre of the image.
# `certified_region` turns a certificate into its region, which answers whether it
# contains a perturbation and how large it is. Below, a step of length `radius` along
# the first pixel lies inside the region, as a step of that length in any direction
# does; along a pixel $i$ the region reaches $\sigma_i R$, further where the noise is
# larger.

# %%
sigma = rs.spatial_pattern(28, 28, kappa=1.0, iota=1.0)
noise = rs.Anisotropic(rs.Gaussian(0.25), sigma)
aniso = rs.Smooth(model, 10, noise)
cert = aniso.certify(images[0], 100, n, 0.001, seed=seed)
region = rs.certified_region(noise, cert.region_radius, (1, 28, 28))
step = cert.radius * torch.eye(784)[0]  # radius along the first pixel
shown = ["prediction", "region_radius", "radius", "alm"]
facts = {name: getattr(cert, name) for name in shown}
facts["region contains the step"] = bool(region.contains(step))
facts["region's log volume"] = region.log_volume()
pd.Series(facts).to_frame("")

# %% tags=["remove-cell"]
smallest = float(noise.full_sigma((1, 28, 28)).min())
assert abs(cert.radius - smallest * cert.region_radius) < 1e-9

# %% [markdown]
# On the command line, `--sigma-map` (and `--mu-map`) take the multipliers saved with
# `torch.save` or as a NumPy `.npy` file; the log adds `region_radius` and `alm`:

# %%
torch.save(sigma.float(), "sigma.pt")
run_command(
    f"{CERTIFY} model.pt 0.25 aniso.tsv --sigma-map sigma.pt {ON_THREE}"
)
rs.read_log("aniso.tsv").drop(columns=LEFT_OUT).set_index("idx")

# %% [markdown]
# ## (d) Noise families
#
# Each noise family has the certified radii of UCAN's Table I, one rule per threat
# norm: {func}`~rsutils.core.radius.rules` lists them, and
# {func}`~rsutils.core.radius.certified_radius` computes one. A family is a class in
# Python and a name on the command line (`--noise`); some radii need the input's
# dimension $d$, and `power_law` takes its exponent with `--power-a`:

# %%
families = pd.DataFrame([vars(rule) for rule in rules()])
families["class"] = [rs.FAMILIES[f].__name__ for f in families["family"]]
families[["family", "class", "norm", "needs_dim", "params"]]

# %% [markdown]
# ## (e) Noise parameter generators
#
# UCAN's generators are `torch.nn.Module`s that map a batch of inputs to `(mu, sigma)`:
# `FixedNoise` (a pattern), `DatasetWiseGenerator` (one learned `mu` and `sigma` for
# the whole dataset) and `CertificationWiseGenerator` (`mu(x)`, then `sigma(x + mu)`,
# per input). `train_npg` fine-tunes a copy of a classifier together with one; here a
# certification-wise generator, for only {glue:text}`npg_steps` steps, as the page
# shows the calls rather than a good generator. `save_checkpoint(..., generator=g)`
# keeps both in one file, and `load_generator` reads the generator back.
#
# `GeneratedSmooth` certifies with the noise the generator gives at each input:
# exactly `Smooth` with that input's `Anisotropic` noise, which `smooth_at` returns. The
# last column compares the two certificates, field by field:

# %%
npg = rs.NPGConfig(config, "certification", steps=5, train_subset=640)
classifier, generator = rs.train_npg(npg, train, model, progress=progress)
rs.save_checkpoint(classifier, "npg.pt", **ARCH, generator=generator)
loaded = rs.load_generator("npg.pt")
generated = rs.GeneratedSmooth(classifier, 10, rs.Gaussian(0.25), loaded)
certs, same = {}, {}
for i, x in images.items():
    at_x = generated.smooth_at(x)  # Smooth with the noise made at x
    certs[i] = generated.certify(x, 100, n, 0.001, seed=seed, index=i)
    same[i] = certs[i] == at_x.certify(
        x, 100, n, 0.001, seed=seed, index=i
    )
shown = ["prediction", "region_radius", "radius", "alm"]
table = pd.DataFrame({i: vars(c) for i, c in certs.items()}).T[shown]
table.assign(**{"equals Smooth at x": same}).rename_axis("test image")

# %% tags=["remove-cell"]
assert all(same.values())
glue_all(npg_steps=npg.steps)

# %% [markdown]
# On the command line, `--generator` names the checkpoint that holds the generator,
# often the model's own:

# %%
run_command(f"{CERTIFY} npg.pt 0.25 npg.tsv --generator npg.pt {ON_THREE}")
rs.read_log("npg.tsv").drop(columns=LEFT_OUT).set_index("idx")

# %% [markdown]
# A certificate of a generator whose `mu` and `sigma` depend on the input holds for the
# noise computed at the certified input. A deployed system computes them at the input
# it receives, $x + \delta$, which the certificate does not cover.
# `audit_certificate` searches the certified region for points where the deployed
# classifier answers another class with confidence: random points near the boundary,
# and the end of a gradient attack, each verified by fresh draws (`AuditSettings` says
# how many of each); {ref}`chapter-npg-training` audits many certificates. Here the first
# certified image above, test image {glue:text}`audited`, with
# {glue:text}`audit_points` candidate points; `region_fraction` is how far out in the
# region a point lies (1 at the boundary), and `verdict` what the deployed classifier
# answers there.

# %%
audited, cert = next((i, c) for i, c in certs.items() if not c.abstained)
search = {"boundary": 2, "steps": 3, "draws": 4}
audit = rs.AuditSettings(n_verify=500, input_range=(0.0, 1.0), **search)
claim = (images[audited], cert.prediction, cert.region_radius, audit)
deployed = rs.DeployedClassifier(
    classifier, generator, scale=0.25, num_classes=10
)
record = rs.audit_certificate(deployed, *claim, index=audited)
points = pd.DataFrame([p.row() for p in record.points])
points[["search", "region_fraction", "verdict", "top"]]

# %% tags=["remove-cell"]
glue_all(audit_points=len(record.points), audited=audited)

# %% [markdown]
# ## (f) Training for smoothing
#
# `TrainConfig` trains with Gaussian noise augmentation by default, with SmoothAdv or
# MACER (`method="smoothadv"` or `"macer"`), and with a data-dependent σ per training
# sample (`ds=SigmaAscent(...)`, which here takes one ascent step with one draw per
# sample each time the sample is drawn). `init` names the configuration of the model
# to fine-tune, passed as `start`. Here MACER with a data-dependent σ fine-tunes the
# model of (a) on 256 images; on the command line, `python -m rsutils train ...
# --method macer --ds-steps 1`. That only shows the call: {ref}`chapter-sigma-ascent`
# measures what these training methods are worth, at scale.

# %%
one_step = rs.SigmaAscent(iterations=1, draws=1)
macer = rs.TrainConfig(method="macer", ds=one_step, init=config, lr=5e-4)
macer = dataclasses.replace(macer, epochs=1, train_subset=256, seed=seed)
tuned = rs.train_model(macer, train, start=model, progress=progress)

# %% [markdown]
# ## (g) Sound sampling in floating point
#
# Everything above makes a noisy input as CERTIFY is usually run: float noise added
# to the input in floating point, `x + ε`. {cite:t}`voracek2023sound` show that this
# is not the smoothing of any function of $x + \varepsilon$: the rounding of the sum
# leaks the low bits of $x$, so a base classifier can recognise the exact clean input,
# and the certificate is then false. `LowBitsRecogniser`
# ({mod}`rsutils.checks.float_attack`) is such a classifier: it answers class
# {glue:text}`attack_recognised` when the low bits of every pixel are those of $x_0$
# plus `float32` noise, class {glue:text}`attack_other` otherwise. Here $x_0$ is a
# constant image of grey level {glue:text}`attack_level` with the page's
# {glue:text}`attack_pixels` pixels, the attack point $x_1$ is one grey level
# brighter, and each sampler runs CERTIFY at $x_0$ and PREDICT at $x_1$ with
# {glue:text}`attack_n` draws at σ = {glue:text}`attack_sigma:.2f`.
#
# `Smooth(..., sampler="sound")` follows their remedy
# ({mod}`rsutils.core.sound_sampling`): inputs on the grid of the grey levels,
# the Gaussian rounded to that grid and drawn exactly from random bits, the sum made
# in integers, so that the model sees a function of $x + \varepsilon$ rounded to the
# grid, whose Gaussian smoothing the certificate is about. The radius is charged with
# the sampler's table error: $p_A$ lowered by {glue:text}`attack_slack:.1e` here.

# %%
attack = {"sigma": 0.25, "level": 7, "side": 28, "n": 1000, "seed": seed}
attacks = [float_attack(s, **attack) for s in ("plain", "sound")]
attack_table = pd.DataFrame([vars(a) for a in attacks]).set_index(
    "sampler"
)
falsified = [a.certificate_false for a in attacks]
attack_table.assign(certificate_false=falsified).T  # a column per sampler

# %% tags=["remove-cell"]
plain_attack, sound_attack = attacks
assert (
    plain_attack.certificate_false and not sound_attack.certificate_false
)
sound_noise = rs.Smooth(
    model, 10, rs.Gaussian(0.25), sampler="sound"
).noise
glue_all(
    attack_recognised=plain_attack.prediction,
    attack_other=plain_attack.prediction_at_attack,
    attack_level=f"{attack['level']}/255",
    attack_pixels=attack["side"] ** 2,
    attack_n=f"{attack['n']:,}",
    attack_sigma=attack["sigma"],
    attack_slack=attack["side"] ** 2 * sound_noise.tv_per_coordinate,
    attack_radius=plain_attack.radius,
    attack_distance=plain_attack.distance,
    sound_recognised=sound_attack.recognised_x0,
    random_bits=sound_noise.random_bits,
)

# %% [markdown]
# With the plain sampler CERTIFY certifies class {glue:text}`attack_recognised` at
# $x_0$ with radius {glue:text}`attack_radius:.3f`, yet at $x_1$, only
# {glue:text}`attack_distance:.3f` away, the smoothed classifier answers class
# {glue:text}`attack_other`: the certificate is false. With the sound sampler the
# recogniser finds $x_0$ in a share {glue:text}`sound_recognised:.3f` of the draws,
# no more than around $x_1$, and the certificate, whatever class it gives, holds.
#
# On an ordinary model the two samplers give nearly the same certificates, and the
# sound one costs more per batch: it draws {glue:text}`random_bits` random bits per
# pixel and reads a table instead of drawing one normal. The page's model certifies
# its first test image with each, and `benchmark_modes` (what
# `python -m rsutils bench --sampler plain sound` prints) times, in the same rounds,
# the noise alone and the whole loop (noise, forward pass, counting) for batches of
# {glue:text}`cost_batch` draws. It alternates the two samplers in the same rounds and
# keeps each one's fastest round, so that their ratio compares the samplers, not two
# moments of a shared machine whose speed drifts (the fastest round is the one least
# slowed by other work on the machine):

# %%
x0 = images[0]
certificates = {
    sampler: rs.Smooth(
        model, 10, rs.Gaussian(0.25), sampler=sampler
    ).certify(x0, 100, n, 0.001, seed=seed)
    for sampler in ("plain", "sound")
}
timing = BenchSettings(num_batches=4, repeats=3)
plain, sound = benchmark_modes(
    model, tuple(x0.shape), rs.Gaussian(0.25), timing, num_classes=10,
    modes=["fp32"], samplers=["plain", "sound"], x=x0,
)  # fmt: skip
shown = ["prediction", "count", "pA_lower", "radius"]
pd.DataFrame({s: vars(c) for s, c in certificates.items()}).T[shown]

# %% tags=["remove-cell"]
where = describe_environment(model_device(model))
glue_all(
    cost_model=describe_page_model(config),
    cost_device=f"{where['device']}, {where['threads']} threads",
    cost_batch=f"{plain.batch_size:,}",
    noise_ratio=plain.noise_per_second / sound.noise_per_second,
    loop_ratio=plain.best_sampling_per_second
    / sound.best_sampling_per_second,
)

# %% [markdown]
# The sound sampler takes {glue:text}`noise_ratio:.1f` times as long as the plain one
# to make a batch of noisy inputs, and the whole loop {glue:text}`loop_ratio:.2f`
# times as long on this page's small model ({glue:text}`cost_model`) on
# {glue:text}`cost_device`; the larger the model, the smaller the
# share of the noise. The book's other chapters use the plain sampler, as their
# run-at tables say: their models were not built to read low bits, but only the
# sound sampler's certificates hold for any model.
#
# ## What holds up
#
# A certificate made with `sampler="sound"` holds for any model, including one built
# to read the low bits of its input, where the plain sampler's certificate at $x_0$
# was false; on this page's small model ({glue:text}`cost_model`), on
# {glue:text}`cost_device`, it costs
# {glue:text}`noise_ratio:.1f` times as long to make the noise and
# {glue:text}`loop_ratio:.2f` times the whole loop.
#
# - Data-dependent answers that go through a certificate memory are consistent with
#   every earlier answer of that memory, across restarts (the repeated query `q0` got
#   {glue:text}`repeated_answer` again); without a memory each holds only for its own
#   level's smoothed classifier.
# - An anisotropic certificate's `radius`, $\min(\sigma)\,R$, holds in every
#   direction; `region_radius` describes the region, and `alm` its size, which is not
#   a radius that holds in every direction.
# - A generator's certificate holds for the noise computed at the certified input,
#   not at the $x + \delta$ a deployed system receives: `audit_certificate` searches
#   for that gap, it does not close it.
# - The page's model, generator and MACER step show the calls; the chapters measure
#   what the methods are worth.
