"""Invariant 8: values that leave autograd silently. A loss rebuilt from values that left
the graph (``torch.as_tensor`` of a list of losses, ``.item()``, ``.data``, a NumPy round
trip) and then given requires_grad reaches no parameter: GP115 names the line where the
values left, GP107 names it for the parameters that got nothing. Detached targets, NumPy
used to choose indices, and tensors rebuilt from Python floats that are data stay silent."""

from __future__ import annotations

from pathlib import Path

from _run import diagnose, line_of, roles


def _causes(found: list, code: str) -> list[int | None]:
    (finding,) = [f for f in found if f.code == code]
    return [line for role, line in roles(finding) if role == "cause"]


def test_a_loss_summed_from_as_tensor_of_losses_names_the_as_tensor(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        net = nn.Linear(3, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        x = torch.randn(16, 3)
        for _ in range(3):
            a = net(x).pow(2).mean()
            b = net(x).abs().mean()
            terms = torch.as_tensor([a, b])  # left here
            terms.requires_grad = True
            loss = terms.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert _causes(found, "GP115") == [line_of(text, "left here")]
    (finding,) = [f for f in found if f.code == "GP115"]
    assert "reached no parameter" in finding.message


def test_a_loss_accumulated_from_item_names_the_item(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        net = nn.Linear(3, 4)
        opt = torch.optim.Adam(net.parameters(), lr=0.01)
        for _ in range(3):
            logp = net(torch.randn(5, 3)).log_softmax(-1)
            action = torch.multinomial(logp.exp(), 1)
            total = torch.zeros((), requires_grad=True)
            for i in range(5):
                total = total - logp[i, action[i, 0]].item() * 0.5  # left here
            opt.zero_grad()
            total.backward()
            opt.step()
        """,
    )
    assert _causes(found, "GP115") == [line_of(text, "left here")]
    # GP115 says it for every parameter; not GP107 again, nor at the sampling
    assert [f.code for f in found] == ["GP115"]


def test_a_leaf_rebuilt_from_numpy_names_the_detach(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import numpy as np
        import torch
        from torch import nn

        net = nn.Linear(3, 2)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            emb = net(torch.randn(8, 3)).detach().numpy()  # left here
            spread = np.maximum(emb.std(0) - 1.0, 0.0)
            loss = torch.from_numpy(spread).float().mean()
            loss.requires_grad = True
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert _causes(found, "GP115") == [line_of(text, "left here")]


def test_a_forward_returning_data_is_named_behind_a_rewrapped_loss(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn
        from torch.autograd import Variable


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)

            def forward(self, x):
                return self.fc(x).data  # left here


        net = Net()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for _ in range(3):
            loss = nn.functional.cross_entropy(net(torch.randn(4, 3)), torch.tensor([0, 1, 0, 1]))
            loss = Variable(loss, requires_grad=True)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert _causes(found, "GP115") == [line_of(text, "left here")]


def test_log_probs_rebuilt_with_torch_tensor_name_that_line_for_the_actor(
    tmp_path: Path,
) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        actor, critic = nn.Linear(4, 3), nn.Linear(4, 1)
        opt = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=0.01)
        for _ in range(3):
            log_probs, values = [], []
            for t in range(6):
                obs = torch.randn(4)
                dist = torch.distributions.Categorical(logits=actor(obs))
                action = dist.sample()
                log_probs.append(dist.log_prob(action))
                values.append(critic(obs).squeeze())
            returns = torch.ones(6)
            values = torch.stack(values)
            lp = torch.tensor(log_probs)  # left here
            loss = -(lp * (returns - values.detach())).mean() + (values - returns).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert _causes(found, "GP107") == [line_of(text, "left here")]
    (finding,) = [f for f in found if f.code == "GP107"]
    assert "as data" in finding.message


def test_correct_uses_of_values_outside_autograd_stay_silent(tmp_path: Path) -> None:
    found, _ = diagnose(
        tmp_path,
        """
        import numpy as np
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        actor, critic = nn.Linear(4, 3), nn.Linear(4, 1)
        opt = torch.optim.Adam([*actor.parameters(), *critic.parameters()], lr=0.01)
        log = []
        for _ in range(3):
            log_probs, values, rewards = [], [], []
            for t in range(6):
                obs = torch.randn(4)
                dist = torch.distributions.Categorical(logits=actor(obs))
                action = dist.sample()
                log_probs.append(dist.log_prob(action))
                values.append(critic(obs).squeeze())
                rewards.append(1.0 if action.item() == int(obs.argmax()) else 0.0)
            returns = torch.tensor(rewards)  # data from Python floats
            values = torch.stack(values)
            per_step = -(torch.stack(log_probs) * (returns - values.detach()))
            hardest = np.argsort(-per_step.detach().numpy())[:3]  # indices only
            loss = per_step[torch.from_numpy(hardest.copy())].mean() + F.mse_loss(values, returns)
            opt.zero_grad()
            loss.backward()
            opt.step()
            log.append(torch.tensor([loss.item(), float(values.mean())]))

        w = torch.zeros(3, requires_grad=True)  # a plain tensor trained on purpose
        fit = torch.optim.SGD([w], lr=0.1)
        x, y = torch.randn(20, 3), torch.randn(20)
        for _ in range(3):
            err = ((x @ w - y) ** 2).mean()
            fit.zero_grad()
            err.backward()
            fit.step()
            log.append(torch.tensor(err.item()))

        z = actor(torch.randn(2, 4)).detach().clone().requires_grad_(True)  # latent code
        inv = torch.optim.Adam([z], lr=0.1)
        for _ in range(3):
            gap = (z - 1.0).pow(2).sum()
            inv.zero_grad()
            gap.backward()
            inv.step()
        """,
    )
    assert found == []


def test_a_leaf_rebuilt_from_a_threshold_names_the_comparison(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        net = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid())
        opt = torch.optim.Adam(net.parameters(), lr=0.01)
        x, y = torch.rand(8, 4), (torch.rand(8, 4) > 0.5).float()
        for _ in range(3):
            p = net(x)
            hard = (p > 0.5).float()  # left here
            hard = torch.tensor(hard, requires_grad=True)
            loss = 1 - (2 * (hard * y).sum() + 1) / (hard.sum() + y.sum() + 1)
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    assert _causes(found, "GP115") == [line_of(text, "left here")]
