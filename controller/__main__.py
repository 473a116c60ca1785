"""``python -m controller`` runs the ``mrc-controller`` CLI."""
import sys

from .cli import main

sys.exit(main())
