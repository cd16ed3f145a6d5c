"""Compare two builds of the book: every glued value, every shown output, every figure.

    python book/compare_executed.py OLD_DIR NEW_DIR     # e.g. a copy of book/_executed

A refactoring must leave the book's numbers alone. This reads the executed notebooks of
two runs (``NN_slug.ipynb`` in both folders) and reports, per chapter, which glued values
(by name), shown outputs (tables and printed values, in order) and figures (PNG bytes)
differ. Run times live in the notebooks' metadata and are not compared; timings measured
by a run and glued into the prose are, so compare runs that share the cache. Exits 1
when a glued value or an output differs.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

#: The MIME prefix under which myst-nb stores values glued with ``display=False``.
RECORD = "application/papermill.record/"


@dataclass
class Outputs:
    """What a reader of one executed notebook sees, or can glue into the prose."""

    glued: dict[str, str] = field(default_factory=dict)
    shown: list[str] = field(default_factory=list)
    figures: dict[str, str] = field(default_factory=dict)


def read_outputs(path: Path) -> Outputs:
    """The glued values, shown outputs and figure digests of an executed notebook."""
    found = Outputs()
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []) if cell.cell_type == "code" else []:
            if output.output_type == "stream":
                continue
            data = {
                key.removeprefix(RECORD): value for key, value in output.get("data", {}).items()
            }
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if "image/png" in data:
                digest = hashlib.sha256(str(data["image/png"]).encode()).hexdigest()[:12]
                found.figures[name or f"figure {len(found.figures) + 1}"] = digest
            elif name:
                found.glued[name] = str(data.get("text/plain"))
            elif output.output_type == "error":
                found.shown.append(f"error {output.ename}: {output.evalue}")
            else:
                text = data.get("text/html") or data.get("text/markdown") or data.get("text/plain")
                found.shown.append("".join(text) if isinstance(text, list) else str(text))
    return found


def compare(old: Outputs, new: Outputs) -> list[str]:
    """One line per difference that counts (glued values and shown outputs)."""
    lines = [
        f"glued {name}: {old.glued.get(name)!r} -> {new.glued.get(name)!r}"
        for name in sorted(set(old.glued) | set(new.glued))
        if old.glued.get(name) != new.glued.get(name)
    ]
    pairs = enumerate(zip(old.shown, new.shown, strict=False))
    lines += [f"output {i + 1} differs" for i, (a, b) in pairs if a != b]
    if len(old.shown) != len(new.shown):
        lines.append(f"{len(old.shown)} outputs before, {len(new.shown)} after")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    args = parser.parse_args(argv)
    differences = 0
    for old_path in sorted(args.old.glob("[0-9][0-9]*_*.ipynb")):
        new_path = args.new / old_path.name
        if not new_path.exists():
            print(f"{old_path.name}: missing from {args.new}")
            differences += 1
            continue
        old, new = read_outputs(old_path), read_outputs(new_path)
        problems = compare(old, new)
        same_figures = sum(new.figures.get(k) == v for k, v in old.figures.items())
        print(
            f"{old_path.name}: {len(old.glued)} glued values, {len(old.shown)} outputs, "
            f"{same_figures}/{len(old.figures)} figures byte-identical; "
            f"{len(problems)} difference(s)"
        )
        for line in problems:
            print(f"  {line}")
        differences += len(problems)
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
