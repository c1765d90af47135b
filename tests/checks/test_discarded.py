"""GP141: an out-of-place op whose result a statement throws away."""

from __future__ import annotations

from pathlib import Path

from _run import diagnose, line_of, roles


def test_a_discarded_clamp_and_masked_fill_are_named(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        lin = nn.Linear(4, 4)
        scores = lin(torch.randn(2, 4))
        scores.masked_fill(scores > 0, float("-inf"))  # thrown away
        scores.softmax(-1).sum().backward()
        for p in lin.parameters():
            p.grad.clamp(-1, 1)  # also thrown away
        """,
    )
    assert [(f.code, f.details["op"], roles(f)) for f in found] == [
        ("GP141", "masked_fill", [("cause", line_of(text, "# thrown away"))]),
        ("GP141", "clamp", [("cause", line_of(text, "also thrown away"))]),
    ]


def test_assigned_chained_and_in_place_calls_are_silent(tmp_path: Path) -> None:
    found, _ = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        lin = nn.Linear(4, 4)
        scores = lin(torch.randn(2, 4))
        scores = scores.masked_fill(scores > 0, float("-inf"))
        print(scores.clamp(-1, 1).shape)
        scores.softmax(-1).sum().backward()
        for p in lin.parameters():
            p.grad.clamp_(-1, 1)
        h = lin.weight.register_hook(lambda g: g)
        h.remove()
        torch.randn(3)  # advancing the random generator on purpose
        """,
    )
    assert found == []
