"""The audit of the papers (chapter 07 and the chapters that judge a claim): the ledger of
every number-bearing statement and the rule that checks it
(:mod:`~rsutils.book.audit.ledger`), the rules a printed table must satisfy
(:mod:`~rsutils.book.audit.table_audit`, :mod:`~rsutils.book.audit.table_bounds`), the
book's measured rows beside the papers' (:mod:`~rsutils.book.audit.measured`,
:mod:`~rsutils.book.audit.one_model`, :mod:`~rsutils.book.audit.cross_paper`), the
comparisons decided by construction that a verdict must not rest on
(:mod:`~rsutils.book.audit.decided`), what a claim's comparisons could detect
(:mod:`~rsutils.book.audit.claim_power`) and the sizes the papers state for them
(:mod:`~rsutils.book.audit.claim_sizes`), Cohen et al.'s claims on their released logs
(:mod:`~rsutils.book.audit.released_claims`) and the
level Cohen et al.'s released logs imply (:mod:`~rsutils.book.audit.released_alpha`), with
the vocabularies of their verdicts as values (:mod:`~rsutils.book.audit.verdicts`)."""
