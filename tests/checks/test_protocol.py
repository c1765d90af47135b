"""The training-step protocol: clipping inside an accumulation window (GP142), a step with
no backward since the last one (GP143), clipping handed an exhausted iterator (GP144), steps
on returned gradients (GP165), gradients never reset (GP134), frozen layers still moving
(GP111); and the correct loops of the same shapes, which must stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest
from _run import diagnose, line_of, roles

from gradprobe._recorder import events as events_module

_HEAD = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
batches = [torch.randn(4, 4) for _ in range(8)]
"""


def codes(tmp_path: Path, body: str) -> tuple[list[tuple[str, list[tuple[str, int | None]]]], str]:
    found, text = diagnose(tmp_path, _HEAD + body)
    return [(f.code, roles(f)) for f in found], text


def test_clipping_after_every_micro_batch_is_named(tmp_path: Path) -> None:
    found, text = codes(
        tmp_path,
        """
for i, x in enumerate(batches):
    (model(x).pow(2).mean() / 4).backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)  # every micro-batch
    if (i + 1) % 4 == 0:
        opt.step()  # the window's step
        opt.zero_grad()
""",
    )
    assert found == [
        (
            "GP142",
            [
                ("cause", line_of(text, "every micro-batch")),
                ("read", line_of(text, "the window's step")),
            ],
        )
    ]


def test_clipping_once_per_window_is_silent(tmp_path: Path) -> None:
    found, _ = codes(
        tmp_path,
        """
for i, x in enumerate(batches):
    (model(x).pow(2).mean() / 4).backward()
    if (i + 1) % 4 == 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        opt.zero_grad()
""",
    )
    assert found == []


def test_a_leftover_step_after_the_window_step_is_named(tmp_path: Path) -> None:
    found, text = codes(
        tmp_path,
        """
for x in batches:
    model(x).pow(2).mean().backward()
    opt.step()  # the window's step
    opt.zero_grad(set_to_none=False)
    opt.step()  # left over from before
""",
    )
    assert found == [
        (
            "GP143",
            [
                ("cause", line_of(text, "left over from before")),
                ("read", line_of(text, "the window's step")),
            ],
        )
    ]


def test_two_optimizers_after_one_backward_and_a_closure_step_are_silent(tmp_path: Path) -> None:
    found, _ = codes(
        tmp_path,
        """
head = nn.Linear(1, 1)
opt_head = torch.optim.Adam(head.parameters(), lr=0.01)
lbfgs = torch.optim.LBFGS(head.parameters(), max_iter=2)
for x in batches[:3]:
    opt.zero_grad()
    opt_head.zero_grad()
    head(model(x)).pow(2).mean().backward()
    opt.step()
    opt_head.step()

def closure():
    lbfgs.zero_grad()
    loss = head(model(batches[0]).detach()).pow(2).mean()
    loss.backward()
    return loss

for _ in range(2):
    lbfgs.step(closure)
""",
    )
    assert found == []


def test_clipping_a_consumed_filter_is_named(tmp_path: Path) -> None:
    found, text = codes(
        tmp_path,
        """
trainable = filter(lambda p: p.requires_grad, model.parameters())
sgd = torch.optim.SGD(trainable, lr=0.1)
for x in batches[:2]:
    sgd.zero_grad()
    model(x).pow(2).mean().backward()
    norm = torch.nn.utils.clip_grad_norm_(trainable, 1.0)  # nothing left
    sgd.step()
""",
    )
    assert found == [("GP144", [("cause", line_of(text, "nothing left"))])]


def test_clipping_a_fresh_generator_still_clips(tmp_path: Path) -> None:
    # gradprobe reads the generator to count it and hands torch an equivalent one
    _, _ = codes(
        tmp_path,
        """
x = batches[0]
model(x).pow(2).mean().mul(1000).backward()
norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
total = torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])
assert abs(float(total) - 1.0) < 1e-4, float(total)
assert float(norm) > 1.0
""",
    )


def test_a_step_after_autograd_grad_names_the_returned_gradients(tmp_path: Path) -> None:
    found, text = codes(
        tmp_path,
        """
for x in batches[:2]:
    loss = model(x).pow(2).mean()
    grads = torch.autograd.grad(loss, list(model.parameters()))  # returned, not stored
    opt.step()  # steps on nothing
""",
    )
    assert found == [
        (
            "GP165",
            [
                ("cause", line_of(text, "returned, not stored")),
                ("read", line_of(text, "steps on nothing")),
            ],
        )
    ]


def test_gradients_from_autograd_grad_stored_before_the_step_are_silent(tmp_path: Path) -> None:
    found, _ = codes(
        tmp_path,
        """
params = list(model.parameters())
for x in batches[:2]:
    loss = model(x).pow(2).mean()
    grads = torch.autograd.grad(loss, params)
    for p, g in zip(params, grads):
        p.grad = g.clamp(-1, 1)
    opt.step()
    opt.zero_grad()
""",
    )
    assert found == []


def test_an_inner_autograd_grad_followed_by_an_outer_backward_is_silent(tmp_path: Path) -> None:
    found, _ = codes(
        tmp_path,
        """
params = list(model.parameters())
for x in batches[:2]:
    inner = model(x).pow(2).mean()
    grads = torch.autograd.grad(inner, params, create_graph=True)
    penalty = sum(g.pow(2).sum() for g in grads)
    opt.zero_grad()
    (model(x).mean() + penalty).backward()
    opt.step()
""",
    )
    assert found == []


