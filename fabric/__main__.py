"""``python -m mrc_fabric`` runs the ``mrc-fabric`` CLI."""
import sys

from .cli import main

sys.exit(main())
