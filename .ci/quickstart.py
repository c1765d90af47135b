"""Print the commands of the README's Quickstart block, one per line.

CI runs exactly these, so a README that stops working on a fresh machine fails here
first. The Quickstart is the first ```bash or ```sh block after the "## Quickstart"
heading; comment lines and blank lines are skipped.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def commands(readme: str) -> list[str]:
    section = readme.split("## Quickstart", 1)
    if len(section) != 2:
        raise SystemExit("README.md has no '## Quickstart' section")
    block = re.search(r"```(?:bash|sh)\n(.*?)```", section[1], re.DOTALL)
    if block is None:
        raise SystemExit("the Quickstart section has no ```bash block")
    lines = [line.strip() for line in block.group(1).splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


if __name__ == "__main__":
    found = commands(Path(sys.argv[1] if len(sys.argv) > 1 else "README.md").read_text())
    if len(found) != 2:
        raise SystemExit(f"the Quickstart must hold exactly two commands, found {len(found)}")
    print("\n".join(found))
