"""Training-loop bugs named at the line to change: a generator trained on detached fakes,
a parameter made inside forward, and state carried into the next iteration."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import pytest

from gradprobe.checks._carry import carrier
from gradprobe.diagnose import diagnose_script
from gradprobe.findings import Finding


def run(tmp_path: Path, source: str) -> tuple[list[Finding], str]:
    script = tmp_path / "train.py"
    text = textwrap.dedent(source).lstrip("\n")
    script.write_text(text)
    return list(diagnose_script(script).findings), text


def line_of(text: str, needle: str) -> int:
    (hit,) = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hit


def causes(findings: list[Finding]) -> list[tuple[str, int]]:
    return [(f.code, loc.line) for f in findings for loc in f.locations if loc.role == "cause"]


_GAN = """
    import torch
    from torch import nn

    G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    D = nn.Sequential(nn.Linear(2, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
    opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
    bce = nn.BCEWithLogitsLoss()
    for step in range(3):
        fake = G(torch.randn(8, 4))
        opt_d.zero_grad()
        d_loss = bce(D(torch.randn(8, 2)), torch.ones(8, 1)) + bce(D(fake.detach()), torch.zeros(8, 1))
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        g_loss = bce(D({generated}), torch.ones(8, 1))
        g_loss.backward()
        opt_g.step()
"""


def test_generator_trained_on_detached_fakes_is_named(tmp_path: Path) -> None:
    findings, text = run(tmp_path, _GAN.format(generated="fake.detach()"))
    assert causes(findings) == [("GP107", line_of(text, "g_loss = bce"))]
    (finding,) = findings
    assert finding.details["parameters"] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert "cut at line" in finding.message and "detach()" in finding.message


_ENCODER_CRITIC = """
    import torch
    from torch import nn

    encoder = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
    critic = nn.Linear(8 + 2, 1)
    encoder_opt = torch.optim.Adam(encoder.parameters(), lr=1e-3)
    critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
    for step in range(3):
        obs, action = torch.randn(16, 6), torch.randn(16, 2)
        {encode}
        loss = critic(torch.cat([h, action], dim=1)).pow(2).mean()
        encoder_opt.zero_grad()
        critic_opt.zero_grad()
        loss.backward()
        critic_opt.step()
        encoder_opt.step()  # steps second, after the critic's
"""


def test_an_optimizer_stepping_after_another_one_on_no_gradient_is_named(tmp_path: Path) -> None:
    """The encoder's optimizer steps after the critic's: the backward before both still
    reached none of its parameters, because the encoder ran under no_grad."""
    encode = "with torch.no_grad():  # the encoder too\n            h = encoder(obs)"
    findings, text = run(tmp_path, _ENCODER_CRITIC.format(encode=encode))
    assert causes(findings) == [("GP107", line_of(text, "# the encoder too"))]
    findings, _ = run(tmp_path, _ENCODER_CRITIC.format(encode="h = encoder(obs)"))
    assert findings == []


def test_a_correct_gan_and_zeroing_before_step_are_not_blamed_on_a_cut(tmp_path: Path) -> None:
    findings, _ = run(tmp_path, _GAN.format(generated="fake"))
    assert findings == []
    # Gradients dropped between backward and step: GP110 names the zero_grad, and the
    # optimizer stepping without gradients adds no GP107 (no cut to name).
    findings, text = run(
        tmp_path,
        """
        import torch
        from torch import nn
        model = nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            model(torch.randn(4, 3)).pow(2).mean().backward()
            opt.zero_grad()
            opt.step()
        """,
    )
    assert causes(findings) == [("GP110", line_of(text, "opt.zero_grad()"))]


def test_parameter_made_inside_forward_is_named(tmp_path: Path) -> None:
    findings, text = run(
        tmp_path,
        """
        import torch
        from torch import nn

        class Scaled(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 2)
                self.scale = nn.Parameter(torch.ones(2))

            def forward(self, x):
                self.scale = nn.Parameter(torch.ones(2))
                return self.lin(x) * self.scale

        model = Scaled()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            opt.zero_grad()
            model(torch.randn(4, 3)).pow(2).mean().backward()
            opt.step()
        """,
    )
    made = [n for n, line in enumerate(text.splitlines(), 1) if "self.scale = nn.Param" in line][1]
    assert ("GP116", made) in causes(findings)
    (finding,) = [f for f in findings if f.code == "GP116"]
    assert finding.parameter == "scale" and "inside forward()" in finding.message


def test_a_layer_built_and_called_inside_forward_is_named(tmp_path: Path) -> None:
    """nn.Linear(...)(x) in forward: a new layer every call that no optimizer holds. A
    layer built once on the first call and kept (lazy init), and parameter-free layers
    built per call, are fine."""
    source = """
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.inner = nn.Linear(4, 4)
                self.lazy = None

            def forward(self, x):
                if self.lazy is None:
                    self.lazy = nn.Linear(4, 4)  # built once, kept
                h = nn.ReLU()(self.lazy(self.inner(x)))
                return {out}

        model = Block()
        with torch.no_grad():
            model(torch.randn(2, 4))  # builds the lazy layer before the optimizer
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            model(torch.randn(2, 4)).pow(2).mean().backward()
            opt.step()
        """
    findings, text = run(tmp_path, source.format(out="nn.Linear(4, 1)(h)  # a new layer"))
    assert causes(findings) == [("GP116", line_of(text, "# a new layer"))]
    assert findings[0].details == {"built": 4, "layer": "Linear"}
    findings, _ = run(tmp_path, source.format(out="h.sum(dim=1)"))
    assert findings == []


def test_lstm_state_is_named_where_it_is_stored_for_the_next_batch(tmp_path: Path) -> None:
    findings, text = run(
        tmp_path,
        """
        import torch
        from torch import nn

        rnn, head = nn.LSTM(4, 8), nn.Linear(8, 1)
        opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
        state = None
        for step in range(3):
            x = torch.randn(5, 2, 4)
            out, new_state = rnn(x, state)
            state = new_state
            loss = head(out).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP103"]
    roles = {(loc.role, loc.line) for loc in finding.locations}
    assert ("cause", line_of(text, "state = new_state")) in roles
    assert ("read", line_of(text, "rnn(x, state)")) in roles
    assert "tuple(t.detach() for t in new_state)" in finding.message


def test_memory_bank_is_named_where_it_grows(tmp_path: Path) -> None:
    findings, text = run(
        tmp_path,
        """
        import torch
        from torch import nn

        enc = nn.Linear(6, 4)
        opt = torch.optim.SGD(enc.parameters(), lr=0.1)
        memory = []
        for step in range(3):
            z = enc(torch.randn(8, 6))
            bank = torch.cat([z] + memory)
            loss = (z @ bank.t()).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            memory.append(z)
            memory = memory[-4:]
        """,
    )
    (finding,) = [f for f in findings if f.code == "GP103"]
    assert causes([finding]) == [("GP103", line_of(text, "memory.append(z)"))]
    assert "memory.append(z.detach())" in finding.message


def test_carrier_reads_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "loop.py"
    path.write_text(
        textwrap.dedent(
            """
            total = 0
            h = None
            for i in range(3):
                x = make(i)
                y, h2 = step(x, h, total)
                h = h2
                total += y
            """
        )
    )
    use = (str(path), 6, "<module>")
    # h and total are both carried: ambiguous, so no answer
    assert carrier(use) is None
    path.write_text(path.read_text().replace("total += y", "print(y)"))
    import linecache

    linecache.checkcache(str(path))
    found = carrier(use)
    assert found is not None
    assert (found.line[1], found.name) == (7, "h")
    assert found.fix.startswith("h = h2.detach()")
    assert carrier((str(path), 5, "<module>")) is None  # x is made fresh each iteration


def test_nan_written_by_the_optimizer_is_blamed_on_the_infinity_before_it(
    tmp_path: Path,
) -> None:
    findings, text = run(
        tmp_path,
        """
        import torch
        from torch import nn
        import torch.nn.functional as F

        torch.manual_seed(0)
        x, y = torch.randn(64, 8) * 50, torch.randint(0, 4, (64,))
        model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(3):
            opt.zero_grad()
            log_probs = torch.log(F.softmax(model(x) * 100, dim=1))
            F.nll_loss(log_probs, y).backward()
            opt.step()
        """,
    )
    (nan,) = [f for f in findings if f.code == "GP201"]
    roles = [(loc.role, loc.line) for loc in nan.locations]
    assert roles == [
        ("cause", line_of(text, "torch.log(F.softmax")),
        ("read", line_of(text, "opt.step()")),
    ]
    assert nan.details == {"in_optimizer_step": True}
    assert "infinity that log produced" in nan.message
    (grad,) = [f for f in findings if f.code == "GP202"]
    assert "the optimizer step at line" in grad.message


_CLASSIFIER = """
    import torch
    from torch import nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3){tail})

        def forward(self, x):
            scores = self.body(x)
            return {out}

    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    teacher = torch.randn(8, 3)
    for step in range(2):
        x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
        loss = {loss}
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def _classifier(tmp_path: Path, tail: str, out: str, loss: str) -> tuple[list[Finding], str]:
    findings, text = run(tmp_path, _CLASSIFIER.format(tail=tail, out=out, loss=loss))
    return [f for f in findings if f.code == "GP133"], text


def test_softmax_layer_before_cross_entropy_is_named_where_it_is_built(tmp_path: Path) -> None:
    found, text = _classifier(
        tmp_path, ", nn.Softmax(dim=1)", "scores", "nn.CrossEntropyLoss()(model(x), y)"
    )
    (finding,) = found
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "nn.Softmax(dim=1)")),
        ("read", line_of(text, "loss = ")),
    ]
    assert finding.details == {"loss": "cross_entropy", "given": "softmax"}


def test_softmax_in_forward_before_nll_loss_is_named(tmp_path: Path) -> None:
    found, text = _classifier(tmp_path, "", "F.softmax(scores, dim=1)", "F.nll_loss(model(x), y)")
    (finding,) = found
    assert finding.locations[0].line == line_of(text, "return F.softmax")
    assert "log_softmax" in finding.message


def test_logits_log_probs_and_soft_targets_are_not_named(tmp_path: Path) -> None:
    for out, loss in [
        ("scores", "F.cross_entropy(model(x), y)"),
        ("F.log_softmax(scores, dim=1)", "F.nll_loss(model(x), y)"),
        ("scores", "F.cross_entropy(model(x), F.softmax(teacher, dim=1))"),
    ]:
        assert _classifier(tmp_path, "", out, loss)[0] == []


def test_softmax_reshaped_for_a_sequence_loss_is_still_named(tmp_path: Path) -> None:
    found, text = _classifier(
        tmp_path,
        ", nn.Softmax(dim=-1)",
        "scores",
        "F.cross_entropy(model(x).unsqueeze(1).transpose(1, 2).reshape(8, 3), y)",
    )
    (finding,) = found
    assert finding.locations[0].line == line_of(text, "nn.Softmax(dim=-1)")


_LOOP = """
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
    opt = torch.optim.{optimizer}
    for epoch in range(2):
        {epoch_start}
        for batch in range(4):
            {batch_start}
            loss = model(torch.randn(8, 6)).pow(2).mean()
            loss.backward()
            {before_step}
            opt.step()
            {after_step}
"""


def _stale(
    tmp_path: Path,
    *,
    optimizer: str = "SGD(model.parameters(), lr=0.01)",
    epoch_start: str = "pass",
    batch_start: str = "pass",
    before_step: str = "pass",
    after_step: str = "pass",
) -> tuple[list[Finding], str]:
    source = _LOOP.format(
        optimizer=optimizer,
        epoch_start=epoch_start,
        batch_start=batch_start,
        before_step=before_step,
        after_step=after_step,
    )
    findings, text = run(tmp_path, source)
    return [f for f in findings if f.code == "GP134"], text


def test_a_loop_that_never_zeroes_is_named_at_its_step(tmp_path: Path) -> None:
    """The missing reset belongs right after the step that used the gradients."""
    found, text = _stale(tmp_path)
    (finding,) = found
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "opt.step()"))
    ]
    assert finding.details == {"steps": 7, "reset": "never", "other_objective": False}
    assert "zero_grad()" in (finding.hint or "")


def test_zeroing_once_per_epoch_is_named(tmp_path: Path) -> None:
    found, text = _stale(
        tmp_path, epoch_start="opt.zero_grad()  # per epoch", optimizer="Adam(model.parameters())"
    )
    (finding,) = found
    assert finding.details["steps"] == 6  # the first step of each epoch is clean
    assert finding.locations[0].line == line_of(text, "per epoch")


def test_every_way_of_resetting_gradients_is_seen(tmp_path: Path) -> None:
    resets = [
        {"batch_start": "opt.zero_grad()"},
        {"batch_start": "opt.zero_grad(set_to_none=False)"},
        {"after_step": "model.zero_grad()"},
        {"batch_start": "[p.grad.zero_() for p in model.parameters() if p.grad is not None]"},
        {"batch_start": "[p.grad.data.zero_() for p in model.parameters() if p.grad is not None]"},
        {"after_step": "[setattr(p, 'grad', None) for p in model.parameters()]"},
        {"before_step": "pass", "after_step": "opt.zero_grad()"},
    ]
    for reset in resets:
        assert _stale(tmp_path, **reset)[0] == [], reset


def test_accumulation_on_purpose_and_a_gan_are_not_named(tmp_path: Path) -> None:
    accumulate = """
        import torch
        from torch import nn

        model = nn.Linear(6, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        for i in range(12):
            (model(torch.randn(4, 6)).pow(2).mean() / 4).backward()
            if (i + 1) % 4 == 0:
                opt.step()
                opt.zero_grad()
    """
    gan = """
        import torch
        from torch import nn

        G, D = nn.Linear(4, 6), nn.Linear(6, 1)
        opt_g = torch.optim.Adam(G.parameters())
        opt_d = torch.optim.Adam(D.parameters())
        for step in range(4):
            fake = G(torch.randn(8, 4))
            opt_d.zero_grad(set_to_none=False)
            (D(torch.randn(8, 6)).mean() - D(fake.detach()).mean()).backward()
            opt_d.step()
            opt_g.zero_grad(set_to_none=False)
            (-D(fake).mean()).backward()  # also adds into D's used gradients
            opt_g.step()
    """
    lbfgs = """
        import torch
        from torch import nn

        model = nn.Linear(6, 1)
        opt = torch.optim.LBFGS(model.parameters(), max_iter=3)
        x, y = torch.randn(16, 6), torch.randn(16, 1)

        def closure():
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            return loss

        for step in range(3):
            opt.step(closure)
    """
    for source in (accumulate, gan, lbfgs):
        findings, _ = run(tmp_path, source)
        assert [f.code for f in findings if f.code == "GP134"] == [], source


def test_sigmoid_before_bce_with_logits_is_named(tmp_path: Path) -> None:
    for tail, out in [(", nn.Sigmoid()", "scores"), ("", "torch.sigmoid(scores)")]:
        found, text = _classifier(
            tmp_path, tail, out, "nn.BCEWithLogitsLoss()(model(x), F.one_hot(y, 3).float())"
        )
        (finding,) = found
        made = "nn.Sigmoid()" if tail else "return torch.sigmoid"
        assert finding.locations[0].line == line_of(text, made)
        assert finding.details == {"loss": "binary_cross_entropy_with_logits", "given": "sigmoid"}
    plain = "F.binary_cross_entropy(model(x), F.one_hot(y, 3).float())"
    assert _classifier(tmp_path, ", nn.Sigmoid()", "scores", plain)[0] == []


_REGRESSION = """
    import torch
    from torch import nn

    model = nn.Linear(6, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        x, y = torch.randn(8, 6), torch.randn({target})
        loss = {loss}
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_regression_loss_broadcasting_n1_against_n_is_named(tmp_path: Path) -> None:
    source = _REGRESSION.format(target="8", loss="nn.MSELoss()(model(x), y)")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        findings, text = run(tmp_path, source)
    (finding,) = [f for f in findings if f.code == "GP135"]
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "loss = "))
    ]
    assert finding.details == {"loss": "mse_loss", "input": [8, 1], "target": [8]}
    assert "broadcast to (8, 8)" in finding.message and "squeeze(-1)" in finding.message
    # torch's own warning names the user's line, once, as it does without gradprobe
    sizes = [w for w in caught if "target size" in str(w.message)]
    assert [(Path(w.filename).name, w.lineno) for w in sizes] == [
        ("train.py", line_of(text, "loss = "))
    ]
    with pytest.warns(UserWarning, match="target size") as always:  # filter "always"
        run(tmp_path, source)
    assert len([w for w in always if "target size" in str(w.message)]) == 3


@pytest.mark.filterwarnings("ignore:Using a target size")
def test_matching_or_scalar_targets_are_not_named(tmp_path: Path) -> None:
    for target, loss in [
        ("8, 1", "nn.functional.l1_loss(model(x), y)"),
        ("8", "nn.functional.huber_loss(model(x).squeeze(-1), y)"),
        ("1", "nn.functional.mse_loss(model(x), y)"),
    ]:
        findings, _ = run(tmp_path, _REGRESSION.format(target=target, loss=loss))
        assert [f for f in findings if f.code == "GP135"] == [], loss


_SALIENCY = """
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
    for step in range(2):
        x = torch.randn(4, 6)
        {before}
        out = model(x)
        {after}
        out.sum().backward()
        saliency = x.grad
        print(saliency is None)
"""


def test_requires_grad_turned_on_after_the_forward_is_named(tmp_path: Path) -> None:
    for late in ("x.requires_grad_()", "x.requires_grad = True"):
        findings, text = run(tmp_path, _SALIENCY.format(before="pass", after=late))
        (finding,) = [f for f in findings if f.code == "GP136"]
        assert [(loc.role, loc.line) for loc in finding.locations] == [
            ("cause", line_of(text, late)),
            ("created", line_of(text, "out = model(x)")),
            ("read", line_of(text, "saliency = x.grad")),
        ]


def test_requires_grad_turned_on_before_the_forward_is_not_named(tmp_path: Path) -> None:
    for early in ("x.requires_grad_()", "x.requires_grad = True"):
        findings, _ = run(tmp_path, _SALIENCY.format(before=early, after="pass"))
        assert [f for f in findings if f.code == "GP136"] == []


_FREEZE = """
    import torch
    from torch import nn

    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.{optimizer}
    for step in range(5):
        if step == 2:
            model[0].requires_grad_(False)
        loss = model(torch.randn(8, 6)).pow(2).mean()
        opt.zero_grad({zero})
        loss.backward()
        opt.step()
"""


def test_a_frozen_layer_that_momentum_still_moves_is_named(tmp_path: Path) -> None:
    for optimizer in ("SGD(model.parameters(), lr=0.1, momentum=0.9)", "AdamW(model.parameters())"):
        source = _FREEZE.format(optimizer=optimizer, zero="set_to_none=False")
        findings, text = run(tmp_path, source)
        (finding,) = [f for f in findings if f.code == "GP111"]
        # the zero_grad() that keeps a zero .grad, and the optimizer that holds the layer
        assert [(loc.role, loc.line) for loc in finding.locations] == [
            ("cause", line_of(text, "opt.zero_grad(")),
            ("cause", line_of(text, "opt = torch.optim")),
            ("read", line_of(text, "opt.step()")),
        ]
        assert finding.details == {"parameters": ["0.weight", "0.bias"]}
        assert f"frozen at line {line_of(text, 'requires_grad_(False)')}" in finding.message


def test_a_frozen_layer_moved_once_by_its_last_gradient_names_the_freeze(
    tmp_path: Path,
) -> None:
    # frozen after its backward and before the step, then zeroed to None: only that one
    # step moves it, through the gradient it had; no zero_grad() kept anything
    source = """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        for step in range(5):
            loss = model(torch.randn(8, 6)).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            if step == 2:
                model[0].requires_grad_(False)
            opt.step()
    """
    findings, text = run(tmp_path, source)
    (finding,) = [f for f in findings if f.code == "GP111"]
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "requires_grad_(False)")),
        ("read", line_of(text, "opt.step()")),
    ]


