"""GP103 for a value a module caches across calls: the line that caches it is the cause;
and GP113 for gradients taken without create_graph, also under retain_graph=True."""

from __future__ import annotations

from pathlib import Path

from _run import diagnose, line_of, roles


def test_a_tensor_cached_on_a_module_names_the_cache_line(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        class Positions(nn.Module):
            def __init__(self):
                super().__init__()
                self.scale = nn.Parameter(torch.ones(4))
                self.cache = {}

            def forward(self, n):
                if n in self.cache:
                    return self.cache[n]
                table = torch.arange(n)[:, None] * self.scale  # made once
                self.cache[n] = table  # kept for later calls
                return table

        pos, lin = Positions(), nn.Linear(4, 1)
        for step in range(2):
            lin(pos(3)).sum().backward()
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP103"]
    assert roles(finding)[:2] == [
        ("cause", line_of(text, "kept for later calls")),
        ("created", line_of(text, "made once")),
    ]


def test_a_cache_read_back_through_a_slice_names_the_cache_line(tmp_path: Path) -> None:
    """Later calls read the cache through a slice (another line than the first use): the
    line that keeps it is still the one to change."""
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        class Rotary(nn.Module):
            def __init__(self):
                super().__init__()
                self.freq = nn.Parameter(torch.ones(4))
                self.cached = None

            def forward(self, n):
                if self.cached is not None and self.cached.shape[0] >= n:
                    return self.cached[:n]
                table = torch.arange(n)[:, None] * self.freq  # made once
                self.cached = table  # kept for later calls
                return table

        rot, lin = Rotary(), nn.Linear(4, 1)
        for step in range(2):
            lin(rot(3).cos()).sum().backward()
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP103"]
    assert roles(finding)[:2] == [
        ("cause", line_of(text, "kept for later calls")),
        ("created", line_of(text, "made once")),
    ]


def test_penalty_from_gradients_without_create_graph_under_retain_graph(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Linear(3, 1)
        params = list(model.parameters())
        losses = [model(torch.randn(4, 3)).pow(2).mean() for _ in range(2)]
        grads = [torch.autograd.grad(l, params, retain_graph=True)[0] for l in losses]  # here
        penalty = (grads[0] - grads[1]).pow(2).sum()
        (sum(losses) + penalty).backward()
        """,
    )
    (finding,) = [f for f in found if f.code == "GP113"]
    assert [r for r in roles(finding) if r[0] == "cause"] == [("cause", line_of(text, "# here"))]
