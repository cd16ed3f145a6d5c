# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     notebook_metadata_filter: -jupytext.text_representation.jupytext_version,-jupytext.text_representation.format_version
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# (book-findings)=
# # What the book found
#
# What the chapters found: the papers' claims judged on the book's own runs, the
# papers' numbers checked exactly against their tables, released logs and other
# numbers, and what the book found beyond the claims. Every value is read from the
# executed page that computed it ({mod}`rsutils.book.findings`; the run is at the
# end of the page), and each row links to where it was reached.

# %% tags=["hide-input"] mystnb={"code_prompt_show": "Show the imports"}
import pandas as pd

from rsutils.book import Chapter, glue_all
from rsutils.book.audit import ledger as lg
from rsutils.book.audit.claim_sizes import stated_sizes
from rsutils.book.audit.verdicts import ClaimVerdict, LedgerVerdict
from rsutils.book.findings import (
    FINDING_PAGES,
    beyond_findings,
    chapter_values,
    claim_evidence,
    claim_verdicts,
    claims_table,
    executed_folder,
    finding_rows,
    markdown_table,
    power_table,
)
from rsutils.book.interactive import interactive_table
from rsutils.book.papers.published import qualitative_claims

# %% tags=["parameters", "hide-input"] mystnb={"code_prompt_show": "Show the run's settings (profile, progress bars, data folder, seed)"}
profile = "cpu"  # smoke | cpu | paper
progress = True  # progress bars (papermill runs pass False)
# folder holding cohen2019/ (default: $RSUTILS_REFERENCE)
reference_root = None
seed = 0

# %% [markdown]
# ## The papers' claims, at our scale
#
# Each qualitative claim the book's own runs can test, with its verdict:

# %% tags=["hide-input"]
chapter = Chapter.open(profile, seed=seed, progress=progress)
folder = executed_folder()
found = {
    name: chapter_values(folder, page, profile)
    for name, page in FINDING_PAGES.items()
}
audit, claims = found["audit"], qualitative_claims()
markdown_table(claims_table(audit, claims))

# %% [markdown]
# Each claim is quoted with its paper and where the paper states it (a section, or
# the part of the paper), with the verdict of
# {ref}`the book's verdict rule <chapter-tight-radius-verdict-rule>` on replicate
# models (each trained anew from its own seed) and on the first model alone, the
# scale it was judged at, and the section that judges it. Our scale is far below
# the papers' (Fashion-MNIST, a small CNN, short training): a claim that does not
# hold here does not hold at every scale, which is not a refutation at theirs.
# Cohen et al.'s two claims are also judged at the paper's scale, by the same rule
# on the CERTIFY logs the authors released for the paper's own models (one model
# per $\sigma$, so over the images only): the column "the paper's models say".

# %% [markdown]
# What each design could detect: the effect each claim was tested for (its margins),
# and the power of its comparisons against it, the median over the claim's
# comparisons (for an even count the lower of the two middle ones) with the images
# that comparison would need for 80% at the same number of models
# ({func}`~rsutils.book.audit.claim_power.claim_power`):

# %% tags=["hide-input"]
markdown_table(power_table(audit, claims))

# %% [markdown]
# What each verdict rests on (folded: open it to read every comparison): the number
# of comparisons (one family; Holm's correction where one comparison suffices for the
# verdict) and the comparisons themselves (method minus control, by measure) with
# their mean difference, 95% interval over images and retraining and per-model
# differences, or their count by verdict where a claim makes many:

# %% tags=["hide-input", "hide-output"]
markdown_table(claim_evidence(audit, claims))

# %% [markdown]
# The verdicts test a direction and a difference of the margin's size. Some claims
# come with a size of their own, quoted in the ledger; a stated size can be tested
# only on the models and data it was stated for, as a method's gain depends on the
# dataset, the architecture and the training as much as on the method
# ({func}`~rsutils.book.audit.claim_sizes.stated_sizes`). Of the
# {glue:text}`n_sizes` sizes stated for the judged claims,
# {glue:text}`n_sizes_testable` can be tested on the book's runs:

# %% tags=["hide-input"]
sizes = stated_sizes()
markdown_table(sizes[["claim", "quote", "dataset", "testable here"]])

