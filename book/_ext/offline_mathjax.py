"""Serve MathJax from the built book, so that its math renders without a network.

The book's pages load ``_static/mathjax/tex-svg.js`` (MathJax 3.2, the copy that the
``sphinx-mathjax-offline`` package ships and the book's set-up installs), which this
extension copies into the HTML output when the build finishes: the TeX-to-SVG bundle
and the components it may load on demand (TeX packages, the menu, assistive MathML).
Where that copy is missing (a page opened without its ``_static`` folder),
``mathjax-fallback.js`` loads the same MathJax version from a CDN instead.
"""

from __future__ import annotations

import shutil
from importlib.metadata import distribution
from pathlib import Path

from sphinx.application import Sphinx

#: What the pages load: the bundle, then what it fetches on demand.
KEEP = ("tex-svg.js", "input", "ui", "a11y", "adaptors")


def mathjax_source() -> Path:
    """The MathJax folder installed by ``sphinx-mathjax-offline`` (a folder whose name
    is not importable, so it is found through the distribution's files)."""
    return Path(
        distribution("sphinx-mathjax-offline").locate_file("sphinx-mathjax-offline/static/mathjax")
    )


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source, target = mathjax_source(), Path(app.outdir) / "_static" / "mathjax"
    for name in KEEP:
        origin = source / name
        if origin.is_dir():
            shutil.copytree(origin, target / name, dirs_exist_ok=True)
        else:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target / name)


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
