"""Chapter 07's ledger as a reader uses it: one interactive table of every statement.

The chapter shows the whole ledger (every number-bearing sentence of the three papers,
with its check) in one DataTables table (itables, inlined into the page: it must work
without a network). Runs on ``_build/html`` like ``test_rendered_book.py``: the table
is interactive (a search box that filters, a length menu that shows every row at
once, with the count of rows in its info line), its quotes' TeX is typeset on every
page of rows, and it fits the text column at 1280 px.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("RSUTILS_BOOK_HTML", REPO / "_build" / "html"))
PAGE = "book/_executed/07_sota_tables.html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.browser

if not (HTML / PAGE).is_file():
    if os.environ.get("RSUTILS_BOOK_HTML"):
        raise RuntimeError(f"no chapter 07 in the built book at {HTML}: run `make html` first")
    pytest.skip(f"no built book at {HTML} (make html)", allow_module_level=True)

#: The narrowest common desktop width, as in ``test_rendered_book.py``.
DESKTOP = {"width": 1280, "height": 900}
#: The ledger's container: the DataTables wrapper of the page's one itables table.
LEDGER = "div.dt-container:has(table[id^='itables_'])"
#: TeX a reader would see raw: an inline formula MathJax has not typeset.
RAW_TEX = re.compile(r"\$[^$\s][^$]*\$|\\%")
#: Where an online copy of DataTables would be fetched from.
CDNS = ("dt_for_itables", "cdn.datatables.net", "cdn.jsdelivr.net/npm/datatables")


@pytest.fixture
def ledger(browser, server):
    """The chapter at 1280 px once its ledger is drawn and MathJax has started, with the
    requests that failed meanwhile (a CDN it could not reach, for one)."""
    page = browser.new_page(viewport=DESKTOP)
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.on("pageerror", lambda e: failed.append(f"script error: {e}"))
    page.goto(server + PAGE, wait_until="load")
    page.wait_for_selector(f"{LEDGER} .dt-info", timeout=30_000)
    page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
    page.evaluate("() => MathJax.startup.promise.then(() => true)")
    yield page, failed
    page.close()


def statements() -> int:
    """The number of rows of the ledger, from the library that ships it."""
    from rsutils.book.audit import ledger as lg

    return len(lg.ledger())


def info(page) -> str:
    return page.locator(f"{LEDGER} .dt-info").inner_text()


def shown_rows(page) -> list[str]:
    return page.locator(f"{LEDGER} tbody tr").all_inner_texts()


def show_all(page) -> None:
    page.locator(f"{LEDGER} select").select_option("-1")
    page.wait_for_function(
        f'n => document.querySelectorAll("{LEDGER} tbody tr").length === n',
        arg=statements(),
    )


def test_the_page_loads_datatables_from_itself(ledger) -> None:
    page, failed = ledger
    assert failed == [], failed
    source = (HTML / PAGE).read_text()
    assert [cdn for cdn in CDNS if cdn in source] == [], "the ledger needs the network"
    assert page.locator(LEDGER).count() == 1, "one interactive table of the whole ledger"


def test_the_ledger_shows_every_row_when_asked(ledger) -> None:
    page, _ = ledger
    n = statements()
    assert re.search(rf"\bof {n:,} entries", info(page)), info(page)
    assert len(shown_rows(page)) < n, "the first page shows a part of the ledger"
    show_all(page)
    assert len(shown_rows(page)) == n
    assert f"Showing 1 to {n:,} of {n:,} entries" in info(page), info(page)


def test_typing_a_verdict_filters_the_rows(ledger) -> None:
    page, _ = ledger
    n = statements()
    show_all(page)
    search = page.locator(f"{LEDGER} input[type=search]")
    assert search.count() == 1, "the ledger has no search box"
    search.fill("does not hold")
    page.wait_for_function(
        f"() => document.querySelector(\"{LEDGER} .dt-info\").innerText.includes('filtered')"
    )
    rows = shown_rows(page)
    assert 0 < len(rows) < n, info(page)
    assert f"filtered from {n:,} total entries" in info(page), info(page)
    # DataTables' smart search keeps a row when each word is part of its text
    assert all(all(w in r.lower() for w in ("does", "not", "hold")) for r in rows)
    verdicts = page.locator(f"{LEDGER} tbody td:text-is('does not hold')").count()
    assert verdicts > 0, "no row whose verdict is 'does not hold' survives the filter"


def test_the_quotes_are_typeset_on_every_row(ledger) -> None:
    page, _ = ledger
    show_all(page)
    page.evaluate("() => MathJax.startup.promise.then(() => MathJax.typesetPromise([]))")
    raw = page.evaluate(
        f"""() => {{
        const copy = document.querySelector("{LEDGER} table").cloneNode(true);
        copy.querySelectorAll('mjx-container, script, style').forEach(e => e.remove());
        return copy.textContent;
    }}"""
    )
    left = sorted({m.group(0) for m in RAW_TEX.finditer(raw)})
    assert left == [], f"TeX left untypeset in the ledger: {left[:10]}"


def test_the_ledger_fits_the_text_column(ledger) -> None:
    page, _ = ledger
    show_all(page)
    sizes = page.evaluate(
        f"""() => {{
        const column = document.querySelector('article.bd-article')
            || document.querySelector('main');
        const ledger = document.querySelector("{LEDGER}");
        const table = ledger.querySelector('table');
        return {{
            column: column.getBoundingClientRect().right,
            ledger: ledger.getBoundingClientRect().right,
            table: table.getBoundingClientRect().right,
            scrolls: [ledger, ledger.parentElement, table]
                .some(e => e.scrollWidth > e.clientWidth + 2),
        }};
    }}"""
    )
    assert sizes["ledger"] <= sizes["column"] + 2, sizes
    assert sizes["table"] <= sizes["column"] + 2, sizes
    assert not sizes["scrolls"], sizes
