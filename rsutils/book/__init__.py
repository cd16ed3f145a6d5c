"""What only the book needs: run profiles, cached experiments, the chapter helper,
figures, what the manual pages run, and the papers' published numbers and released
logs.

A chapter imports its helpers from here (``from rsutils.book import Chapter, glue_all``).
Nothing outside this package imports it; library users never need it. It needs the
``book`` extra (matplotlib and seaborn, which the library itself does without):
importing it without them raises an :class:`ImportError` that says
``pip install 'rsutils[book]'``.
"""

try:
    import matplotlib  # noqa: F401
    import seaborn  # noqa: F401
except ImportError as missing:
    raise ImportError(
        f"rsutils.book (the book's helpers) needs {missing.name or 'matplotlib and seaborn'}, "
        "which the library does without: install the book's extra, "
        "pip install 'rsutils[book]'"
    ) from missing

from rsutils.book.chapter import Chapter, run_at_table
from rsutils.book.choice import run_chose
from rsutils.book.experiments import Experiments
from rsutils.book.glue import glue_all, glue_fields, glue_table
from rsutils.book.manual import kill_part_way, run_command, show_refusals
from rsutils.book.plots import plot_curves, setup_style
from rsutils.book.profiles import BOOK_SIGMAS, PROFILES, Profile, get_profile
from rsutils.book.trained import trained_model, training_sigmas

__all__ = [
    "BOOK_SIGMAS",
    "PROFILES",
    "Chapter",
    "Experiments",
    "Profile",
    "get_profile",
    "glue_all",
    "glue_fields",
    "glue_table",
    "kill_part_way",
    "plot_curves",
    "run_at_table",
    "run_chose",
    "run_command",
    "setup_style",
    "show_refusals",
    "trained_model",
    "training_sigmas",
]
