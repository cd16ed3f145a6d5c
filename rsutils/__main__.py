"""``python -m rsutils`` runs the command line (see :mod:`rsutils.cli`)."""

import sys

from rsutils.cli import main

sys.exit(main())
