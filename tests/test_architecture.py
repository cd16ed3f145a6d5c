"""The package's layers, read off its import graph, and its public surface.

``core`` and ``geometry`` import no other part of rsutils, ``memory`` (the certificate
memory, shared by ``ddrs`` and ``anisotropic``) imports only those two, and nothing
outside ``book`` imports ``book``: the library never depends on the book built on it.
"""

import ast
import re
from pathlib import Path

import pytest

import rsutils

PACKAGE = Path(rsutils.__file__).resolve().parent
REPO = Path(__file__).resolve().parents[1]
SELF_CONTAINED = ("core", "geometry")
#: Parts that may import only the parts listed (besides themselves).
IMPORTS_ONLY = {"memory": {"core", "geometry"}}


def imported_parts(source: str) -> set[str]:
    """The parts of rsutils (``core``, ``book``, ``cache``…) that ``source`` imports."""
    parts = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "rsutils":
                names = [f"rsutils.{alias.name}" for alias in node.names]
        else:
            continue
        parts |= {name.split(".")[1] for name in names if name.startswith("rsutils.")}
    return parts


def layering_violations(part: str, source: str) -> list[str]:
    """What a module of ``part`` (a subpackage, or ``""`` for the top level) may not import."""
    imported = imported_parts(source) - {part}
    problems = []
    if part in SELF_CONTAINED and imported:
        problems.append(f"{part} imports {sorted(imported)}")
    if part in IMPORTS_ONLY and imported - IMPORTS_ONLY[part]:
        problems.append(f"{part} imports {sorted(imported - IMPORTS_ONLY[part])}")
    if part != "book" and "book" in imported:
        problems.append(f"{part or 'rsutils'} imports book")
    return problems


