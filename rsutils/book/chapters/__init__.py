"""Helpers that serve one chapter each: chapter 04's Table I
(:mod:`~rsutils.book.chapters.table_one`), chapter 06's recipe sensitivity
(:mod:`~rsutils.book.chapters.npg_recipe`) and chapter 08's comparisons of the
fewer-draws procedures (:mod:`~rsutils.book.chapters.fewer_draws`)."""
