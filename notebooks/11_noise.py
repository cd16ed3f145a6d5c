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
# Beyond one Gaussian σ for every input, `rsutils` smooths with a noise level chosen per
# input {cite:p}`alfarra2022data`, with anisotropic noise and noise parameter generators
# {cite:p}`ucan2025`, and with the other noise families of UCAN's Table I; it also
# trains base models for them. This page shows each in Python and, where the command
# line has it, as a command ({ref}`manual-command-line` explains how the commands run).
# The chapters measure what these methods are worth; this page only shows how to call
# them, on a small model it trains itself.

# %%
import dataclasses
import os
import sqlite3
import tempfile

import pandas as pd
import torch

import rsutils as rs
from rsutils.book import Chapter, glue_all, run_command
from rsutils.core.radius import rules

# %% tags=["parameters"]
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
seed = 0

# %% [markdown]
# The page ran at the scale below: the profile sets the number of draws $n$ and the
# steps $K$ of sigma ascent; the model is the small one trained in section (a).

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
P = chapter.profile
n, K = P.certify.n, P.ds.iterations
chapter.run_at(
    {
        "model": "small_cnn, σ = 0.25, 1 epoch on 2,000 images (section a)",
        "sigma ascent steps K": K,
    },
    standard=("n0", "n", "alpha"),
)

# %% [markdown]
# ## (a) A model, saved for the command line
#
# The same small model as on {ref}`manual-library`, saved as a checkpoint for the
# commands below; the files go to a fresh folder.

# %%
workdir = tempfile.TemporaryDirectory(prefix="rsutils-manual-")
os.chdir(workdir.name)
train = rs.load_dataset("fashion-mnist", "train")
test = rs.load_dataset("fashion-mnist", "test")
config = rs.TrainConfig(scale=0.25, epochs=1, train_subset=2000, seed=seed)
model = rs.train_model(config, train, progress=progress)
rs.save_checkpoint(model, "model.pt", arch="small_cnn", dataset="fashion-mnist")
x = test.images[0]

# %% [markdown]
# ## (b) Data-dependent smoothing and the certificate memory
#
# {cite:t}`alfarra2022data` give each input the noise level that maximises its radius:
# `SigmaAscent` runs $K$ steps of gradient ascent on a smooth surrogate of the radius
# from `sigma0`, CERTIFY runs at the level found, and the answer goes through a
# certificate memory, a SQLite file. Without the memory, certificates at different
# noise levels can contradict each other; the memory keeps every answer consistent with
# all earlier ones, across queries, processes and restarts. `key` names a query: asking
# again under the same key returns the stored answer.

# %%
ascent = rs.SigmaAscent(sigma0=0.25, iterations=K)
rows = {}
with rs.CertificateMemory("answers.sqlite") as memory:  # ℓ2 balls (norm="l1": uniform noise)
    ds = rs.DataDependentSmooth(model, 10, ascent, memory)
    for i in (0, 1000, 2000):
        a = ds.certify(test.images[i], n0=100, n=n, alpha=0.001, seed=seed, index=i, key=f"q{i}")
        rows[i] = {"sigma*": a.scale, "CERTIFY's radius": a.certificate.radius}
        rows[i] |= {"prediction": a.prediction, "radius": a.radius, "action": a.action}
with rs.CertificateMemory("answers.sqlite") as reopened:  # a restart, or another process
    again = rs.DataDependentSmooth(model, 10, ascent, reopened).certify(
        test.images[0], n0=100, n=n, alpha=0.001, seed=seed, index=0, key="q0"
    )
pd.DataFrame(rows).T.rename_axis("test image")

# %% [markdown]
# The repeated query `q0` after reopening the memory gets the stored answer,
# {glue:text}`repeated_answer`. `SigmaAscent`'s defaults are those the book and the
# command line use:

# %%
pd.Series(dataclasses.asdict(rs.SigmaAscent())).to_frame("default").T

# %% tags=["remove-cell"]
assert (again.prediction, again.radius) == (rows[0]["prediction"], rows[0]["radius"])
glue_all(repeated_answer=f"class {again.prediction} with radius {again.radius:.3f}")

# %% [markdown]
# What the memory does to a new certificate is its `action`: *kept* when it meets no
# region of another class, *shrunk* to the largest radius that keeps it apart from them,
# *adopted* (the class of a stored region that contains the input, radius 0) or
# *abstained*. Three certificates in the plane, in a memory held in RAM (`path=None`),
# show the first three:

