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


#: The book's plotting stack, which only ``rsutils.book`` (and the chapters) may import.
PLOTTING = ("matplotlib", "seaborn")


def imported_top_level(source: str) -> set[str]:
    """The top-level packages (``torch``, ``matplotlib``…) that ``source`` imports."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_book_imports_the_plotting_stack() -> None:
    assert imported_top_level("import matplotlib.pyplot as plt\nfrom seaborn import x") == {
        "matplotlib", "seaborn",
    }  # fmt: skip
    offenders = [
        str(path.relative_to(PACKAGE))
        for part, path in modules()
        if part != "book" and imported_top_level(path.read_text()) & set(PLOTTING)
    ]
    assert offenders == []


#: Run in a fresh interpreter: importing matplotlib or seaborn fails as if neither were
#: installed, then the library certifies an input and a dataset into a log.
WITHOUT_PLOTTING = """
import sys


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("matplotlib", "seaborn"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
import torch

import rsutils

torch.manual_seed(0)
model = rsutils.build_model("small_cnn", "fashion-mnist").eval()
smooth = rsutils.Smooth(model, 10, rsutils.Gaussian(0.25))
cert = smooth.certify(torch.rand(1, 28, 28), n0=10, n=100, alpha=0.01, seed=0)
assert cert.prediction == rsutils.ABSTAIN or cert.radius >= 0
images, labels = torch.rand(3, 1, 28, 28), torch.arange(3)
data = rsutils.Dataset("fashion-mnist", "test", images, labels, tuple("abcdefghij"))
settings = rsutils.CertifySettings(n0=10, n=100, alpha=0.01, batch_size=100)
log = rsutils.certify_dataset(smooth, data, range(3), sys.argv[1], settings, progress=False)
assert len(log) == 3, log
assert not [m for m in sys.modules if m.split(".")[0] in ("matplotlib", "seaborn")]
try:
    import rsutils.book
except ImportError as error:
    print(error)
"""


@pytest.mark.slow  # a fresh interpreter imports torch
def test_the_library_certifies_without_matplotlib_and_seaborn(tmp_path) -> None:
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_PLOTTING, str(tmp_path / "log.tsv")],
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "rsutils.book (the book's helpers) needs matplotlib" in result.stdout
    assert "pip install 'rsutils[book]'" in result.stdout
