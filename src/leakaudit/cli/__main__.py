"""``python -m leakaudit.cli``: the same as the ``leakaudit`` console script."""

import sys

from leakaudit.cli import main

sys.exit(main())
