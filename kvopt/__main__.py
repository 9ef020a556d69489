"""``python -m kvopt`` runs the CLI."""

import sys

from kvopt.cli.main import main

sys.exit(main())
