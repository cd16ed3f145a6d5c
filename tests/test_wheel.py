"""The library as a user gets it: built into a wheel and an sdist, installed into a fresh
virtual environment outside the repository, and used there through its public API, the
README's example and the ``rsutils`` console script."""

from __future__ import annotations

import os
import re
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow
#: A user's environment: nothing of the repository on the path (not even PYTHONPATH).
CLEAN = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """The wheel and sdist, built from the working tree (no network: this environment's
    setuptools builds them)."""
    out = tmp_path_factory.mktemp("dist")
    command = [sys.executable, "-m", "build", "--no-isolation", "--wheel", "--sdist"]
    subprocess.run(
        [*command, "--outdir", str(out), str(REPO)], check=True, capture_output=True, env=CLEAN
    )
    return out


@pytest.fixture(scope="module")
def fresh(dist, tmp_path_factory) -> Path:
    """A new virtual environment with the wheel installed (and nothing from the repo).

    Its dependencies (torch, scipy, ...) are lent by this environment through a ``.pth``
    file placed after the fresh site-packages, so the wheel's copy of rsutils wins.
    """
    root = tmp_path_factory.mktemp("user") / "venv"
    venv.EnvBuilder(with_pip=False).create(root)
    python = root / "bin" / "python"
    fresh_site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()
    )  # fmt: skip
    (wheel,) = dist.glob("rsutils-*.whl")
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps"]
    subprocess.run([*pip, "--no-index", str(wheel)], check=True, capture_output=True, env=CLEAN)
    # After the install: pip must not see this environment's own rsutils as installed.
    (fresh_site / "zz_lent_dependencies.pth").write_text("\n".join(site.getsitepackages()))
    return root


def run(fresh: Path, code: str, cwd: Path, **env: str) -> str:
    result = subprocess.run(
        [str(fresh / "bin" / "python"), "-c", code],
        cwd=cwd, capture_output=True, text=True, env={**CLEAN, **env},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_the_wheel_carries_the_package_data_and_not_the_book(dist) -> None:
    (wheel,) = dist.glob("rsutils-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "rsutils/py.typed" in names
    assert "rsutils/book/tables/qualitative_claims.csv" in names
    published = [n for n in names if n.startswith("rsutils/book/tables/published/")]
    assert len(published) >= 12 and any(n.endswith(".json") for n in published)
    assert not [n for n in names if n.startswith(("notebooks/", "book/", "tests/", "_build/"))]
    assert any(n.endswith("entry_points.txt") for n in names)
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    requires = [
        line.removeprefix("Requires-Dist: ")
        for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
        if line.startswith("Requires-Dist: ")
    ]
    plotting = [r for r in requires if r.startswith(("matplotlib", "seaborn"))]
    assert len(plotting) == 2 and all('extra == "book"' in r for r in plotting), plotting
    (sdist,) = dist.glob("rsutils-*.tar.gz")
    assert sdist.stat().st_size > 0


#: Prepended to code run in the fresh environment: matplotlib and seaborn are refused
#: (``REFUSED.off()`` lifts it), as if installed without the book's extra; this
#: environment lends its own copies.
WITHOUT_THE_BOOK_EXTRA = """
import sys
class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("matplotlib", "seaborn"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    def off(self):
        sys.meta_path.remove(self)
REFUSED = NotInstalled()
sys.meta_path.insert(0, REFUSED)
"""


def test_the_fresh_environment_uses_the_wheel_not_the_repository(fresh, tmp_path) -> None:
    """... and its rsutils.book needs the book's extra, says so, and then works."""
    code = WITHOUT_THE_BOOK_EXTRA + (
        "import rsutils\n"
        "print(rsutils.__file__)\n"
        "try:\n"
        "    import rsutils.book\n"
        "except ImportError as error:\n"
        "    print(str(error).replace(chr(10), ' '))\n"
        "REFUSED.off()\n"
        "from rsutils.book.papers.published import published_table_names as n\n"
        "print(len(n()))\n"
    )
    where, without_extra, tables = run(fresh, code, tmp_path).splitlines()
    assert where.startswith(str(fresh)) and str(REPO) not in where
    assert "needs matplotlib" in without_extra and "pip install 'rsutils[book]'" in without_extra
    assert int(tables) >= 6


def test_the_readme_example_runs_as_printed_without_the_book_extra(fresh, tmp_path) -> None:
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## The library") :]
    (example,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)[:1]
    printed = run(fresh, WITHOUT_THE_BOOK_EXTRA + example, tmp_path).split()
    prediction, radius = int(printed[0]), float(printed[1])
    assert prediction == -1 or (0 <= prediction < 10 and radius >= 0)


def test_a_tiny_model_is_certified_by_the_api_and_the_console_script(
    fresh, tmp_path, fake_fashion_mnist
) -> None:
    save = (
        "import torch\n"
        "from rsutils import build_model, save_checkpoint\n"
        "torch.manual_seed(0)\n"
        "model = build_model('small_cnn', 'fashion-mnist').eval()\n"
        "save_checkpoint(model, 'tiny.pt', arch='small_cnn', dataset='fashion-mnist')\n"
        "from rsutils import Gaussian, Smooth, load_checkpoint\n"
        "loaded, _ = load_checkpoint('tiny.pt')\n"
        "x = torch.rand(1, 28, 28)\n"
        "cert = Smooth(loaded, 10, Gaussian(0.25)).certify(x, 10, 200, 0.01, 100, seed=0)\n"
        "print(cert.prediction, cert.radius)\n"
    )
    assert len(run(fresh, save, tmp_path).split()) == 2
    script = fresh / "bin" / "rsutils"
    result = subprocess.run(
        [str(script), "certify", "fashion-mnist", "tiny.pt", "0.25", "log.tsv",
         "--N", "200", "--N0", "10", "--alpha", "0.01", "--batch", "100", "--max", "3",
         "--quiet"],
        cwd=tmp_path, capture_output=True, text=True,
        env={**CLEAN, "RSUTILS_DATA": str(fake_fashion_mnist)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rows = (tmp_path / "log.tsv").read_text().splitlines()
    assert rows[0].split("\t")[:4] == ["idx", "label", "predict", "radius"] and len(rows) == 4
