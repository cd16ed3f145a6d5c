"""Helpers that serve one chapter each: chapter 04's Table I
(:mod:`~rsutils.book.chapters.table_one`), chapter 06's recipe sensitivity
(:mod:`~rsutils.book.chapters.npg_recipe`) and chapter 08's comparisons of the
fewer-draws procedures (:mod:`~rsutils.book.chapters.fewer_draws`); and the settings
that a chapter with linked pages shares with them, one object per chapter
(:mod:`~rsutils.book.chapters.settings`), with which each of its pages opens
(:func:`~rsutils.book.chapters.pages.open_page`)."""