def test_a_frozen_layer_that_stays_put_is_not_named(tmp_path: Path) -> None:
    for optimizer, zero in [
        ("SGD(model.parameters(), lr=0.1)", "set_to_none=False"),  # lr * 0: no change
        ("SGD(model.parameters(), lr=0.1, momentum=0.9)", ""),  # .grad None: skipped
        ("AdamW(model.parameters())", "set_to_none=True"),
    ]:
        findings, _ = run(tmp_path, _FREEZE.format(optimizer=optimizer, zero=zero))
        assert [f for f in findings if f.code == "GP111"] == [], optimizer


def test_zeroing_a_grad_before_the_first_backward_is_explained(tmp_path: Path) -> None:
    source = """
        import torch

        w = torch.randn(6, 1, requires_grad=True)
        x, y = torch.randn(32, 6), torch.randn(32, 1)
        for step in range(3):
            {zero}
            loss = ((x @ w - y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
    """
    findings, text = run(tmp_path, source.format(zero="w.grad.zero_()"))
    (finding,) = [f for f in findings if f.code == "GP137"]
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "w.grad.zero_()")),
        ("created", line_of(text, "w = torch.randn")),
    ]
    assert finding.details == {"backward_calls_before": 0}
    guarded = "if w.grad is not None: w.grad.zero_()"
    findings, _ = run(tmp_path, source.format(zero=guarded))
    assert [f for f in findings if f.code == "GP137"] == []


