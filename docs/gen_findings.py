"""docs/findings.md: the index tables of finding codes, made from the registry, so a new code
needs only its entry in ``_codes.py`` and its page in ``docs/findings/``."""

from __future__ import annotations

from gradprobe.findings import CODES

# marker name -> the hundreds digit of the codes it lists (GP1xx, GP2xx, ...)
SECTIONS = {
    "codes-blame": "1",
    "codes-numerics": "2",
    "codes-hooks": "3",
    "codes-saliency": "40",
    "codes-distributed": "41",
    "codes-compile": "5",
}


def table(series: str) -> str:
    rows = ["| code | kind | what |", "|---|---|---|"]
    for code, entry in CODES.items():
        if code.startswith(f"GP{series}"):
            rows.append(
                f"| [{code}](findings/{entry.doc_anchor}.md) | `{entry.kind}` | {entry.title} |"
            )
    return "\n".join(rows) + "\n"


def blocks() -> dict[str, str]:
    return {name: table(series) for name, series in SECTIONS.items()}