# %%
with rs.CertificateMemory() as toy:
    first = toy.admit(torch.tensor([0.0, 0.0]), prediction=0, radius=1.0)
    overlapping = toy.admit(torch.tensor([1.5, 0.0]), prediction=1, radius=1.0)
    inside = toy.admit(torch.tensor([0.2, 0.0]), prediction=1, radius=0.5)
pd.DataFrame(
    [dataclasses.asdict(a) for a in (first, overlapping, inside)],
    index=["(0, 0), class 0, R = 1", "(1.5, 0), class 1, R = 1", "(0.2, 0), class 1, R = 0.5"],
)[["prediction", "radius", "action"]]

# %% [markdown]
# A memory file of another application is refused and left untouched. On the command
# line, `--ascent-steps K` turns on data-dependent certification, with the memory in
# `--memory` (by default next to the log); the log has CERTIFY's answer (`mc_predict`,
# `mc_radius`), the memory's (`predict`, `radius`), what the memory did and each
# input's noise level (`scale`):

# %%
with sqlite3.connect("other.sqlite") as other:
    other.execute("CREATE TABLE IF NOT EXISTS notes (text)")
try:
    rs.CertificateMemory("other.sqlite")
except ValueError as error:
    print(error)
run_command(
    f"python -m rsutils certify fashion-mnist model.pt 0.25 ds.tsv --ascent-steps {K} "
    f"--memory ds.sqlite --N {n} --skip 1000 --max 3000 --quiet"
)
run_command("cut -f 1-5,12- ds.tsv")

# %% [markdown]
# ## (c) Anisotropic noise and certified regions
#
# `Anisotropic` turns any noise family into `mu + sigma ⊙ eps`, with a `sigma` (and an
# optional `mu`) of the shape of one input {cite:p}`ucan2025`. The certificate is then
# the region $\lVert\delta \oslash \sigma\rVert_p < R$: `region_radius` is $R$, `radius`
# is the ℓp ball inside the region, $\min(\sigma)\,R$, and `alm` is UCAN's ALM
# $(\prod_i \sigma_i)^{1/d} R$, a measure of the region's size rather than a radius that
# holds in every direction. `spatial_pattern` gives UCAN's patterns, here less noise at
# the centre of the image (a multiplier of mean 1 on the Gaussian's σ = 0.25):

# %%
sigma = rs.spatial_pattern(28, 28, kappa=1.0, iota=1.0)
aniso = rs.Smooth(model, 10, rs.Anisotropic(rs.Gaussian(0.25), sigma))
cert = aniso.certify(x, n0=100, n=n, alpha=0.001, seed=seed)
region = rs.certified_region(aniso.noise, cert.region_radius, x.shape)
pd.Series(
    {
        "prediction": cert.prediction,
        "region_radius R": cert.region_radius,
        "radius = min(sigma)·R": cert.radius,
        "alm": cert.alm,
        "region contains δ = radius·e_1": bool(region.contains(cert.radius * torch.eye(784)[0])),
        "log volume of the region": region.log_volume(),
    }
).to_frame("")

# %% tags=["remove-cell"]
full_sigma = aniso.noise.full_sigma(x.shape)
assert abs(cert.radius - full_sigma.min() * cert.region_radius) < 1e-9 * max(cert.radius, 1)

# %% [markdown]
# On the command line, `--sigma-map` (and `--mu-map`) take the multipliers saved with
# `torch.save` or as a NumPy `.npy` file; the log adds `region_radius` and `alm`:

# %%
torch.save(sigma.float(), "sigma.pt")
run_command(
    f"python -m rsutils certify fashion-mnist model.pt 0.25 aniso.tsv --sigma-map sigma.pt "
    f"--N {n} --skip 1000 --max 3000 --quiet"
)
run_command("cut -f 1-5,12- aniso.tsv")

# %% [markdown]
# ## (d) Noise families
#
# Each noise family has the certified radii of UCAN's Table I, one rule per threat
# norm ({func}`~rsutils.core.radius.rules`, {func}`~rsutils.core.radius.certified_radius`),
# and a name on the command line (`--noise`; `power_law` takes its exponent with
# `--power-a`):

# %%
pd.DataFrame(
    [
        {"--noise": r.family, "class": rs.FAMILIES[r.family].__name__, "norm": r.norm}
        | {"needs the dimension d": r.needs_dim, "parameters": ", ".join(r.params) or "-"}
        for r in rules()
    ]
).set_index(["--noise", "class"])

