"""GP118 only when the target carries gradient to parameters the prediction also reaches:
a model chasing its own output. Swapped symmetric-loss arguments and jointly trained
target networks are designs, not mistakes."""

from __future__ import annotations

import textwrap
from pathlib import Path

from gradprobe.diagnose import diagnose_script


def codes(tmp_path: Path, source: str) -> list[str]:
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(source).lstrip("\n"))
    result = diagnose_script(script)
    assert result.exit_code == 0
    return [f.code for f in result.findings]


def test_a_target_from_the_same_network_is_named(tmp_path: Path) -> None:
    assert "GP118" in codes(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F
        from torch import nn

        q = nn.Linear(4, 2)
        s, s_next = torch.randn(8, 4), torch.randn(8, 4)
        target = 0.9 * q(s_next).max(1)[0]
        F.smooth_l1_loss(q(s).max(1)[0], target).backward()
        """,
    )


def test_swapped_arguments_with_a_constant_first_are_silent(tmp_path: Path) -> None:
    found = codes(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F
        from torch import nn

        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            x, y = torch.randn(8, 4), torch.randn(8, 1)
            loss = F.l1_loss(y, model(x)) + F.mse_loss(y, model(x))
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert found == []


def test_vq_codebook_and_commitment_terms_are_silent(tmp_path: Path) -> None:
    found = codes(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F
        from torch import nn

        encoder = nn.Linear(6, 3)
        codebook = nn.Embedding(5, 3)
        opt = torch.optim.Adam([*encoder.parameters(), *codebook.parameters()], lr=1e-2)
        for _ in range(2):
            z_e = encoder(torch.randn(8, 6))
            index = torch.cdist(z_e.detach(), codebook.weight.detach()).argmin(1)
            z_q = codebook(index)
            codebook_loss = F.mse_loss(z_e.detach(), z_q)  # the constant first
            commitment = F.mse_loss(z_e, z_q.detach())
            opt.zero_grad()
            (codebook_loss + 0.25 * commitment).backward()
            opt.step()
        """,
    )
    assert found == []


def test_a_target_from_a_jointly_trained_second_model_is_silent(tmp_path: Path) -> None:
    found = codes(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F
        from torch import nn

        student, projector = nn.Linear(4, 3), nn.Linear(4, 3)
        opt = torch.optim.SGD([*student.parameters(), *projector.parameters()], lr=0.1)
        x = torch.randn(8, 4)
        loss = F.mse_loss(student(x), projector(x))
        opt.zero_grad()
        loss.backward()
        opt.step()
        """,
    )
    assert found == []


def _causes(tmp_path: Path, source: str) -> tuple[list[int], str]:
    script = tmp_path / "train.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    (finding,) = [f for f in diagnose_script(script).findings if f.code == "GP118"]
    return [loc.line for loc in finding.locations if loc.role == "cause"], text


def _line(text: str, needle: str) -> int:
    (hit,) = [n for n, line in enumerate(text.splitlines(), 1) if needle in line]
    return hit


def test_a_target_from_its_own_model_call_names_that_call(tmp_path: Path) -> None:
    causes, text = _causes(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F
        from torch import nn

        q = nn.Linear(4, 2)
        s, s_next = torch.randn(8, 4), torch.randn(8, 4)
        next_q = q(s_next)  # wrap this call in no_grad
        target = 0.9 * next_q.max(1)[0]
        F.smooth_l1_loss(q(s).max(1)[0], target).backward()
        """,
    )
    assert causes == [_line(text, "wrap this call")]


def test_a_target_made_from_the_predictions_own_call_names_where_it_branched(
    tmp_path: Path,
) -> None:
    # the call also makes the prediction, so it cannot go under no_grad: detach the target
    causes, text = _causes(
        tmp_path,
        """
        import torch
        import torch.nn.functional as F
        from torch import nn

        model = nn.Linear(5, 3)
        logits = model(torch.randn(16, 5))
        target = torch.softmax(logits / 0.5, dim=1)  # detach here
        F.kl_div(torch.log_softmax(logits, dim=1), target, reduction="batchmean").backward()
        """,
    )
    assert causes == [_line(text, "detach here")]
