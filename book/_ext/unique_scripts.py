"""Include each page script once.

sphinx-thebe (loaded by Jupyter Book) registers its inline configuration script from
an event handler, and in this book's build every page ended up with that script twice:
it declared ``const THEBE_JS_URL`` twice and the browser raised "Identifier
'THEBE_JS_URL' has already been declared" on every page (tests/browser catches it).
This drops repeated scripts, whatever added them.
"""

from __future__ import annotations

from sphinx.application import Sphinx


def _identity(script: object) -> tuple[str, tuple[str, ...]]:
    """A script's file (an inline one has ``None`` or ``""``) and attributes (its body)."""
    filename = getattr(script, "filename", script) or ""
    attributes = getattr(script, "attributes", {}) or {}
    return str(filename), tuple(sorted(map(str, attributes.items())))


def drop_repeated_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        key = _identity(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
