"""``python -m gradprobe``: the same as the ``gradprobe`` command."""

import sys

from gradprobe.cli import main

sys.exit(main())
