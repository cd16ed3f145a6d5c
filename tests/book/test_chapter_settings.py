"""One settings object per chapter with linked pages, read by every one of its pages.

The values are those the pages typed before they read them from here (at the smoke
profile); the objects are frozen; each page shows its run-at table from them; and no
page of a chapter assigns one of its chapter's settings names again, so that a page
cannot state a value its chapter states otherwise.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import jupytext
import pandas as pd
import pytest

import rsutils as rs
from rsutils.book.chapter import Chapter
from rsutils.book.chapters.fewer_draws_settings import FewerDrawsSettings
from rsutils.book.chapters.npg_settings import NpgSettings
from rsutils.book.chapters.pages import SETTINGS, open_page, settings_of
from rsutils.book.chapters.settings import ChapterSettings
from rsutils.book.chapters.sigma_ascent_settings import SigmaAscentSettings
from rsutils.book.chapters.sota_settings import SotaSettings
from rsutils.book.papers.published import published_table, published_table_names
from rsutils.book.profiles import ANISOTROPIC_LAMBDA, PROFILES, get_profile
from rsutils.training.objectives import ObjectiveSettings

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SMOKE = PROFILES["smoke"]

#: Each chapter with linked pages, by its number, and its settings.
FAMILIES: dict[str, type[ChapterSettings]] = {
    "02": SigmaAscentSettings,
    "06": NpgSettings,
    "07": SotaSettings,
    "08": FewerDrawsSettings,
}
#: Names under which the pages typed these settings before they read them: a page
#: that binds one again is retyping a setting (besides the settings' own names).
RETYPED: dict[type[ChapterSettings], set[str]] = {
    SigmaAscentSettings: {"tuned", "trained"},
    NpgSettings: {"LAMBDA", "A"},
    SotaSettings: set(),
    FewerDrawsSettings: {"CERTIFY_PASSES"},
}


def test_chapter_08s_settings_are_what_its_pages_typed() -> None:
    S = FewerDrawsSettings.of(SMOKE, seed=3)
    N, ALPHA = SMOKE.certify.n, SMOKE.certify.alpha
    assert (S.n0, S.n, S.alpha) == (SMOKE.certify.n0, N, ALPHA)
    assert S.r_over_sigma == (0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0)
    assert S.radius_loss == 0.05
    assert S.coverage_runs == SMOKE.checks.coverage_runs
    assert S.reference_draws == (300, 1000)
    assert S.schedule == rs.LookSchedule.geometric(N, ALPHA)
    assert S.anytime == rs.AnytimeSchedule.geometric(N, ALPHA)
    assert S.randomised == rs.LookSchedule.geometric(N, ALPHA, randomized=True)
    assert S.certify_passes == SMOKE.certify.n0 + N
    assert S == FewerDrawsSettings.of(SMOKE)  # the seed changes none of them


def test_chapter_06s_settings_are_what_its_pages_typed() -> None:
    S = NpgSettings.of(SMOKE, seed=3)
    base = SMOKE.base_models(3)[ANISOTROPIC_LAMBDA]
    assert S.lam == ANISOTROPIC_LAMBDA == 0.5
    assert S.base == base
    assert dict(S.methods) == SMOKE.npg_methods(base, 3)
    assert list(S.methods) == list(SMOKE.npg_methods(base, 3))  # the chapter's order
    assert S.audit_scale == SMOKE.audit
    assert NpgSettings.of(SMOKE, seed=0).base == SMOKE.base_models(0)[0.5] != base


def test_chapter_02s_settings_are_what_its_pages_typed() -> None:
    P, seed = SMOKE, 3
    S = SigmaAscentSettings.of(P, seed)
    base = P.base_models(seed)[0.25]
    assert S.base == base
    assert S.ascent == P.ascent(0.25)
    assert dict(S.variants) == {
        "Cohen-FT": P.finetune(base, seed),
        "Cohen-DS²": P.finetune(base, seed, ds=P.ascent(0.25, iterations=1, draws=1)),
        "SmoothAdv": P.finetune(
            base,
            seed,
            method="smoothadv",
            objective=ObjectiveSettings(draws=1, epsilon=0.25, attack_steps=2),
        ),
        "MACER": P.finetune(
            base, seed, method="macer", objective=ObjectiveSettings(draws=P.ds.macer_draws)
        ),
    }
    assert list(S.variants) == ["Cohen-FT", "Cohen-DS²", "SmoothAdv", "MACER"]


def test_chapter_07s_settings_hold_every_published_table() -> None:
    S = SotaSettings.of(SMOKE)
    assert list(S.tables) == published_table_names()
    assert all(S.tables[name].meta == published_table(name).meta for name in S.tables)


@pytest.mark.parametrize("kind", SETTINGS, ids=[k.__name__ for k in SETTINGS])
def test_settings_are_frozen(kind: type[ChapterSettings]) -> None:
    S = kind.of(SMOKE)
    first = dataclasses.fields(S)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(S, first, None)
    for value in vars(S).values():  # and so are the mappings they hold
        if hasattr(value, "keys"):
            with pytest.raises(TypeError):
                value["added"] = None


def test_a_chapter_and_its_pages_open_with_the_same_settings() -> None:
    chapter = Chapter.open("smoke", seed=3, progress=False)
    here = get_profile("smoke")  # as it runs on this machine
    assert FewerDrawsSettings.at(chapter) == FewerDrawsSettings.of(here, 3)
    assert NpgSettings.at(chapter).base == here.base_models(3)[0.5]


def _rows(table: pd.DataFrame) -> dict[str, str]:
    environment = ["noise sampler", "device", "CPU threads (torch)", "torch"]
    assert list(table.index)[-4:] == environment
    return table["value"].drop(environment).to_dict()


def test_the_fewer_draws_pages_run_at_tables() -> None:
    chapter = Chapter.open("smoke", seed=0, progress=False)
    S = FewerDrawsSettings.at(chapter)
    radii = "r/σ = 0, 0.5, 1, 1.5, 2, 2.5, 3"
    models = {"dataset": "Fashion-MNIST (test split)", "model": "small_cnn"}
    looks = f"{len(S.anytime.looks)} looks"
    assert _rows(S.run_at(chapter, "chapter-design-costs")) == {
        "profile": "smoke",
        "radii": radii,
        "confidence sequence": looks,
        "n0 (selection draws)": "100",
        "n (estimation draws)": "1,000",
        "alpha": "0.001",
    }
    chapter_rows = _rows(S.run_at(chapter, "chapter-fewer-draws"))
    assert chapter_rows.items() >= {**models, "decision radii": radii}.items()
    assert chapter_rows["coverage runs"] == f"{SMOKE.checks.coverage_runs:,} per procedure"
    assert chapter_rows["planned draws' radius loss"] == "0.05"
    forward = _rows(S.run_at(chapter, "chapter-forward-pass"))
    assert forward["paired draws m"] == "300, 1,000"
    assert "n (estimation draws)" in forward and "n0 (selection draws)" in forward
    assert "coverage runs" not in _rows(S.run_at(chapter, "chapter-whole-curves"))


def test_the_pages_run_at_tables_that_read_the_test_split(fake_fashion_mnist, monkeypatch):
    monkeypatch.setenv("RSUTILS_DATA", str(fake_fashion_mnist))
    chapter = Chapter.open("smoke", seed=0, progress=False)
    npg = NpgSettings.at(chapter)
    deployed = _rows(npg.run_at(chapter, "chapter-deployed-soundness"))
    assert deployed["classifiers"] == "chapter 06's, fine-tuned from σ = 0.5"
    assert deployed["audited images"] == f"up to {SMOKE.audit.images}"
    assert deployed["test images certified"] == str(len(chapter.secondary.indices))
    saturation = _rows(npg.run_at(chapter, "chapter-npg-saturation"))
    assert saturation["base model"] == "chapter 01's small_cnn, σ = 0.5"
    assert "alpha" not in saturation  # a page without the profile's rows
    ascent = SigmaAscentSettings.at(chapter)
    a = SMOKE.ascent(0.25)
    method = _rows(ascent.run_at(chapter, "chapter-sigma-ascent-method"))
    assert method["sigma ascent (K, M, step, clamp)"] == (
        f"K = {a.iterations}, M = {a.draws}, step {a.lr}, clamp {a.clamp}"
    )
    assert "secondary experiments" not in method
    assert "fine-tuning" in _rows(ascent.run_at(chapter, "chapter-sigma-ascent"))
    beside = _rows(SotaSettings.at(chapter).run_at(chapter, "chapter-beside"))
    assert beside["published"] == f"{len(published_table_names())} tables (shipped with rsutils)"


def test_a_page_no_chapter_has_is_refused() -> None:
    with pytest.raises(ValueError, match="no chapter has a page 'chapter-tight-radius'"):
        settings_of("chapter-tight-radius")
    chapter = Chapter.open("smoke", progress=False)
    with pytest.raises(ValueError, match="FewerDrawsSettings has no page 'chapter-npg-training'"):
        FewerDrawsSettings.at(chapter).run_at(chapter, "chapter-npg-training")


def test_open_page_shows_the_run_at_table_and_returns_the_settings(monkeypatch) -> None:
    shown = []
    monkeypatch.setattr("rsutils.book.chapters.pages.display", shown.append)
    chapter, S = open_page("chapter-design-costs", "smoke", seed=2, progress=False)
    here = get_profile("smoke")
    assert (chapter.profile, chapter.seed, chapter.progress) == (here, 2, False)
    assert S == FewerDrawsSettings.of(here, 2)
    assert len(shown) == 1 and shown[0].equals(S.run_at(chapter, "chapter-design-costs"))


def test_every_page_is_a_page_of_one_chapter() -> None:
    pages = [page for kind in SETTINGS for page in kind.PAGES]
    assert len(pages) == len(set(pages))
    assert all(page.startswith("chapter-") for page in pages)
    for kind in SETTINGS:  # each page's rows come from a method of its settings
        assert all(callable(getattr(kind, method)) for method in kind.PAGES.values())


# The pages' sources.


def _code(path: Path) -> list[ast.Module]:
    cells = jupytext.reads(path.read_text(), fmt="py:percent").cells
    return [ast.parse(c.source) for c in cells if c.cell_type == "code"]


#: Nodes with a scope of their own: what they bind is not the notebook's.
SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _bound(module: ast.Module) -> set[str]:
    """The names a notebook cell binds in the notebook's namespace (not inside its
    functions, classes, lambdas or comprehensions)."""
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            return
        if isinstance(node, SCOPES):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    for statement in module.body:
        visit(statement)
    return names


def _opened(path: Path) -> list[str]:
    """The page labels ``path`` opens (the first argument of each ``open_page`` call)."""
    return [
        node.args[0].value
        for module in _code(path)
        for node in ast.walk(module)
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "open_page"
        and isinstance(node.args[0], ast.Constant)
    ]


def settings_names(kind: type[ChapterSettings]) -> set[str]:
    """The names of ``kind``'s settings: its fields and properties, in lower case."""
    fields = {f.name for f in dataclasses.fields(kind)}
    properties = {name for name, v in vars(kind).items() if isinstance(v, property)}
    return {name.lower() for name in fields | properties}


