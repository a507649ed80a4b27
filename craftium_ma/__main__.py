"""python -m craftium_ma: the craftium-ma command (craftium_ma/cli.py)."""

import sys

from .cli import main

sys.exit(main())
