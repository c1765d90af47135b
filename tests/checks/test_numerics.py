"""GP201: the cause is where the first non-finite value was computed from finite inputs,
not where the first NaN showed; an infinity written on purpose is not a cause."""

from __future__ import annotations

from pathlib import Path

from _run import diagnose, line_of, roles


def test_an_overflow_that_later_becomes_nan_is_the_cause(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        lin = nn.Linear(4, 4)
        x = torch.full((3, 4), 40.0)
        scores = lin(x) * 10
        e = scores.exp()  # overflows
        p = e / e.sum(-1, keepdim=True)  # inf / inf
        p.sum().backward()
        """,
    )
    (nan,) = [f for f in found if f.code == "GP201"]
    assert roles(nan) == [
        ("cause", line_of(text, "scores.exp()")),
        ("read", line_of(text, "inf / inf")),
    ]
    assert nan.node == "exp"
    assert nan.details["first_nan"] == "div"


def test_an_infinity_written_on_purpose_leaves_the_nan_as_the_cause(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        lin = nn.Linear(4, 5)
        logits = lin(torch.randn(3, 4))
        logits = logits.masked_fill(torch.tensor([0, 0, 0, 0, 1.0]).bool(), float("-inf"))
        logp = logits.log_softmax(-1)  # -inf stays -inf: not born here
        q = torch.softmax(torch.randn(3, 5), -1) * torch.tensor([1, 1, 1, 1, 0.0])
        loss = -(q * logp).sum()  # 0 * -inf
        loss.backward()
        """,
    )
    (nan,) = [f for f in found if f.code == "GP201"]
    assert roles(nan) == [
        ("cause", line_of(text, "0 * -inf")),
        ("created", line_of(text, "masked_fill")),
    ]
    assert "written on purpose" in nan.message


def test_a_nan_made_from_finite_values_names_its_own_line(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        lin = nn.Linear(4, 4)
        h = lin(torch.randn(2, 4))
        centred = h - h
        ratio = centred / centred.sum()  # 0 / 0
        ratio.sum().backward()
        """,
    )
    (nan,) = [f for f in found if f.code == "GP201"]
    assert roles(nan) == [("cause", line_of(text, "0 / 0"))]


def test_finite_runs_with_masks_have_no_numerics_finding(tmp_path: Path) -> None:
    found, _ = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        lin = nn.Linear(4, 5)
        logits = lin(torch.randn(3, 4))
        mask = torch.tensor([False, False, True, False, False])
        att = logits.masked_fill(mask, float("-inf")).softmax(-1)
        att.sum().backward()
        """,
    )
    assert [f.code for f in found if f.code in ("GP201", "GP202")] == []


def test_a_nan_born_in_no_grad_preprocessing_names_that_line(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Linear(3, 1)
        points = torch.ones(4, 3)  # a collapsed cloud: zero spread
        with torch.no_grad():
            centred = points - points.mean(0)
            scaled = centred / centred.norm(dim=1).max()  # 0 / 0
        model(scaled).sum().backward()
        """,
    )
    (nan,) = [f for f in found if f.code == "GP201"]
    assert roles(nan) == [
        ("cause", line_of(text, "0 / 0")),
        ("read", line_of(text, "model(scaled)")),
    ]
    assert nan.details["outside_graph"] is True


def test_softmax_over_a_fully_masked_row_names_the_mask(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        lin = nn.Linear(4, 3)
        scores = lin(torch.randn(2, 4))
        empty = torch.tensor([[False, False, False], [True, True, True]])
        scores = scores.masked_fill(empty, float("-inf"))  # row 1 has nothing left
        weights = scores.softmax(-1)
        weights.sum().backward()
        """,
    )
    (nan,) = [f for f in found if f.code == "GP201"]
    assert roles(nan) == [
        ("cause", line_of(text, "nothing left")),
        ("read", line_of(text, "scores.softmax")),
    ]


def test_a_backward_nan_behind_a_deliberate_infinity_names_the_backward_op(
    tmp_path: Path,
) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F
        from torch import nn

        protos = nn.Parameter(torch.randn(4, 8))
        opt = torch.optim.SGD([protos], lr=0.1)
        for step in range(2):
            unit = F.normalize(protos, dim=1)
            cos = unit @ unit.t()
            angles = torch.acos(cos.clamp(-1.0, 1.0))  # infinite slope at cos == 1
            angles = angles.masked_fill(torch.eye(4, dtype=torch.bool), float("inf"))
            loss = -angles.min(1).values.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    (grad,) = [f for f in found if f.code == "GP202"]
    assert [r for r in roles(grad) if r[0] == "cause"] == [
        ("cause", line_of(text, "infinite slope"))
    ]
