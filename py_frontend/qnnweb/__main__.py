"""``python -m qnnweb``: the ``qnnweb`` command (qnnweb.cli)."""

import sys

from .cli import main

sys.exit(main())
