"""``python -m softswitch`` runs the same command line as the ``softswitch`` script."""
import sys

from softswitch.cli import main

sys.exit(main())