def test_a_grad_cut_off_by_detach_names_the_detach(tmp_path: Path) -> None:
    source = """
        import torch
        from torch import nn

        model = nn.Linear(6, 1)
        x = torch.randn(4, 6, requires_grad=True)
        features = x.detach() * 2
        model(features).sum().backward()
        print(x.grad.abs().mean())
        other = None
        other.shape
    """
    findings, text = run(tmp_path, source)
    (finding,) = [f for f in findings if f.code == "GP137"]
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "x.detach()")),
        ("read", line_of(text, "print(x.grad")),
        ("created", line_of(text, "x = torch.randn")),
    ]
    # a NoneType failure on another line is not blamed on .grad
    unrelated = source.replace("print(x.grad.abs().mean())", "print(x.grad is None)")
    findings, _ = run(tmp_path, unrelated)
    assert [f for f in findings if f.code == "GP137"] == []


def test_a_late_requires_grad_is_explained_once(tmp_path: Path) -> None:
    source = _SALIENCY.format(before="pass", after="x.requires_grad_()").replace(
        "print(saliency is None)", "print(saliency.abs().sum())"
    )
    findings, _ = run(tmp_path, source)
    codes = [f.code for f in findings]
    assert "GP136" in codes and "GP137" not in codes


def test_a_hand_written_update_that_never_zeroes_is_named(tmp_path: Path) -> None:
    source = """
        import torch

        w = torch.randn(6, 1, requires_grad=True)
        b = torch.zeros(1, requires_grad=True)
        x, y = torch.randn(32, 6), torch.randn(32, 1)
        for step in range(4):
            loss = ((x @ w + b - y) ** 2).mean()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
                b -= 0.1 * b.grad
            {reset}
    """
    findings, text = run(tmp_path, source.format(reset="pass"))
    (finding,) = [f for f in findings if f.code == "GP134"]
    assert [(loc.role, loc.line) for loc in finding.locations] == [
        ("cause", line_of(text, "loss.backward()")),
        ("read", line_of(text, "w -= 0.1")),
    ]
    assert finding.details == {"steps": 3}
    for reset in ("w.grad.zero_(); b.grad.zero_()", "w.grad = None; b.grad = None"):
        findings, _ = run(tmp_path, source.format(reset=reset))
        assert [f for f in findings if f.code == "GP134"] == [], reset