# %% [markdown]
# ## (e) Noise parameter generators
#
# UCAN's generators are `torch.nn.Module`s that map a batch to `(mu, sigma)`:
# `FixedNoise` (a pattern), `DatasetWiseGenerator` (one learned `mu`, `sigma` for the
# dataset) and `CertificationWiseGenerator` (`mu(x)`, then `sigma(x + mu)`, per input).
# `train_npg` fine-tunes a classifier with one (here a certification-wise generator,
# for only {glue:text}`npg_steps` steps), `save_checkpoint(..., generator=g)` keeps
# both in one file, and `GeneratedSmooth` certifies with the noise the generator gives
# at each input: exactly `Smooth` with that `Anisotropic` noise.

# %%
npg = rs.NPGConfig(base=config, method="certification", steps=5, train_subset=640, seed=seed)
classifier, generator = rs.train_npg(npg, train, model, progress=progress)
rs.save_checkpoint(
    classifier, "npg.pt", arch="small_cnn", dataset="fashion-mnist", generator=generator
)
generated = rs.GeneratedSmooth(classifier, 10, rs.Gaussian(0.25), rs.load_generator("npg.pt"))
certs, at_x = {}, {}
for i in (0, 1000, 2000):
    image = test.images[i]
    certs[i] = generated.certify(image, n0=100, n=n, alpha=0.001, seed=seed, index=i)
    at_x[i] = generated.smooth_at(image).certify(
        image, n0=100, n=n, alpha=0.001, seed=seed, index=i
    )
pd.DataFrame(
    {
        i: {"prediction": c.prediction, "count": c.count, "region_radius": c.region_radius}
        | {"alm": c.alm, "equal to Smooth's at the input's noise": c == at_x[i]}
        for i, c in certs.items()
    }
).T.rename_axis("test image")

# %% tags=["remove-cell"]
assert certs == at_x
glue_all(npg_steps=npg.steps)

# %% [markdown]
# On the command line, `--generator` names the checkpoint that holds the generator
# (often the model's own):

# %%
run_command(
    f"python -m rsutils certify fashion-mnist npg.pt 0.25 npg.tsv --generator npg.pt "
    f"--N {n} --skip 1000 --max 3000 --quiet"
)
run_command("cut -f 1-5,12- npg.tsv")

# %% [markdown]
# A certificate of a generator whose `mu` and `sigma` depend on the input holds for the
# noise computed at the certified input. A deployed system computes them at the input
# it receives, $x + \delta$, which the certificate does not cover.
# `audit_certificate` searches the certified region for points where the deployed
# classifier answers another class with confidence (random points near the boundary
# and a gradient attack, each verified by fresh draws); {ref}`chapter-npg` runs it on many
# certificates. On the first certified image above (test image {glue:text}`audited`),
# with {glue:text}`audit_points` candidate points:

# %%
audited, cert = next((i, c) for i, c in certs.items() if not c.abstained)
audit = rs.AuditSettings(n_verify=500, boundary=2, steps=3, draws=4, input_range=(0.0, 1.0))
record = rs.audit_certificate(
    classifier, generator, test.images[audited], cert.prediction, cert.region_radius, audit,
    scale=0.25, index=audited,
)  # fmt: skip
pd.DataFrame([p.row() for p in record.points])[["search", "region_fraction", "verdict", "top"]]

# %% tags=["remove-cell"]
glue_all(audit_points=len(record.points), audited=audited)

# %% [markdown]
# ## (f) Training for smoothing
#
# `TrainConfig` trains with Gaussian noise augmentation by default, with SmoothAdv or
# MACER (`method="smoothadv" | "macer"`), and with a data-dependent σ per training
# sample (`ds=SigmaAscent(...)`); `init` fine-tunes the model of another configuration,
# passed as `start`. Here MACER with a data-dependent σ fine-tunes the model of (a) on
# 256 images (`python -m rsutils train ... --method macer --ds-steps 1` on the command
# line). That only shows the call: {ref}`chapter-sigma-ascent` measures what these
# training methods are worth, at scale.

# %%
macer = rs.TrainConfig(
    method="macer",
    ds=rs.SigmaAscent(iterations=1, draws=1),
    init=config,
    epochs=1,
    lr=5e-4,
    train_subset=256,
    seed=seed,
)
tuned = rs.train_model(macer, train, start=model, progress=progress)
