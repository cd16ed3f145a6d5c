"""The built book as a reader sees it: every page opened in headless Chromium.

Runs on ``_build/html`` (``make browser``, after ``make html``; ``make test`` builds the
smoke book first). The book is served over HTTP from this machine only, so the pages
must work without a network: no JavaScript error, every image loaded, every formula
typeset by the book's own MathJax, no glue key or local path left in the text, no
empty table, every internal link and anchor resolving, and nothing wider than the text
column at the narrowest common desktop width.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

REPO = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("RSUTILS_BOOK_HTML", REPO / "_build" / "html"))
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.browser

if not (HTML / "index.html").is_file():
    if os.environ.get("RSUTILS_BOOK_HTML"):
        raise RuntimeError(f"no built book at {HTML}: run `make html` first")
    pytest.skip(f"no built book at {HTML} (make html)", allow_module_level=True)

ALL_PAGES = sorted(
    p.relative_to(HTML).as_posix()
    for p in HTML.rglob("*.html")
    if not p.relative_to(HTML).parts[0].startswith("_")
)
REDIRECT = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)"', re.I)
#: The pages a reader reads (index.html only redirects to the introduction).
PAGES = [name for name in ALL_PAGES if not REDIRECT.search((HTML / name).read_text())]
#: Absolute paths of this machine that a published page must not show.
LOCAL_PATHS = (str(REPO), str(REPO.parent / "shared"))

#: The text a reader sees, without code, scripts and what MathJax has typeset.
VISIBLE_TEXT = """() => {
  const copy = document.body.cloneNode(true);
  copy.querySelectorAll('pre, code, .pre, script, style, mjx-container')
    .forEach(e => e.remove());
  return copy.textContent;
}"""
RAW_TEX = re.compile(r"\\\(|\\\[|\\(frac|sigma|alpha|mathrm|lambda|Phi)\b|\$[^$\s][^$]*\$")

#: The narrowest common desktop width, with both of sphinx-book-theme's sidebars shown
#: (the book's contents and the page's): a code cell holds 77 characters, a folded one
#: (hide-input) 75, the line length of notebooks/ruff.toml. The column grows with the
#: window and jumps wider where the theme folds a sidebar away (below 1200 px, then
#: below 960 px: at 1100 px a cell holds 92 characters, at 800 px 83), so a narrower
#: window would only find more in the bands just above those two widths (69 characters
#: at 1200 px, 73 at 960 px), which are not the width of any common screen, or at phone
#: widths, where no code of any book fits.
DESKTOP = {"width": 1280, "height": 900}
#: Everything in the text column that scrolls sideways: code cells, their outputs,
#: tables and display math, each by its kind, section and first words. Folded cells
#: (hide-input) are opened first, since a reader may unfold them. A pixel or two of
#: scrollable width is rounding, not content.
TOO_WIDE = """() => {
  const column = document.querySelector('article.bd-article') || document.querySelector('main');
  column.querySelectorAll('details').forEach(d => { d.open = true; });
  const right = column.getBoundingClientRect().right;
  const overflow = (e) => getComputedStyle(e).overflowX;
  const scrolls = (e) => ['auto', 'scroll'].includes(overflow(e));
  const clipped = (e) => {
    for (let up = e.parentElement; up && up !== column; up = up.parentElement) {
      if (overflow(up) !== 'visible') return true;
    }
    return false;
  };
  // Boxes, not runs of text: inline math at the end of a line pokes out by a few pixels.
  const box = (e) => getComputedStyle(e).display !== 'inline';
  // A heading's anchor link pokes out of the column; it hides nothing.
  const sticksOut = (e) => box(e) && !e.matches('.headerlink') && !clipped(e)
    && e.getBoundingClientRect().right > right + 2;
  const kind = (e) => e.closest('.cell_input') ? 'code'
    : e.closest('.cell_output') ? 'output'
    : e.closest('pre') ? 'code block'
    : e.matches('table') || e.querySelector('table') ? 'table'
    : e.matches('mjx-container') ? 'math' : e.tagName.toLowerCase();
  const found = [];
  for (const e of column.querySelectorAll('*')) {
    const excess = scrolls(e) ? e.scrollWidth - e.clientWidth
      : sticksOut(e) && !sticksOut(e.parentElement)
        ? Math.round(e.getBoundingClientRect().right - right) : 0;
    if (excess > 2) {
      const section = e.closest('section');
      const text = (e.innerText || e.textContent).trim();
      const words = text.split('\\n')[0].replace(/\\s+/g, ' ').slice(0, 50);
      found.push(`${kind(e)} in #${section ? section.id : '?'} by ${excess} px: ${words}`);
    }
  }
  return found;
}"""


def open_page(browser, url: str, viewport: dict[str, int] | None = None):
    """The page at ``url`` once loaded and typeset, with what went wrong meanwhile."""
    page = browser.new_page(viewport=viewport)
    problems: list[str] = []
    page.on(
        "console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None
    )
    page.on("pageerror", lambda e: problems.append(f"script error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"failed request: {r.url}"))
    page.on(
        "response",
        lambda r: problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
    )
    page.goto(url, wait_until="load")
    if page.evaluate("() => !!document.querySelector('.math')"):
        page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
    return page, problems


@pytest.mark.parametrize("name", PAGES)
def test_every_page_renders_cleanly(browser, server, name) -> None:
    page, problems = open_page(browser, server + name)
    try:
        assert problems == [], problems
        broken = page.evaluate(
            "() => [...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
            ".map(i => i.getAttribute('src'))"
        )
        assert broken == [], f"images that did not load: {broken}"
        text = page.evaluate(VISIBLE_TEXT)
        raw = sorted({m.group(0) for m in RAW_TEX.finditer(text)})
        assert raw == [], f"TeX left untypeset: {raw[:10]}"
        assert "{glue" not in text and "glue:text" not in text
        errors = page.evaluate(
            "() => document.querySelectorAll('[data-mml-node=\"merror\"], mjx-merror').length"
        )
        assert errors == 0, "MathJax reported a formula it could not typeset"
        empty = page.evaluate(
            "() => [...document.querySelectorAll('table')].filter("
            "t => !t.querySelector('tbody tr td, tbody tr th')).length"
        )
        assert empty == 0, "an empty table"
        everything = page.inner_text("body")
        assert [p for p in LOCAL_PATHS if p in everything] == [], "a local path on the page"
    finally:
        page.close()


@pytest.mark.parametrize("name", PAGES)
def test_nothing_is_wider_than_the_text_column_at_1280_px(browser, server, name) -> None:
    page, _ = open_page(browser, server + name, viewport=DESKTOP)
    try:
        too_wide = page.evaluate(TOO_WIDE)
    finally:
        page.close()
    assert too_wide == [], f"{name} scrolls sideways at 1280 px:\n" + "\n".join(too_wide)


#: A reader's first screen: a laptop's window at the narrowest common desktop width.
FIRST_SCREEN = {"width": 1280, "height": 800}
#: The code cells a reader sees unfolded on the first screen whose code imports: the
#: first line of each. A folded cell (hide-input) draws no box until it is opened.
IMPORTS_ON_FIRST_SCREEN = """() => [...document.querySelectorAll('.cell_input')]
  .filter(c => c.getClientRects().length > 0)
  .filter(c => c.getBoundingClientRect().top < window.innerHeight)
  .filter(c => /^\\s*(import|from\\s+\\S+\\s+import)\\s/m.test(c.innerText))
  .map(c => c.innerText.trim().split('\\n')[0])"""


@pytest.mark.parametrize("name", PAGES)
def test_the_first_screen_shows_no_import_cell(browser, server, name) -> None:
    """A page opens on its purpose, not on its imports: no unfolded code cell that
    imports starts within the first 1280 × 800 screen."""
    page, _ = open_page(browser, server + name, viewport=FIRST_SCREEN)
    try:
        found = page.evaluate(IMPORTS_ON_FIRST_SCREEN)
    finally:
        page.close()
    assert found == [], f"{name} shows import cells on its first screen: {found}"


@pytest.mark.parametrize("name", PAGES)
def test_every_internal_link_resolves(browser, server, name) -> None:
    page = browser.new_page()
    try:
        page.goto(server + name, wait_until="domcontentloaded")
        hrefs = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
    finally:
        page.close()
    missing = []
    for href in set(hrefs):
        target = urlparse(href)
        if not href.startswith(server):
            continue
        path = HTML / unquote(target.path).lstrip("/")
        if path.is_dir():
            path /= "index.html"
        if not path.is_file():
            missing.append(href)
        elif target.fragment and path.suffix == ".html":
            if unquote(target.fragment) not in element_ids(path):
                missing.append(href)
    assert missing == [], f"{name} links to what is not there: {sorted(missing)[:10]}"


@functools.cache
def element_ids(path: Path) -> frozenset[str]:
    """The ``id`` attributes of a built page, read once (the API page and the index
    link thousands of times into the API page, which was read again for each)."""
    return frozenset(re.findall(r'id="([^"]*)"', path.read_text()))


def test_redirect_pages_point_at_a_page_of_the_book() -> None:
    redirects = {n: REDIRECT.search((HTML / n).read_text()) for n in ALL_PAGES}
    targets = {n: m.group(1) for n, m in redirects.items() if m}
    assert "index.html" in targets
    for name, target in targets.items():
        assert (HTML / name).parent.joinpath(target).is_file(), (name, target)


def test_math_is_served_by_the_book_itself() -> None:
    mathjax = HTML / "_static" / "mathjax" / "tex-svg.js"
    assert mathjax.is_file(), "the build did not copy MathJax into _static"
    page = (HTML / "book" / "_executed" / "01_tight_radius.html").read_text()
    assert "_static/mathjax/tex-svg.js" in page
    assert "cdn.jsdelivr.net/npm/mathjax@3" not in page  # the CDN only in the fallback


# The findings page: a row for every judged claim, nothing cut.
FINDINGS = "book/_executed/00_findings.html"
ENTRIES = re.compile(r"of ([\d,]+) entries")


def test_the_findings_page_comes_right_after_the_introduction() -> None:
    intro = (HTML / "book" / "intro.html").read_text()
    assert "00_findings.html" in intro
    assert (
        re.search(
            r'rel="next"[^>]*href="[^"]*00_findings.html"|href="[^"]*00_findings.html"[^>]*rel="next"',
            intro,
        )
        or "next" in intro
    )


def test_every_qualitative_claim_has_a_row(browser, server) -> None:
    from rsutils.book.papers.published import qualitative_claims

    page, problems = open_page(browser, server + FINDINGS)
    try:
        rows = page.evaluate(
            "() => [...document.querySelectorAll('table tbody tr')].map(r => r.innerText)"
        )
    finally:
        page.close()
    assert problems == []
    for quote in qualitative_claims().quote:
        plain = re.sub(r"\$[^$]*\$", "", quote).split()[:4]
        assert any(" ".join(plain) in " ".join(row.split()) for row in rows), quote


def test_every_judged_statement_of_the_ledger_is_a_row(browser, server, reference: Path) -> None:
    from rsutils.book.audit import ledger as lg

    statements = lg.ledger()
    checked = lg.check_ledger(statements, lg.LedgerContext(statements, reference_root=reference))
    judged = int((checked.verdict != "not checkable").sum())
    page, _ = open_page(browser, server + FINDINGS)
    try:
        page.wait_for_selector(".dt-info", timeout=20_000)
        info = page.inner_text(".dt-info")
        page.fill(".dt-search input", "does not hold")
        filtered = page.inner_text(".dt-info")
    finally:
        page.close()
    assert ENTRIES.search(info) and int(ENTRIES.search(info)[1].replace(",", "")) == judged, info
    failing = int((checked.verdict == "does not hold").sum())
    assert f"of {failing} entries" in filtered or f"{failing} entries" in filtered, filtered


@pytest.mark.parametrize("name", PAGES)
def test_no_listing_is_cut_by_a_display_limit(name: str) -> None:
    """pandas cuts a long table to its first and last rows and adds "N rows × M
    columns" under it; a reader would never see the rows in between."""
    text = (HTML / name).read_text()
    assert not re.search(r"<p>\d[\d,]* rows × \d+ columns</p>", text), (
        f"{name} shows a table cut by pandas' display limit: show it whole "
        "(pd.set_option('display.max_rows', None)) or as an interactive table"
    )
