"""``python -m workers.engine``: see :mod:`workers.engine.cli`."""
from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
