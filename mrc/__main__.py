"""``python -m mrc`` runs ``mrc-perf``."""

import sys

from mrc.cli import main

sys.exit(main())