# %% tags=["remove-cell"]
counted = claim_verdicts(audit, claims).value_counts()
glue_all(
    n_claims=len(claims),
    n_claims_hold=int(counted.get(ClaimVerdict.HOLDS, 0)),
    n_claims_fail=int(counted.get(ClaimVerdict.DOES_NOT_HOLD, 0)),
    n_claims_open=int(counted.get(ClaimVerdict.NOT_RESOLVED, 0)),
    n_claims_untestable=int(counted.get(ClaimVerdict.NOT_TESTABLE, 0)),
    n_margin_sensitive=audit["n_margin_sensitive"],
    n_sizes=len(sizes),
    n_sizes_testable=int((sizes["testable here"] == "yes").sum()),
)

# %% [markdown]
# The replicate models' verdicts over the {glue:text}`n_claims` claims: "holds" for
# {glue:text}`n_claims_hold`, "does not hold" (the data exclude the claimed effect)
# for {glue:text}`n_claims_fail`, "not resolved at this scale" for
# {glue:text}`n_claims_open`, where our models and images cannot tell the effect from
# none, and "not testable here" for {glue:text}`n_claims_untestable`, where a
# comparison the claim needs is decided by construction (a certificate's ceiling, a
# σ with no shape; the reason leads its evidence). The claimed effect is a
# difference of at least the margin of its measure, the smallest difference the
# papers themselves present as a result ({data}`~rsutils.book.margins.MARGINS`).
# {glue:text}`n_margin_sensitive` of the verdicts change when the margins are
# halved or doubled ({ref}`chapter-sota-tables` shows which).
#
# ## The papers' numbers, checked exactly
#
# Every sentence of the three papers that states a number is in a ledger, quoted
# verbatim with what it compares and the rule that checks it
# ({mod}`rsutils.book.audit.ledger`; {ref}`chapter-sota-tables` explains the rules). A rule
# recomputes the number from the printed tables, the released logs or the paper's
# other numbers, at the precision it is printed with; no model and no random draw
# enters, so these verdicts are the same at every profile. The rows a rule could
# judge, by paper and verdict (the rows nothing public can check are counted in
# {ref}`chapter-sota-tables`, with their reasons):

# %%
statements = lg.ledger()
context = lg.LedgerContext(statements, reference_root=reference_root)
checked = lg.check_ledger(statements, context)
judged = checked[checked.verdict != LedgerVerdict.NOT_CHECKABLE]
pd.crosstab(judged.paper, judged.verdict, margins=True, margins_name="all")

# %% [markdown]
# The rows that do not hold, or that cite a cell the table leaves empty, paper by
# paper (each id starts with the paper's: cohen, ddrs, ucan), each with what the rule
# found instead. Where a paper repeats a statement
# (Cohen et al.'s summary states $\alpha$ and the number of ImageNet images several
# times), each place has its row, so the count of rows is larger than the count of
# distinct findings; {ref}`chapter-sota-tables` groups them by cause:

# %% tags=["hide-input"]
columns = ["id", "quote", "found", "verdict"]
markdown_table(judged[judged.verdict != LedgerVerdict.HOLDS][columns])

# %% [markdown]
# Every judged row, the ones that hold too, in a table that sorts by any column and
# filters as you type (e.g. "ucan", "does not hold", or a word of a quote):

# %% tags=["hide-input"]
widths = {"id": "15%", "quote": "40%", "found": "", "verdict": "12%"}
interactive_table(judged, widths)

# %% [markdown]
# ## Beyond the papers
#
# What the book found that none of the three papers states: about the logs Cohen et
# al. released, about the classifier UCAN's certificates are for, about the draws a
# certificate needs against CERTIFY and the published designs for spending fewer,
# and about what it costs to make a certificate hold for any model in floating point.
# Each finding is one sentence ({func}`~rsutils.book.findings.beyond_findings`) filled
# with the values its page computed in this build:

# %% tags=["hide-input"]
markdown_table(finding_rows(beyond_findings(), found))

# %% [markdown]
# Reading these rows: every value above is the one its page shows in this build. At
# another profile the claims' verdicts and the measured findings change with the
# scale, while the ledger's verdicts and what the released logs imply do not. A
# verdict of "does not hold" at our scale is evidence against a claim at this scale
# only; "not resolved" is no evidence either way, and more replicate models and
# images, not another reading of the same ones, would settle it. How each verdict
# was reached, with every comparison it rests on, is on the page each row links to.

# %% [markdown]
# ## The run
#
# The chapters whose values the page reads, and the profile they ran at (a chapter
# run at another profile, or not run, is refused with the command that runs it):

# %% tags=["hide-input"]
chapter.run_at({"read from": ", ".join(FINDING_PAGES.values())})
