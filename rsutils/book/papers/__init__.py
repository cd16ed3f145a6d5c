"""The papers as data: their published numbers with provenance
(:mod:`~rsutils.book.papers.published`) and their released raw results
(:mod:`~rsutils.book.papers.released`), read by the audit and the chapters."""
