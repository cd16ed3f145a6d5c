"""The ledger: every number-bearing statement of the three papers, with its check.

:mod:`~rsutils.book.audit.ledger.sentences` finds the sentences that state a number,
:mod:`~rsutils.book.audit.ledger.data` reads the per-paper rows that quote them and tells
which sentences no row covers, and :mod:`~rsutils.book.audit.ledger.rules` checks each row
by its named rule. A paper-specific rule lives in a module of this package that
registers it with :func:`~rsutils.book.audit.ledger.rules.ledger_rule`; importing the
package registers them all.
"""

from rsutils.book.audit.ledger import ucan  # noqa: F401  (registers UCAN's rules)
from rsutils.book.audit.ledger.data import (
    COLUMNS,
    LEDGER_PAPERS,
    LEDGER_SEEDS,
    coverage_gaps,
    ledger,
    misquoted,
)
from rsutils.book.audit.ledger.rules import (
    VERDICTS,
    LedgerContext,
    check_ledger,
    ledger_rule,
    ledger_rules,
    printed_interval,
)
from rsutils.book.audit.ledger.sentences import number_bearing_sentences, number_tokens

__all__ = [
    "COLUMNS",
    "LEDGER_PAPERS",
    "LEDGER_SEEDS",
    "VERDICTS",
    "LedgerContext",
    "check_ledger",
    "coverage_gaps",
    "ledger",
    "ledger_rule",
    "ledger_rules",
    "misquoted",
    "number_bearing_sentences",
    "number_tokens",
    "printed_interval",
]

# The papers' own rules register themselves on import.
from rsutils.book.audit.ledger import cohen, ddrs  # noqa: F401