def modules() -> list[tuple[str, Path]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        part = relative.parts[0] if len(relative.parts) > 1 else ""
        found.append((part, path))
    return found


def test_the_checker_sees_a_forbidden_import() -> None:
    assert layering_violations("core", "from rsutils.memory.balls import CertificateMemory")
    assert layering_violations("core", "import rsutils.memory.balls")
    assert layering_violations("geometry", "from rsutils import anisotropic")
    assert layering_violations("logs", "from rsutils.book.profiles import PROFILES")
    assert layering_violations("", "from rsutils.book import chapter")
    assert not layering_violations("core", "from rsutils.core.noise import Gaussian\nimport torch")
    assert not layering_violations("book", "from rsutils.memory import replay")


def test_the_checker_keeps_the_memory_on_core_and_geometry() -> None:
    assert layering_violations("memory", "from rsutils.ddrs.sigma_ascent import SigmaAscent")
    assert layering_violations("memory", "from rsutils import anisotropic")
    assert layering_violations("memory", "import rsutils.logs.analysis")
    assert layering_violations("memory", "from rsutils.book import chapter")
    allowed = [
        "from rsutils.core.smooth import ABSTAIN",
        "from rsutils.geometry.balls import norm_ball",
        "from rsutils.memory.engine import ACTIONS",
    ]
    assert not layering_violations("memory", "\n".join(allowed))
    assert not layering_violations("ddrs", "from rsutils.memory.balls import CertificateMemory")


@pytest.mark.parametrize(
    ("part", "path"), modules(), ids=[str(path.relative_to(PACKAGE)) for _, path in modules()]
)
def test_layering(part: str, path: Path) -> None:
    assert layering_violations(part, path.read_text()) == [], path.relative_to(PACKAGE)


def test_every_public_name_is_importable_from_the_top() -> None:
    for name in rsutils.__all__:
        assert getattr(rsutils, name) is not None, name
    wanted = {
        "Smooth", "ABSTAIN", "Certificate", "CertifySettings", "Gaussian", "Laplace",
        "UniformCube", "ExponentialLinf", "PowerLawLinf", "Anisotropic", "DataDependentSmooth",
        "CertificateMemory", "SigmaAscent", "read_log", "certified_accuracy",
    }  # fmt: skip
    assert wanted <= set(rsutils.__all__)


def test_the_readme_imports_from_the_top_only() -> None:
    readme = (REPO / "README.md").read_text()
    code = "\n".join(re.findall(r"```python\n(.*?)```", readme, flags=re.S))
    imports = re.findall(r"^\s*(?:from|import) (rsutils\S*)", code, flags=re.M)
    assert imports and set(imports) == {"rsutils"}


def test_the_package_docstring_lists_the_public_surface() -> None:
    listed = set(re.findall(r"``(\w+)``", rsutils.__doc__))
    assert listed == set(rsutils.__all__) - {"__version__"}


UCAN = PACKAGE / "anisotropic"


def ucan_classes() -> set[str]:
    """The names of the classes that ``rsutils/anisotropic`` defines."""
    return {
        node.name
        for path in UCAN.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
    }


def class_switches(source: str, classes: set[str]) -> list[str]:
    """The ``isinstance``/``issubclass`` calls and ``type(x) is C`` tests of ``source``
    on any of ``classes`` (by name, attribute access or in a tuple), as source text."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in (
            "isinstance",
            "issubclass",
        ):
            tested = node.args[1:2]
        elif isinstance(node, ast.Compare) and _is_type_call(node.left):
            tested = node.comparators
        else:
            continue
        for target in tested:
            elements = target.elts if isinstance(target, ast.Tuple) else [target]
            names = {getattr(e, "id", None) or getattr(e, "attr", None) for e in elements}
            if names & classes:
                found.append(ast.unparse(node))
    return found


def _is_type_call(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) == "type"


def test_the_switch_checker_sees_a_switch_on_a_ucan_class() -> None:
    classes = ucan_classes()
    assert {"Anisotropic", "GeneratedSmooth", "NoiseGenerator", "AuditSettings"} <= classes
    for source in (
        "isinstance(noise, Anisotropic)",
        "isinstance(s, (Smooth, GeneratedSmooth))",
        "isinstance(s.noise, rsutils.anisotropic.noise.Anisotropic)",
        "issubclass(kind, FixedNoise)",
        "type(noise) is Anisotropic",
    ):
        assert class_switches(source, classes), source
    assert not class_switches("isinstance(noise, Gaussian)\nnoise.anisotropic", classes)


def test_no_module_outside_anisotropic_switches_on_a_ucan_class() -> None:
    """Callers ask a smoothed classifier or a noise what they need to know
    (:class:`~rsutils.core.smoothed.SmoothedClassifier`, ``NoiseFamily.anisotropic``)
    instead of asking whether it is a UCAN class."""
    classes = ucan_classes()
    switches = {
        str(path.relative_to(PACKAGE)): found
        for _, path in modules()
        if UCAN not in path.parents and (found := class_switches(path.read_text(), classes))
    }
    assert switches == {}


#: The most lines one module of rsutils may have: past it, a module holds more than one
#: concept and is split (the audit and the memory were, at 980 and 502 + 445 lines).
MAX_MODULE_LINES = 600


def test_no_module_is_longer_than_one_concept_needs() -> None:
    long = {
        str(path.relative_to(PACKAGE)): lines
        for _, path in modules()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, f"split these modules (at most {MAX_MODULE_LINES} lines): {long}"


def private_imports(source: str) -> list[str]:
    """``module.name`` for every ``_private`` name that ``source`` imports from rsutils."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("rsutils"):
            private = [a.name for a in node.names if a.name.startswith("_")]
            found += [f"{node.module}.{name}" for name in private if not name.endswith("__")]
    return found


def test_the_private_import_checker_sees_one() -> None:
    assert private_imports("from rsutils.logs.runner import _run, certify_dataset") == [
        "rsutils.logs.runner._run"
    ]
    assert private_imports("from rsutils.core import radius as _radius") == []
    assert private_imports("from rsutils import __version__") == []


SOURCES = [
    path
    for folder in ("rsutils", "notebooks", "book", "tests")
    for path in sorted((REPO / folder).rglob("*.py"))
    if "_build" not in path.parts and "_executed" not in path.parts
]


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(REPO)) for p in SOURCES])
def test_no_module_imports_another_modules_private_names(path: Path) -> None:
    """What two modules share is public and documented in the one that defines it."""
    assert private_imports(path.read_text()) == [], path.relative_to(REPO)
