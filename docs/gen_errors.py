"""docs/errors.md: the table of torch's autograd errors and what gradprobe names for each,
made from the error catalogue (``gradprobe.checks._catalogue``), the same entries the
catalogue's tests run; and the inventory of every message torch 2.13 can raise about
autograd (``gradprobe.checks._torch_messages``), with the entry that explains each or the
reason it has none."""

from __future__ import annotations

from collections import Counter

from gradprobe.checks._catalogue import CATALOGUE, FAMILIES
from gradprobe.checks._torch_messages import MESSAGES, REASONS
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
            (
                "| torch says | code | what it means, and the fix | gradprobe names as the "
                "cause | other lines | trigger script |"
            ),
            "|---|---|---|---|---|---|",
        ]
        for entry in entries:
            code = CODES[entry.code]
            others = ", ".join(f"`{role}`" for role in entry.roles if role != "cause") or "-"
            words = f"{entry.meaning} **Fix:** {entry.fix}" if entry.meaning else code.title
            said = "(warning) " if entry.kind == "warning" else ""
            rows.append(
                f"| {said}{_span(entry.message)} | [{entry.code}](findings/{code.doc_anchor}.md) "
                f"| {_cell(words)} | {_cell(entry.names)} | {others} | `{entry.key}.py` |"
            )
    return "\n".join(rows).lstrip("\n") + "\n"


def inventory() -> str:
    covered = [m for m in MESSAGES if m.entry]
    reasons = Counter(m.reason.split(":")[0] for m in MESSAGES if not m.entry)
    errors = sum(m.kind == "error" for m in MESSAGES)
    lines = [
        (
            f"torch 2.13's sources hold **{len(MESSAGES)}** messages about autograd and the "
            f"training machinery around it ({errors} errors, {len(MESSAGES) - errors} "
            f"warnings); **{len(covered)}** have a catalogue entry. The others, by reason:"
        ),
        "",
        "| reason | messages | meaning |",
        "|---|---|---|",
        *(f"| `{key}` | {reasons.get(key, 0)} | {REASONS[key]} |" for key in REASONS),
        "",
        "<details><summary>Every message without an entry, with its reason</summary>",
        "",
        "| source | kind | torch says | reason |",
        "|---|---|---|---|",
    ]
    for message in MESSAGES:
        if message.entry:
            continue
        lines.append(
            f"| `{message.source}` | {message.kind} | {_span(message.text)} "
            f"| {_cell(message.reason)} |"
        )
    lines += ["", "</details>", ""]
    return "\n".join(lines)


def blocks() -> dict[str, str]:
    return {"error-catalogue": table(), "error-inventory": inventory()}


def _span(text: str) -> str:
    """``text`` as an inline code span, fenced with two backticks when it holds one."""
    cell = _cell(text)
    return f"`` {cell} ``" if "`" in cell else f"`{cell}`"
