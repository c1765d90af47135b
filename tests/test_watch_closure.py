"""watch() with ``optimizer.step(closure)``: the forward and backward run inside the step,
after its pre-hook, and the update ratio is still measured."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from gradprobe._watch import watch


@pytest.mark.parametrize("step_on", ["optimizer", "manual"])
def test_update_ratios_of_closure_steps(step_on: str) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    expected = []

    def closure() -> torch.Tensor:
        opt.zero_grad(set_to_none=False)
        loss = (model(x) - y).pow(2).mean()
        loss.backward()
        return loss

    with watch(model, optimizer=opt, sample_every=1, step_on=step_on) as session:  # type: ignore[arg-type]
        for _ in range(3):
            before = model[0].weight.detach().clone()
            opt.step(closure)
            expected.append(((model[0].weight - before).norm() / before.norm()).item())
            if step_on == "manual":
                session.step()
    assert session.steps == 3
    records = session.history
    assert [len(r.activations) for r in records] == [3, 3, 3]  # one forward per step
    ratios = [r.update_ratios.get("0.weight") for r in records]
    assert ratios[1:] == pytest.approx(expected[1:], rel=1e-5)
    # Step 0: the parameters had no gradient yet when the step began, as in any loop.
    assert ratios[0] is None
