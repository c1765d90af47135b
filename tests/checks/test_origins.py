"""Findings that name where the offending value came from, not only where it failed: a
criterion built with reduction='none' behind a non-scalar backward (GP105), a tensor made
from scratch inside an inference_mode block (GP114), an in-place detach_() that cut a
tensor other losses still use (GP107)."""

from __future__ import annotations

from pathlib import Path

from _run import diagnose, line_of, roles


def test_a_non_scalar_loss_names_the_criterion_built_without_reduction(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Linear(4, 1)
        criterion = nn.SmoothL1Loss(reduction="none")  # chosen here
        other = nn.MSELoss()
        loss = criterion(model(torch.randn(8, 4)), torch.randn(8, 1))  # made here
        loss.backward()
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP105"]
    causes = [line for role, line in roles(finding) if role == "cause"]
    assert causes == [line_of(text, "made here"), line_of(text, "chosen here")]
    assert "SmoothL1Loss built at line" in finding.message


def test_a_non_scalar_backward_without_a_loss_module_names_only_its_line(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        criterion = nn.L1Loss(reduction="none")  # built, but not what failed
        w = torch.randn(3, requires_grad=True)
        out = w * 2  # not a loss
        out.backward()
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP105"]
    assert [line for role, line in roles(finding) if role == "cause"] == [
        line_of(text, "not a loss")
    ]


def test_an_inference_tensor_made_from_scratch_names_its_block(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        layer = nn.Linear(4, 4)
        with torch.inference_mode():  # the block
            table = torch.linspace(0, 1, 4).repeat(2, 1)  # made here
        loss = (layer(torch.ones(2, 4)) * table).sum()  # refused here
        loss.backward()
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP114"]
    assert roles(finding) == [
        ("cause", line_of(text, "the block")),
        ("created", line_of(text, "made here")),
        ("error", line_of(text, "refused here")),
    ]


def test_a_table_made_under_no_grad_instead_trains_silently(tmp_path: Path) -> None:
    found, _ = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        layer = nn.Linear(4, 4)
        with torch.no_grad():
            table = torch.linspace(0, 1, 4).repeat(2, 1)
        with torch.inference_mode():
            evaluation = layer(torch.ones(2, 4)).sum()  # used only for a metric
        loss = (layer(torch.ones(2, 4)) * table).sum()
        loss.backward()
        print(float(evaluation))
        """,
    )
    assert found == []


def test_an_in_place_detach_names_the_line_that_cut_the_other_loss(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        encoder, main, aux = nn.Linear(8, 4), nn.Linear(4, 1), nn.Linear(4, 1)
        params = [*encoder.parameters(), *main.parameters(), *aux.parameters()]
        opt = torch.optim.SGD(params, lr=0.1)
        for _ in range(2):
            feat = encoder(torch.randn(16, 8))
            side = aux(feat.detach_()).pow(2).mean()  # cut in place
            loss = main(feat).pow(2).mean() + side
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    (finding,) = [f for f in found if f.code == "GP107"]
    assert [line for role, line in roles(finding) if role == "cause"] == [
        line_of(text, "cut in place")
    ]
    assert "detach_() detaches the tensor itself" in finding.message


def test_an_out_of_place_detach_for_the_side_branch_is_silent(tmp_path: Path) -> None:
    found, _ = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        encoder, main, aux = nn.Linear(8, 4), nn.Linear(4, 1), nn.Linear(4, 1)
        params = [*encoder.parameters(), *main.parameters(), *aux.parameters()]
        opt = torch.optim.SGD(params, lr=0.1)
        for _ in range(2):
            feat = encoder(torch.randn(16, 8))
            side = aux(feat.detach()).pow(2).mean()
            loss = main(feat).pow(2).mean() + side
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert found == []
