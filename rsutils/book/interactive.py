"""Long tables a reader can search: every row, sortable and filtered as one types.

:func:`interactive_table` shows a DataFrame with itables (DataTables), inlined into the
notebook so that the built book needs no network, with nothing cut (pandas' display
limit cuts a long table to its first and last rows), columns of given widths that wrap
to the text column, and the TeX of its cells typeset by the book's MathJax on every
page of rows it draws.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

__all__ = ["LENGTHS", "interactive_table"]

#: The choices of rows per page, "All" last.
LENGTHS = [[10, 25, 50, -1], [10, 25, 50, "All"]]
#: Typesets the TeX of the rows each page of the table draws, once MathJax has started.
TYPESET = (
    "function (settings) { const m = window.MathJax; if (m && m.startup"
    " && m.startup.promise) m.startup.promise.then("
    "() => m.typesetPromise([settings.nTable])); }"
)
_inlined = False


def interactive_table(frame: pd.DataFrame, widths: Mapping[str, str]) -> None:
    """Show ``frame``'s columns named in ``widths`` (in that order; each a CSS width such
    as ``"12%"``, or ``""`` to take what is left) as an interactive table of every row.

    The first call in a notebook inlines DataTables' code into it (itables' offline
    mode); a column ``widths`` names that ``frame`` lacks raises :class:`KeyError`.
    """
    from itables import JavascriptFunction, init_notebook_mode, show

    global _inlined
    missing = [column for column in widths if column not in frame.columns]
    if missing:
        raise KeyError(f"the table has no column {missing} (it has {list(frame.columns)})")
    if not _inlined:
        init_notebook_mode(all_interactive=False, connected=False)
        _inlined = True
    sizes = [{"width": w, "targets": i} for i, w in enumerate(widths.values()) if w]
    show(
        frame[list(widths)],
        classes="display compact",
        maxBytes=0,
        showIndex=False,
        display_logo_when_loading=False,
        order=[],
        drawCallback=JavascriptFunction(TYPESET),
        columnDefs=sizes,
        style="table-layout:fixed;width:100%;margin:0",
        css=".dt-container table { font-size: 0.75em; overflow-wrap: break-word }",
        lengthMenu=LENGTHS,
    )
