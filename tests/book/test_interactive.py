"""An interactive table shows every row, offline, in the columns asked for."""

from __future__ import annotations

import pandas as pd
import pytest

from rsutils.book import interactive


def test_every_row_is_shown_offline_in_the_columns_asked_for(monkeypatch) -> None:
    import itables

    shown, inlined = [], []
    monkeypatch.setattr(itables, "show", lambda frame, **options: shown.append((frame, options)))
    monkeypatch.setattr(itables, "init_notebook_mode", lambda **options: inlined.append(options))
    monkeypatch.setattr(interactive, "_inlined", False)
    frame = pd.DataFrame({"id": range(500), "quote": ["$x$"] * 500, "note": [""] * 500})
    interactive.interactive_table(frame, {"quote": "40%", "id": ""})
    interactive.interactive_table(frame, {"id": "10%"})
    assert inlined == [{"all_interactive": False, "connected": False}]  # inlined once
    table, options = shown[0]
    assert list(table.columns) == ["quote", "id"] and len(table) == 500
    assert options["maxBytes"] == 0  # itables would otherwise drop rows of a large table
    assert options["columnDefs"] == [{"width": "40%", "targets": 0}]
    assert -1 in options["lengthMenu"][0] and "All" in options["lengthMenu"][1]


def test_a_column_the_table_lacks_is_named() -> None:
    with pytest.raises(KeyError, match=r"no column \['verdict'\]"):
        interactive.interactive_table(pd.DataFrame({"id": [1]}), {"verdict": ""})