def test_a_mistake_early_in_a_run_longer_than_the_timeline_is_still_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The recorder keeps only the latest protocol events; the check reads them after every
    step, so a mistake in the first iteration of a long run is not lost."""
    monkeypatch.setattr(events_module, "_MAX_PROTOCOL", 12)
    found, text = codes(
        tmp_path,
        """
for i in range(30):
    model(batches[i % 8]).pow(2).mean().backward()
    if i == 0:
        model.zero_grad()  # drops the first backward's gradients
    opt.step()
    opt.zero_grad()
""",
    )
    assert found == [("GP110", [("cause", line_of(text, "drops the first"))])]


def test_steps_on_gradients_never_reset_and_frozen_layers_moving_share_the_timeline(
    tmp_path: Path,
) -> None:
    """GP134 and GP111 come from the same timeline as the step-order findings: a loop that
    never resets gradients, and a layer frozen mid-run whose zero .grad the optimizer keeps
    applying momentum to."""
    found, text = codes(
        tmp_path,
        """
for i, x in enumerate(batches):
    model(x).pow(2).mean().backward()  # adds onto the last step's gradients
    opt.step()  # steps on the sum; zero_grad() belongs after it
""",
    )
    assert found == [("GP134", [("cause", line_of(text, "steps on the sum"))])]
    found, text = codes(
        tmp_path,
        """
for i, x in enumerate(batches):
    if i == 4:
        model[0].weight.requires_grad_(False)  # freeze the first layer
    opt.zero_grad(set_to_none=False)
    model(x).pow(2).mean().backward()
    opt.step()  # momentum still moves it
""",
    )
    assert found == [
        (
            "GP111",
            [
                ("cause", line_of(text, "opt.zero_grad(set_to_none=False)")),
                ("cause", line_of(text, "opt = torch.optim.SGD")),
                ("read", line_of(text, "momentum still moves it")),
            ],
        )
    ]


def test_gradients_never_reset_after_the_first_layer_was_frozen_are_named(
    tmp_path: Path,
) -> None:
    """The parameters followed for GP134 are ones that still learn: freezing the first
    layer (which gets no more gradients) must not hide a loop that stops resetting them."""
    found, text = codes(
        tmp_path,
        """
for x in batches[:3]:
    opt.zero_grad()
    model(x).pow(2).mean().backward()
    opt.step()
model[0].requires_grad_(False)
for param in model[0].parameters():
    param.grad = None
for x in batches[3:]:
    model(x).pow(2).mean().backward()
    opt.step()  # never reset after it in this loop
""",
    )
    assert [(code, where[0]) for code, where in found] == [
        ("GP134", ("cause", line_of(text, "never reset after it")))
    ]


_GAN = """
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)  # the discriminator's
for step in range(4):
    fake = G(torch.randn(8, 2))
    opt_d.zero_grad()  # clears them
    d_loss = D(fake.detach()).mean() - D(torch.randn(8, 4)).mean()
    d_loss.backward()  # fills the discriminator's gradients
    {d_step}
    opt_g.zero_grad()  # the generator's: what its last step used
    g_loss = -D(fake).mean()
    g_loss.backward()
    opt_g.step()
"""


def test_an_optimizer_that_zeroes_and_never_steps_names_the_backward_it_belongs_after(
    tmp_path: Path,
) -> None:
    found, text = codes(tmp_path, _GAN.format(d_step="pass"))
    assert found == [
        (
            "GP167",
            [
                ("cause", line_of(text, "fills the discriminator's")),
                ("read", line_of(text, "# clears them")),
                ("created", line_of(text, "# the discriminator's")),
            ],
        )
    ]


def test_zeroing_gradients_a_step_already_used_is_not_work_thrown_away(tmp_path: Path) -> None:
    """opt_g.zero_grad() runs after the discriminator's backward and before any step of
    the generator's optimizer: it clears what the generator's last step used, not the
    discriminator's fresh gradients (GP110 used to fire here)."""
    found, _ = codes(tmp_path, _GAN.format(d_step="opt_d.step()"))
    assert found == []


def test_a_forgotten_step_is_named_and_gradients_read_for_analysis_are_not(
    tmp_path: Path,
) -> None:
    found, text = codes(
        tmp_path,
        """
for x in batches:
    opt.zero_grad()
    model(x).pow(2).mean().backward()  # then nothing steps
""",
    )
    assert [(code, where[0]) for code, where in found] == [
        ("GP167", ("cause", line_of(text, "then nothing steps")))
    ]
    found, _ = codes(
        tmp_path,
        """
x = batches[0].clone().requires_grad_()
saliency = []
for i in range(3):
    opt.zero_grad()
    model(x).sum().backward()
    saliency.append(x.grad.abs().sum(dim=0))
    x.grad = None
""",
    )
    assert found == []


def test_zero_grad_keeping_zero_tensors_between_backward_and_step_is_named(
    tmp_path: Path,
) -> None:
    found, text = codes(
        tmp_path,
        """
for x in batches:
    model(x).pow(2).mean().backward()
    opt.zero_grad(set_to_none=False)  # zeroes them in place
    opt.step()
""",
    )
    assert found == [("GP110", [("cause", line_of(text, "zeroes them in place"))])]
