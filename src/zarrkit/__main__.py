"""``python -m zarrkit``: the ``zarrkit`` command line (see :mod:`zarrkit.cli`)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
