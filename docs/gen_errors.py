"""docs/errors.md: the table of torch's autograd errors and what gradprobe names for each,
made from the error catalogue (``gradprobe.checks._catalogue``), the same entries the
catalogue's tests run."""

from __future__ import annotations

from gradprobe.checks._catalogue import CATALOGUE, FAMILIES
from gradprobe.findings import CODES


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def table() -> str:
    rows: list[str] = []
    for family in FAMILIES:
        entries = [entry for entry in CATALOGUE if entry.family == family]
        if not entries:
            continue
        rows += [
            f"\n### {family}\n",
            "| torch says | code | gradprobe names as the cause | other lines | trigger script |",
            "|---|---|---|---|---|",
        ]
        for entry in entries:
            code = CODES[entry.code]
            others = ", ".join(f"`{role}`" for role in entry.roles if role != "cause") or "-"
            rows.append(
                f"| `{_cell(entry.message)}` | [{entry.code}](findings/{code.doc_anchor}.md) "
                f"| {_cell(entry.names)} | {others} | "
                f"`{entry.key}.py` |"
            )
    return "\n".join(rows).lstrip("\n") + "\n"


def blocks() -> dict[str, str]:
    return {"error-catalogue": table()}
