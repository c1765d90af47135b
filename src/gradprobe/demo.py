"""The model behind ``gradprobe demo``: a classifier whose feature extractor never learns.

The bug is a real one (a ``.detach()`` left in ``forward`` after logging or feature
matching): the loss goes down, training runs, and ``features.*.grad`` stays ``None``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from torch import nn

if TYPE_CHECKING:
    from rich.console import Console

    from gradprobe.findings import Finding
    from gradprobe.graph import Graph

__all__ = ["DetachedClassifier", "build", "run"]


class DetachedClassifier(nn.Module):
    """Two feature layers and a linear head; ``forward`` detaches the features."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        features = self.features(x)
        logits: torch.Tensor = self.head(features.detach())  # the mistake: cuts the graph
        return logits


def build(seed: int = 0) -> tuple[DetachedClassifier, torch.Tensor, torch.Tensor]:
    """The model, a batch of inputs and the loss, with fixed random weights."""
    generator = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = DetachedClassifier()
    x = torch.randn(4, 8, generator=generator)
    target = torch.tensor([0, 2, 1, 0])
    loss = nn.functional.cross_entropy(model(x), target)
    return model, x, loss


def _short_paths(finding: Finding) -> Finding:
    """The finding with bare file names: the report reads the same wherever gradprobe is
    installed (docs/getting-started.md shows it)."""
    locations = tuple(replace(loc, file=Path(loc.file).name) for loc in finding.locations)
    return replace(finding, locations=locations)


def run(console: Console, svg: Path | None = None) -> Graph:
    """Trace, backward, and print the report of ``gradprobe demo``; returns the graph."""
    import gradprobe
    from gradprobe.render.findings import findings_view

    with gradprobe.record() as recording:
        model, x, loss = build()
        console.rule("gradprobe demo: a classifier whose feature layers never learn")
        console.print("forward:  logits = head(features(x).detach());  loss = cross_entropy(...)\n")
        graph = gradprobe.trace(loss, model=model, names={"x": x, "loss": loss})
        console.print(graph)
        loss.backward()  # type: ignore[no-untyped-call]
    report = gradprobe.leaf_report(graph, model, {"x": x})
    console.print()
    console.print(report)
    stuck = [row.name for row in report.missing_grad if row.kind == "parameter"]
    console.print()
    if stuck:
        console.print(
            f"[bold red]{len(stuck)} of {len(list(model.parameters()))} parameters got no "
            f"gradient:[/] {', '.join(stuck)}"
        )
        console.print(
            "They are not in the graph of the loss: something between them and the loss "
            "cut it (here the .detach() in forward). Remove it and they train."
        )
    console.print("\nWhich line did it? gradprobe.record() watched the forward and backward:")
    console.print(findings_view([_short_paths(f) for f in recording.findings]))
    if svg is not None:
        path = gradprobe.save_svg(graph, svg)
        console.print(f"\ngraph written to {path}", markup=False)
    return graph
