"""Preflight: will ``backward()`` through this graph fail? Ask before it raises.

:func:`check` traces the graph, then asks each saved tensor the question backward would
ask: PyTorch checks a saved tensor's version when it is unpacked, and the error text is the
only public source of the version at save time ("... is at version 1; expected version 0
instead"). No recorder is needed and nothing is computed: no backward runs.

Example:
    >>> import torch, gradprobe
    >>> from gradprobe._check import check
    >>> a = torch.ones(5, requires_grad=True)
    >>> b = a + 2
    >>> loss = (b * b).mean()
    >>> b[0] = 1000.0
    >>> report = check(loss)
    >>> report.ok
    False
    >>> [(f.code, f.node, f.details["slots"]) for f in report.findings]
    [('GP101', 'MulBackward0', ['other', 'self'])]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import torch

from gradprobe import _active
from gradprobe._trace import flatten, name_table, trace
from gradprobe.checks._versions import VersionError, graph_findings, parse_version_error
from gradprobe.checks.saved_tensors import join_lines
from gradprobe.findings import BackwardWouldFail, Finding
from gradprobe.graph import Graph

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult

__all__ = ["CheckReport", "VersionError", "check", "parse_version_error"]


@dataclass(frozen=True)
class CheckReport:
    """What :func:`check` found. ``ok`` is True when backward() should not fail.

    ``str(report)`` is the plain-text report (each finding's code, title, message,
    locations and fix). A report is always true, whatever it found: ask ``report.ok``.
    """

    findings: tuple[Finding, ...]
    graph: Graph

    @property
    def ok(self) -> bool:
        """No finding: as far as gradprobe can tell, backward() will run."""
        return not self.findings

    def raise_if_failed(self) -> None:
        """Raise :class:`~gradprobe.findings.BackwardWouldFail` listing the findings, if any."""
        if self.findings:
            raise BackwardWouldFail(str(self), self.findings)

    def to_dict(self) -> dict[str, Any]:
        """``{"ok": bool, "findings": [finding.to_dict(), ...]}``."""
        return {"ok": self.ok, "findings": [finding.to_dict() for finding in self.findings]}

    def _header(self) -> str:
        if self.ok:
            return f"gradprobe.check: ok, backward() should run ({len(self.graph)} nodes checked)"
        count = len(self.findings)
        return (
            f"gradprobe.check: backward() would fail ({count} finding{'' if count == 1 else 's'})"
        )

    def __str__(self) -> str:
        if self.ok:
            return self._header()
        from gradprobe.render.findings import findings_text

        return findings_text(self.findings, header=self._header())

    def _repr_html_(self) -> str:
        """The report as HTML, for notebooks: the same rows as ``str()``."""
        from gradprobe.render.findings import findings_view
        from gradprobe.render.html_report import to_html

        if self.ok:
            return to_html("", header=self._header())
        return to_html(findings_view(self.findings), header=self._header())

    def __repr__(self) -> str:
        if self.ok:
            return f"<CheckReport ok, {len(self.graph)} nodes>"
        codes = ", ".join(f"{finding.code} {finding.node}" for finding in self.findings[:3])
        more = ", ..." if len(self.findings) > 3 else ""
        return f"<CheckReport {len(self.findings)} findings: {codes}{more}>"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from gradprobe.render.findings import findings_view

        yield findings_view(self.findings, ok_text=str(self))


def check(
    *tensors: torch.Tensor | Sequence[torch.Tensor],
    model: torch.nn.Module | None = None,
    names: Mapping[str, torch.Tensor] | None = None,
    lines: bool = True,
) -> CheckReport:
    """Find what would make ``backward()`` from ``tensors`` fail, without running it.

    Reports saved tensors that were modified in place after they were saved (GP101, or
    GP109 for a parameter, e.g. updated by ``optimizer.step()``), graphs already freed by
    an earlier backward (GP103), and roots that do not require grad (GP104).

    Args:
        tensors: what you would call backward on (usually the loss); lists are flattened.
        model: names parameters (GP109 says which one) and buffers.
        names: more names, ``{"x": x}``.
        lines: inside ``gradprobe.record()``, add the recorded source lines (the write
            that made a saved tensor stale is the ``cause``, where it was saved ``saved``).

    Raises:
        GradprobeTypeError, GradprobeValueError: as :func:`gradprobe.trace`.
    """
    graph = trace(*tensors, model=model, names=names)
    roots: list[torch.Tensor] = flatten(tensors)
    findings = graph_findings(graph, roots, name_table(model, names))
    if lines:
        recording = _active.current()
        if recording is not None:
            findings = join_lines(recording._events, findings, graph)
    return CheckReport(findings=tuple(findings), graph=graph)
