"""GP108 for writes torch makes without moving a version counter: a training-mode batch
norm updating the running statistics an evaluation-mode call saved (pytorch#13402)."""

from __future__ import annotations

from pathlib import Path

from _run import diagnose, line_of


def test_train_mode_batch_norm_after_an_eval_mode_forward_is_named(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU())
        x = torch.randn(2, 3, 8, 8)
        net.eval()
        reference = net(x)  # saves the running statistics
        net.train()
        net(torch.randn(2, 3, 8, 8))  # updates them in place
        reference.mean().backward()
        """,
    )
    (finding,) = [f for f in found if f.code == "GP108"]
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "updates them in place")),
        ("saved", line_of(text, "saves the running statistics")),
    ]
    assert "training mode" in finding.message


def test_ordinary_training_with_batch_norm_is_silent(tmp_path: Path) -> None:
    # Two training-mode forwards before one backward (real and fake batches through a
    # discriminator), then validation in eval mode under no_grad: nothing is stale.
    found, _ = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        disc = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 1))
        opt = torch.optim.SGD(disc.parameters(), lr=0.1)
        for step in range(3):
            real, fake = torch.randn(4, 6), torch.randn(4, 6)
            loss = disc(real).mean() - disc(fake).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            disc.eval()
            with torch.no_grad():
                disc(torch.randn(4, 6))
            disc.train()
        """,
    )
    assert [f.code for f in found] == []