def retyped(path: Path, kind: type[ChapterSettings]) -> list[str]:
    """The names of ``kind``'s settings (in any case) that ``path`` binds again."""
    names = settings_names(kind) | {n.lower() for n in RETYPED[kind]}
    bound = set().union(*map(_bound, _code(path)))
    return sorted(name for name in bound if name.lower() in names)


def _pages(number: str) -> list[Path]:
    return sorted(NOTEBOOKS.glob(f"{number}[a-z_]*.py"))


@pytest.mark.parametrize("number", FAMILIES)
def test_every_page_of_a_chapter_opens_with_its_settings(number: str) -> None:
    kind = FAMILIES[number]
    opened = {path.name: _opened(path) for path in _pages(number)}
    assert all(len(labels) == 1 for labels in opened.values()), opened
    assert sorted(labels[0] for labels in opened.values()) == sorted(kind.PAGES), opened
    for path in _pages(number):
        text = path.read_text()
        assert "Chapter.open(" not in text and ".run_at(" not in text, path.name


@pytest.mark.parametrize("number", FAMILIES)
def test_no_page_assigns_its_chapters_settings_again(number: str) -> None:
    kind = FAMILIES[number]
    found = {path.name: retyped(path, kind) for path in _pages(number)}
    assert not any(found.values()), f"read these from S instead: {found}"


def test_the_source_check_sees_a_setting_typed_again(tmp_path: Path) -> None:
    page = tmp_path / "08b_page.py"
    page.write_text(
        '# %% tags=["hide-input"]\n'
        'chapter, S = open_page("chapter-whole-curves", profile)\n'
        "R_OVER_SIGMA = (0.0, 1.0)\n"
        "for schedule in (1, 2):\n    pass\n"
        "def f(n):\n    alpha = n\n    return alpha\n"
    )
    assert retyped(page, FewerDrawsSettings) == ["R_OVER_SIGMA", "schedule"]
    assert _opened(page) == ["chapter-whole-curves"]
