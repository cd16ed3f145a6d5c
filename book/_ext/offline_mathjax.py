"""Serve MathJax from the built book, so that its math renders without a network.

The book's pages load ``_static/mathjax/MathJax.js`` (MathJax 2.7, the copy that the
``jupyter-server-mathjax`` package ships and the book's set-up installs), which this
extension copies into the HTML output when the build finishes. Where that copy is
missing (a page opened without its ``_static`` folder), ``mathjax-fallback.js`` loads
the same MathJax version from a CDN instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx

#: The files of MathJax that the pages use (TeX input, HTML-CSS output, STIX-Web fonts).
KEEP = ("MathJax.js", "config", "extensions", "jax", "fonts", "localization/en")


def mathjax_source() -> Path:
    """The MathJax folder installed by ``jupyter-server-mathjax``."""
    import jupyter_server_mathjax

    return Path(jupyter_server_mathjax.__file__).parent / "static"


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source, target = mathjax_source(), Path(app.outdir) / "_static" / "mathjax"
    for name in KEEP:
        origin = source / name
        if origin.is_dir():
            shutil.copytree(origin, target / name, dirs_exist_ok=True)
        elif origin.is_file():
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target / name)


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
