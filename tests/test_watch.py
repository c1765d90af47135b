"""watch(model): statistics, steps, findings, selection and errors.

Expected values are computed with plain torch on the same tensors (autograd's own .grad,
retain_grad on a replica, direct reductions), never read back from watch itself.
"""

from __future__ import annotations

import copy
import gc
import io
import math
import warnings
from collections import OrderedDict

import pytest
import torch
from rich.console import Console
from torch import nn

from gradprobe._watch import WatchSessionClosed, watch
from gradprobe.errors import GradprobeTypeError, GradprobeValueError, GradprobeWarning


class Log(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


class Shift(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.offset = 0.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x - self.offset


class Floor(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.floor = 0.1

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.clamp(min=self.floor)


class Sqrt(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sqrt(x)


class Pair(nn.Module):
    """Returns a tuple, a nested dict and an integer tensor."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 4)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, dict[str, object]]:
        h = self.lin(x)
        return h * 2, {"half": h / 2, "index": h.argmax(1), "note": "text"}


def _sequential_outputs(model: nn.Sequential, x: torch.Tensor) -> list[torch.Tensor]:
    outs = []
    h = x
    for module in model:
        h = module(h)
        outs.append(h.detach().clone())
    return outs


def test_activation_statistics_match_torch() -> None:
    model = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3))
    x = torch.randn(6, 5)
    with watch(model, sample_every=1) as session:
        model(x)
    record = session.history[0]
    expected = [("(input)", x), *zip(["0", "1", "2"], _sequential_outputs(model, x), strict=True)]
    assert [a.label for a in record.activations] == [name for name, _ in expected]
    for activation, (_, t) in zip(record.activations, expected, strict=True):
        s = activation.stats
        assert s.shape == tuple(t.shape) and s.dtype == "float32"
        assert s.min == t.min().item() and s.max == t.max().item()
        assert s.mean == pytest.approx(t.double().mean().item(), rel=1e-5, abs=1e-7)
        assert s.std == pytest.approx(t.double().std().item(), rel=1e-4)
        assert s.zero_fraction == (t == 0).double().mean().item()
        assert s.nan_count == 0 and s.inf_count == 0
    assert record.activations[2].type == "ReLU"
    assert record.activations[2].stats.zero_fraction > 0  # a ReLU output


def test_nan_and_inf_counts_are_exact() -> None:
    class Inject(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x.clone()
            y[0, 0] = math.nan
            y[1, :2] = math.inf
            y[2, 0] = -math.inf
            return y

    model = nn.Sequential(nn.Linear(3, 3), Inject())
    with watch(model, sample_every=1) as session:
        model(torch.randn(4, 3))
    stats = session.history[0].activations[-1].stats
    assert (stats.nan_count, stats.inf_count) == (1, 3)
    assert math.isnan(stats.min) and not stats.finite and stats.has_nan


class Gain(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gain = nn.Parameter(torch.full((2,), 2.0))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.gain


def test_unsampled_steps_keep_only_the_sum_that_checks_for_nan() -> None:
    model = nn.Sequential(nn.Linear(3, 2), Gain())
    x = torch.randn(4, 3)
    with watch(model, sample_every=3) as session:
        for _ in range(5):
            model(x).sum().backward()
    sampled = [r.sampled for r in session.history]
    assert sampled == [True, False, False, True, False]
    out = model(x).detach()
    for record in session.history:
        stats = record.activations[-1].stats
        assert stats.total == pytest.approx(out.sum().item(), rel=1e-6)
        if record.sampled:
            assert (stats.min, stats.max) == (out.min().item(), out.max().item())
            assert stats.mean is not None
        else:
            assert (stats.min, stats.max, stats.mean, stats.max_abs) == (None,) * 4
        assert stats.finite
        grads = record.parameter_grads
        assert set(grads) == {"0.weight", "0.bias", "1.gain"}  # checked at every step
        assert (grads["1.gain"].norm is None) == (not record.sampled)
        assert (grads["0.weight"].total is None) == record.sampled


@pytest.mark.parametrize(
    ("values", "what"),
    [
        ([1.0, math.nan], "NaN (or +Inf and -Inf)"),
        ([1.0, math.inf], "+Inf (or values whose sum overflows)"),
        ([-math.inf, 1.0], "-Inf (or values whose sum overflows)"),
        ([math.inf, -math.inf], "NaN (or +Inf and -Inf)"),
    ],
)
def test_between_samples_every_kind_of_non_finite_value_is_caught(
    values: list[float], what: str
) -> None:
    class Poison(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.values: list[float] | None = None

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if self.values is None:
                return x
            return torch.cat((x[:, 2:], x.new_tensor(self.values).expand(x.shape[0], 2)), 1)

    poison = Poison()
    model = nn.Sequential(nn.Linear(4, 4), poison, nn.Linear(4, 1))
    with watch(model, sample_every=10) as session:
        for step in range(4):
            poison.values = values if step == 2 else None
            model(torch.randn(3, 4))
    record = session.history[2]
    (hurt,) = [a for a in record.activations if a.module == "1"]
    assert not hurt.stats.finite
    assert hurt.stats.has_nan == ("NaN" in what)
    (finding,) = [f for f in session.findings() if f.code == "GP201"]
    assert (finding.module, finding.details["step"]) == ("1", 2)
    assert f"held {what} at step 2" in finding.message
    assert finding.details["min"] is None


def test_half_precision_sums_do_not_overflow_into_a_false_inf() -> None:
    big = torch.full((64, 64), 60000.0, dtype=torch.float16)  # sums to 2.5e8 > float16 max
    model = nn.Sequential(nn.Identity(), nn.Linear(64, 1).half())
    with watch(model, sample_every=10) as session:
        for _ in range(3):
            model(big)
    assert [f.code for f in session.findings() if f.code == "GP201"] == []
    assert session.history[1].activations[0].stats.total == pytest.approx(64 * 64 * 60000.0)


def test_parameter_gradient_statistics_match_autograd() -> None:
    model = nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    expected = []
    with watch(model, sample_every=1) as session:
        for _ in range(3):
            opt.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            expected.append({n: p.grad.clone() for n, p in model.named_parameters()})
            opt.step()
    for record, grads in zip(session.history, expected, strict=True):
        got = record.parameter_grads
        assert set(got) == {"2.weight", "2.bias", "0.weight", "0.bias"}
        for name, grad in grads.items():
            assert got[name].norm == pytest.approx(grad.norm().item(), rel=1e-5)
            assert got[name].max_abs == grad.abs().max().item()
            assert got[name].mean_abs == pytest.approx(grad.abs().mean().item(), rel=1e-5)
            assert got[name].shape == tuple(grad.shape)


def test_output_gradients_match_retain_grad_on_a_replica() -> None:
    model = nn.Sequential(nn.Linear(4, 5), nn.ReLU(inplace=True), nn.Linear(5, 2))
    replica = copy.deepcopy(model)
    x = torch.randn(8, 4)
    with watch(model, sample_every=1) as session:
        model(x).pow(2).sum().backward()
    # Replica without in-place, retaining every intermediate gradient.
    h0 = replica[0](x)
    h0.retain_grad()
    h1 = torch.relu(h0)
    h1.retain_grad()
    h2 = replica[2](h1)
    h2.retain_grad()
    h2.pow(2).sum().backward()
    got = {g.label: g.stats for g in session.history[0].output_grads}
    assert list(got) == ["2", "1", "0"]
    for label, ref in (("0", h0.grad), ("1", h1.grad), ("2", h2.grad)):
        assert got[label].norm == pytest.approx(ref.norm().item(), rel=1e-5)
        assert got[label].max_abs == pytest.approx(ref.abs().max().item(), rel=1e-6)


def test_update_ratio_is_the_relative_change_of_each_parameter() -> None:
    model = nn.Linear(3, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    expected = []
    with watch(model, optimizer=opt, sample_every=2) as session:
        for _ in range(3):
            opt.zero_grad()
            model(torch.randn(5, 3)).pow(2).mean().backward()
            before = {n: p.detach().clone() for n, p in model.named_parameters()}
            opt.step()
            expected.append(
                {
                    n: ((p.detach() - before[n]).norm() / before[n].norm()).item()
                    for n, p in model.named_parameters()
                }
            )
    ratios = [r.update_ratios for r in session.history]
    assert ratios[1] == {}  # step 1 is not sampled
    for got, want in ((ratios[0], expected[0]), (ratios[2], expected[2])):
        assert got.keys() == want.keys()
        for name in want:
            assert got[name] == pytest.approx(want[name], rel=1e-5)


@pytest.mark.parametrize(("sample_every", "history"), [(1, 100), (4, 100), (4, 2)])
def test_nan_in_forward_is_found_at_its_exact_step_and_module(
    sample_every: int, history: int
) -> None:
    shift = Shift()
    model = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), shift, Log(), nn.Linear(4, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    nan_step = 5
    with watch(model, optimizer=opt, sample_every=sample_every, history=history) as session:
        for step in range(8):
            shift.offset = 2.0 if step == nan_step else 0.0  # sigmoid - 2 < 0: log gives NaN
            opt.zero_grad()
            model(torch.randn(6, 4)).mean().backward()
            opt.step()
    found = {f.code: f for f in session.findings()}
    nan = found["GP201"]
    assert (nan.module, nan.details["step"], nan.details["output"]) == ("3", nan_step, "")
    assert "at step 5" in nan.message
    if sample_every == 1:
        assert nan.details["nan_count"] == 6 * 4  # every log input was negative
    assert found["GP202"].details["step"] == nan_step
    assert list(found)[:2] == ["GP201", "GP202"]


@pytest.mark.parametrize("history", [100, 1])
def test_nan_in_backward_names_the_first_non_finite_gradient(history: int) -> None:
    floor = Floor()
    model = nn.Sequential(nn.Linear(3, 3), floor, Sqrt(), nn.Linear(3, 1))
    torch.manual_seed(3)
    nan_step = 2
    with watch(model, sample_every=5, history=history) as session:
        for step in range(4):
            floor.floor = 0.0 if step == nan_step else 0.1  # sqrt'(0) = inf in backward only
            model.zero_grad()
            x = torch.randn(8, 3)
            model(x).sum().backward()
    found = {f.code: f for f in session.findings()}
    assert "GP201" not in found  # the forward stayed finite
    bad = found["GP202"]
    assert (bad.module, bad.details["kind"], bad.details["step"]) == ("1", "output", nan_step)
    assert "after this module" in bad.message


def test_parameters_without_gradient_are_named_exactly() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.used = nn.Linear(3, 3)
            self.detached = nn.Linear(3, 3)
            self.unused = nn.Linear(3, 3)
            self.frozen = nn.Linear(3, 3)
            self.frozen.requires_grad_(False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.used(x) + self.detached(x).detach() + self.frozen(x)

    model = Net()
    with watch(model) as session:
        for _ in range(3):
            model.zero_grad()
            model(torch.randn(2, 3)).sum().backward()
        with torch.no_grad():
            model(torch.randn(2, 3))  # an evaluation step: not judged
    found = [f for f in session.findings() if f.code == "GP107"]
    assert [f.parameter for f in found] == [
        "detached.weight",
        "detached.bias",
        "unused.weight",
        "unused.bias",
    ]
    assert all(f.details == {"first_step": 0, "steps": 3, "of": 3} for f in found)
    assert found[0].module == "detached"
    assert session.history[0].without_grad == (
        "detached.weight",
        "detached.bias",
        "unused.weight",
        "unused.bias",
    )
    assert session.history[3].without_grad == ()


def _relu_net() -> nn.Sequential:
    model = nn.Sequential(
        OrderedDict(
            fc1=nn.Linear(4, 6),
            act1=nn.ReLU(),
            fc2=nn.Linear(6, 6),
            act2=nn.ReLU(),
            fc3=nn.Linear(6, 1),
        )
    )
    with torch.no_grad():
        model.fc2.weight[:3] = 0.0  # units 0..2 of act2 see only their bias
        model.fc2.bias[:3] = -1.0
        model.fc1.bias.fill_(5.0)  # act1 always fires
        model.fc2.weight[3:] *= 0.01
        model.fc2.bias[3:] = 10.0  # units 3..5 of act2 always fire
    return model


@pytest.mark.parametrize(("threshold", "reported"), [(0.5, True), (0.6, False)])
def test_dead_relu_is_found_with_its_name(threshold: float, reported: bool) -> None:
    model = _relu_net()
    with watch(model, dead_relu=threshold, sample_every=2) as session:
        for _ in range(3):
            model(torch.randn(20, 4)).sum().backward()
    dead = [f for f in session.findings() if f.code == "GP205"]
    if not reported:
        assert dead == []
        return
    assert [f.module for f in dead] == ["act2"]
    assert dead[0].details == {"dead": 3, "units": 6, "rows": 40, "fraction": 0.5}


def test_a_relu_is_not_judged_on_too_few_rows() -> None:
    model = _relu_net()
    with watch(model, sample_every=1) as session:
        model(torch.randn(20, 4))  # 20 rows < MIN_ROWS
    assert [f for f in session.findings() if f.code == "GP205"] == []


def test_exploding_and_vanishing_gradients_use_the_thresholds() -> None:
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
    inputs = [torch.randn(4, 3) for _ in range(4)]
    replica = copy.deepcopy(model)
    norms = []
    for step, x in enumerate(inputs):
        replica.zero_grad()
        scale = 1000.0 if step == 2 else 1.0
        (replica(x) * scale).sum().backward()
        norms.append({n: p.grad.norm().item() for n, p in replica.named_parameters()})
    big = max(norms[2].values())
    assert big > 50 * max(max(n.values()) for n in norms[:2])
    with watch(model, sample_every=1, exploding=big / 2) as session:
        for step, x in enumerate(inputs):
            model.zero_grad()
            (model(x) * (1000.0 if step == 2 else 1.0)).sum().backward()
    found = {f.code: f for f in session.findings()}
    exploding = found["GP203"]
    assert exploding.details["step"] == 2
    assert norms[2][exploding.parameter] > big / 2
    assert exploding.details["norm"] == pytest.approx(norms[2][exploding.parameter], rel=1e-5)
    # Step 2's gradients were 1000x: the smallest at step 3 alone is not vanishing.
    assert "GP204" not in found


@pytest.mark.parametrize("zeroed_steps", [1, 2])
def test_a_gradient_is_vanishing_only_when_small_at_two_sampled_steps(zeroed_steps: int) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 1))
    steps = 4
    now = {"step": 0}

    def zero_late(grad: torch.Tensor) -> torch.Tensor:
        return grad * 0 if now["step"] >= steps - zeroed_steps else grad

    model[1].bias.register_hook(zero_late)  # before watch: watch sees what it returns
    with watch(model, sample_every=1, vanishing=1e-3) as session:
        for step in range(steps):
            now["step"] = step
            model.zero_grad()
            model(torch.randn(8, 3)).abs().mean().backward()
    found = [f for f in session.findings() if f.code == "GP204"]
    if zeroed_steps == 1:
        assert found == []
    else:
        (finding,) = found
        assert finding.details["norms"] == {"1.bias": 0.0}
        assert finding.details["step"] == steps - 1


def test_forward_steps_count_evaluation_forwards_too() -> None:
    model = nn.Linear(3, 1)
    with watch(model) as session:
        model(torch.randn(2, 3)).sum().backward()
        with torch.no_grad():
            model(torch.randn(2, 3))
        model(torch.randn(2, 3)).sum().backward()
    records = session.history
    assert [r.step for r in records] == [0, 1, 2]
    assert [r.grad_enabled for r in records] == [True, False, True]
    assert [r.backward_passes for r in records] == [1, 0, 1]
    assert records[1].gradients == ()


def test_optimizer_steps_group_accumulated_micro_batches() -> None:
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model, optimizer=opt, step_on="optimizer") as session:
        for _ in range(3):
            for _ in range(2):
                model(torch.randn(2, 3)).sum().backward()
            opt.step()
            opt.zero_grad()
    records = session.history
    assert session.steps == 3
    assert [r.backward_passes for r in records] == [2, 2, 2]
    assert [a.label for a in records[0].activations] == ["(model)", "(model) (call 2)"]


def test_manual_steps_follow_the_calls() -> None:
    model = nn.Linear(3, 1)
    with watch(model, step_on="manual") as session:
        model(torch.randn(2, 3))
        model(torch.randn(2, 3))
        session.step()
        session.step()  # a step with no activity still counts
        model(torch.randn(2, 3))
    records = session.history
    assert [(r.step, len(r.activations)) for r in records] == [(0, 2), (1, 0), (2, 1)]
    with watch(model) as other, pytest.raises(GradprobeValueError, match="step_on='manual'"):
        other.step()


def test_history_is_bounded_and_the_running_step_is_included() -> None:
    model = nn.Linear(3, 1)
    with watch(model, history=3) as session:
        for _ in range(7):
            model(torch.randn(2, 3)).sum().backward()
        running = session.history
        assert [(r.step, r.finished) for r in running] == [(4, True), (5, True), (6, False)]
    assert [(r.step, r.finished) for r in session.history] == [(4, True), (5, True), (6, True)]


def test_module_called_twice_records_each_call() -> None:
    class Twice(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.shared = nn.Linear(3, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.shared(self.shared(x))

    model = Twice()
    x = torch.randn(4, 3)
    with watch(model, sample_every=1) as session:
        model(x).sum().backward()
    first = model.shared(x).detach()
    second = model.shared(first).detach()
    record = session.history[0]
    acts = {a.label: a.stats for a in record.activations}
    assert list(acts) == ["(input)", "shared", "shared (call 2)"]
    assert (acts["shared"].min, acts["shared (call 2)"].max) == (
        first.min().item(),
        second.max().item(),
    )
    assert [g.label for g in record.output_grads] == ["shared (call 2)", "shared"]


def test_tuple_and_dict_outputs_are_recorded_by_path() -> None:
    model = Pair()
    with watch(model, modules=[Pair, nn.Linear], sample_every=1) as session:
        a, _b = model(torch.randn(5, 3))
        a.sum().backward()  # _b["half"] gets no gradient
    record = session.history[0]
    assert [a.label for a in record.activations] == [
        "(input)",
        "lin",
        "(model)[0]",
        "(model)[1]['half']",
    ]
    assert [g.label for g in record.output_grads] == ["(model)[0]", "lin"]


def test_lstm_nested_tuple_outputs() -> None:
    model = nn.LSTM(3, 4, batch_first=True)
    with watch(model) as session:
        out, (h, _c) = model(torch.randn(2, 5, 3))
        (out.sum() + h.sum()).backward()
    labels = [a.label for a in session.history[0].activations]
    assert labels == ["(input)", "(model)[0]", "(model)[1][0]", "(model)[1][1]"]
    assert {g.label for g in session.history[0].output_grads} == {"(model)[0]", "(model)[1][0]"}


def test_frozen_first_layer_and_input_without_grad() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(inplace=True), nn.Linear(4, 1))
    model[0].requires_grad_(False)
    with watch(model) as session:
        model(torch.randn(5, 3)).sum().backward()
    record = session.history[0]
    assert [a.label for a in record.activations] == ["(input)", "0", "1", "2"]
    assert [g.label for g in record.output_grads] == ["2"]  # nothing upstream requires grad
    assert set(record.parameter_grads) == {"2.weight", "2.bias"}
    assert session.findings() == []


def test_module_selection_by_glob_and_type() -> None:
    model = nn.Sequential(
        OrderedDict(
            enc=nn.Sequential(nn.Linear(3, 3), nn.ReLU()), head=nn.Linear(3, 1), act=nn.Tanh()
        )
    )
    with watch(model, modules="enc.*") as session:
        assert session.options()["modules"] == ["enc.0", "enc.1"]
    with watch(model, modules=["head", nn.ReLU]) as session:
        assert session.options()["modules"] == ["enc.1", "head"]
    session = watch(model, modules="enc")
    assert session.options()["parameters"] == []  # enc owns no parameter directly
    session.close()
    default = watch(model)
    assert default.options()["modules"] == ["enc.0", "enc.1", "head", "act"]
    default.close()
    with pytest.raises(GradprobeValueError, match=r"'dec\.\*' matches no module"):
        watch(model, modules="dec.*")
    with pytest.raises(GradprobeTypeError, match="glob patterns"):
        watch(model, modules=[3])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"model": "net"}, GradprobeTypeError, "needs an nn.Module"),
        ({"sample_every": 0}, GradprobeValueError, "sample_every"),
        ({"history": 1.5}, GradprobeValueError, "history"),
        ({"step_on": "epoch"}, GradprobeValueError, "step_on"),
        ({"step_on": "optimizer"}, GradprobeValueError, "pass optimizer"),
        ({"optimizer": object()}, GradprobeTypeError, "torch.optim.Optimizer"),
        (
            {"optimizer": torch.optim.SGD},
            GradprobeTypeError,
            (
                r"needs an optimizer instance, got the class torch.optim.sgd.SGD; create it "
                r"first: optimizer=SGD\(model.parameters\(\), lr=...\)"
            ),
        ),
        (
            {"modules": 5},
            GradprobeTypeError,
            (
                r"watch\(modules=...\) takes a glob pattern on module names, an nn.Module "
                r"subclass, or a list of them, got 5"
            ),
        ),
        ({"exploding": -1.0}, GradprobeValueError, "exploding"),
        ({"vanishing": 1e5}, GradprobeValueError, "must be below"),
        ({"dead_relu": 0}, GradprobeValueError, "dead_relu"),
    ],
)
def test_bad_arguments_raise_gradprobe_errors(
    kwargs: dict[str, object], error: type[Exception], text: str
) -> None:
    args = {"model": nn.Linear(2, 2), **kwargs}
    model = args.pop("model")
    with pytest.raises(error, match=text):
        watch(model, **args)  # type: ignore[arg-type]


def test_closed_session_says_so_and_keeps_its_results() -> None:
    model = nn.Linear(3, 1)
    session = watch(model, step_on="manual")
    model(torch.randn(2, 3)).sum().backward()
    session.close()
    session.close()  # idempotent
    assert repr(session) == "<WatchSession closed: 1 step, 1 modules, 2 parameters>"
    assert not session.open
    with pytest.raises(WatchSessionClosed, match="closed"):
        session.step()
    with pytest.raises(WatchSessionClosed), session:
        pass
    assert session.history[0].step == 0
    assert session.findings() == []


def test_gradient_flow_is_in_model_order_from_the_latest_sampled_step() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    with watch(model, sample_every=2) as session:
        for _ in range(4):  # steps 0..3: the latest sampled is step 2
            model.zero_grad()
            model(torch.randn(6, 3)).pow(2).sum().backward()
            if session.steps == 3:
                expected = {n: p.grad.clone() for n, p in model.named_parameters()}
    flow = session.gradient_flow()
    assert [name for name, _, _ in flow] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    for name, mean_abs, max_abs in flow:
        assert mean_abs == pytest.approx(expected[name].abs().mean().item(), rel=1e-5)
        assert max_abs == expected[name].abs().max().item()


def test_report_lists_findings_and_puts_the_worst_rows_first() -> None:
    shift = Shift()
    model = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), shift, Log(), nn.Linear(4, 1))
    with watch(model, sample_every=1) as session:
        model(torch.randn(3, 4)).sum().backward()
        shift.offset = 2.0
        model(torch.randn(3, 4)).sum().backward()
    console = Console(width=88, color_system=None, record=True, file=io.StringIO())
    session.report(console)
    text = console.export_text()
    assert "GP201 nan_in_forward" in text and "module '3' (Log)" in text
    table = text[text.index("activations at step 1") :]
    rows = [line.split()[0] for line in table.splitlines()[2:] if line.strip()]
    rows = [row for row in rows if not row.startswith("─") and row != "module"]
    assert rows[:2] == ["3", "4"]  # NaN rows first
    assert "parameter gradients at step 1" in text


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float64])
def test_statistics_in_other_float_dtypes(dtype: torch.dtype) -> None:
    class Holes(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x.clone()
            y[0, :3] = math.nan
            y[1, 0] = -math.inf
            y[2, :2] = 0.0
            return y

    model = nn.Sequential(nn.Linear(8, 8), Holes()).to(dtype)
    x = torch.randn(6, 8, dtype=dtype)
    with watch(model, sample_every=1) as session:
        model(x)[3:].float().sum().backward()  # rows 3.. hold no NaN
    grad = model[0].weight.grad
    got = session.history[0].parameter_grads["0.weight"]
    assert got.mean_abs == pytest.approx(grad.double().abs().mean().item(), rel=1e-2)
    assert got.max_abs == grad.abs().max().item()
    linear, holes = session.history[0].activations[1:]
    out = model[0](x).detach()
    assert linear.stats.dtype == str(dtype).removeprefix("torch.")
    assert (linear.stats.min, linear.stats.max) == (out.min().item(), out.max().item())
    assert linear.stats.mean == pytest.approx(out.double().mean().item(), rel=1e-2, abs=1e-3)
    assert linear.stats.zero_fraction == (out == 0).double().mean().item()
    stats = holes.stats
    assert (stats.nan_count, stats.inf_count) == (3, 1)
    expected = Holes()(out)
    assert stats.zero_fraction == (expected == 0).double().mean().item()
    assert stats.mean is not None and math.isnan(stats.mean)


@pytest.mark.parametrize("kind", ["forward", "backward"])
def test_first_nan_is_exact_after_folding_steps_of_varying_layouts(kind: str) -> None:
    class Loop(nn.Module):
        """Calls its cell 1, 2 or 3 times: the set of recorded tensors changes per step."""

        def __init__(self) -> None:
            super().__init__()
            self.cell = nn.Linear(3, 3)
            self.floor = Floor()
            self.sqrt = Sqrt()
            self.repeats = 1
            self.poison = False

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for _ in range(self.repeats):
                x = torch.tanh(self.cell(x))
            if self.poison and kind == "forward":
                x = x / 0.0 * 0.0  # NaN in the forward pass (the cell's output stays finite)
            self.floor.floor = 0.0 if self.poison else 0.1
            return self.sqrt(self.floor(x))  # sqrt'(0) = inf in the backward pass

    model = Loop()
    bad_step = 37
    with watch(model, history=1, sample_every=7) as session:
        for step in range(45):
            model.repeats = step % 3 + 1
            model.poison = step == bad_step
            if step % 5 == 4:
                with torch.no_grad():
                    model(torch.randn(4, 3))  # steps without any gradient break the runs
            else:
                model(torch.randn(4, 3)).sum().backward()
    found = {f.code: f for f in session.findings()}
    code = "GP201" if kind == "forward" else "GP202"
    assert found[code].details["step"] == bad_step
    assert found[code].details["name"] == "floor"  # the first watched output after the poison
    assert len(session.history) == 1


def test_a_report_or_an_export_copies_to_the_host_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from gradprobe._watch import _stats

    copies = []
    real = _stats.to_host

    def counting(tensors: list[torch.Tensor]) -> list[list[float]]:
        copies.append(len(tensors))
        return real(tensors)

    monkeypatch.setattr(_stats, "to_host", counting)
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    with watch(model, optimizer=opt, sample_every=2, history=3) as session:
        for _ in range(6):
            opt.zero_grad()
            model(torch.randn(4, 3)).sum().backward()
            opt.step()
        assert copies == []  # nothing waited for the device during training
        session.report(Console(file=io.StringIO()))
        assert len(copies) == 1
        session.to_json()
        assert len(copies) == 2
    assert len(copies) == 3  # close()
    session.report(Console(file=io.StringIO()))
    session.to_json()
    session.gradient_flow()
    assert len(copies) == 3  # closed: everything is on the host already


def test_scripted_parts_are_skipped_and_a_scripted_root_is_refused() -> None:
    scripted = torch.jit.script(nn.Linear(3, 3))
    model = nn.Sequential(scripted, nn.ReLU())
    with watch(model) as session:
        model(torch.randn(2, 3)).sum().backward()
    names = {record["module"] for record in session.to_dict()["history"][0]["activations"]}
    assert names == {"(input)", "1"}  # the ReLU; the scripted Linear cannot be hooked
    assert scripted.weight.grad is not None
    with pytest.raises(GradprobeTypeError, match="TorchScript"):
        watch(scripted)


def test_an_additive_attention_mask_input_is_not_bad_data() -> None:
    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.attn = nn.MultiheadAttention(8, 2)

        def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            return self.attn(x, x, x, attn_mask=mask)[0]

    model = Block()
    causal = nn.Transformer.generate_square_subsequent_mask(5)  # -inf above the diagonal
    with watch(model) as session:
        model(torch.randn(5, 1, 8), causal).sum().backward()
    assert [f.code for f in session.findings()] == []
    nan_input = torch.randn(5, 1, 8)
    nan_input[0, 0, 0] = float("nan")
    with watch(model) as session:
        model(nan_input, causal)
    assert [f.code for f in session.findings()] == ["GP201"]


def test_a_bias_cancelled_by_batchnorm_is_not_a_vanishing_gradient() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 20), nn.BatchNorm1d(20), nn.ReLU(), nn.Linear(20, 1))
    with watch(model) as session:
        model(torch.randn(64, 5)).pow(2).mean().backward()
    assert float(model[0].bias.grad.norm()) < 1e-6  # cancelled by the batch mean
    assert [f.code for f in session.findings()] == []
    with watch(model, vanishing=1e3) as session:  # the check itself still runs
        model(torch.randn(64, 5)).pow(2).mean().backward()
    (finding,) = [f for f in session.findings() if f.code == "GP204"]
    assert "0.bias" not in finding.details["norms"]


def test_pass_through_modules_skip_checks_between_samples_but_nan_is_still_placed() -> None:
    class Bad(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x / 0.0 * 0.0  # NaN made here

    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), Bad(), nn.ReLU(), nn.Linear(4, 2))
    with watch(model, sample_every=100) as session:
        model(torch.randn(3, 4)).sum()  # step 0: sampled, everything recorded
        model(torch.randn(3, 4)).sum()  # step 1: the ReLUs are not checked
    history = session.to_dict()["history"]
    assert {a["module"] for a in history[0]["activations"]} >= {"1", "3"}
    assert not {a["module"] for a in history[1]["activations"]} & {"1", "3"}
    (finding,) = [f for f in session.findings() if f.code == "GP201"]
    assert finding.module == "2"  # Bad, not the ReLU after it


def test_parameters_left_out_of_backward_inputs_on_purpose_are_not_reported() -> None:
    # Alternating updates: each backward asks for one part's gradients only.
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    first, last = list(model[0].parameters()), list(model[2].parameters())
    with watch(model) as session:
        for step in range(4):
            loss = model(torch.randn(5, 3)).pow(2).mean()
            if step % 2:
                loss.backward(inputs=first)
            else:
                torch.autograd.backward(loss, inputs=(p for p in last))
        loss = model(torch.randn(5, 3)).sum()
        torch.autograd.grad(loss, first[0])
        loss = model(torch.randn(5, 3)).sum()
        loss.backward(inputs=first + last[:1])  # asks for last.bias nowhere
        loss = model(torch.randn(5, 3)).sum()
        loss.backward(inputs=first)
        model(torch.randn(5, 3)).sum().backward(inputs=last)  # one step, the two halves
    assert session.steps == 8
    assert [record.without_grad for record in session.history] == [()] * 8
    assert not [f for f in session.findings() if f.code == "GP107"]
    # The generator passed as inputs was read once, by torch: the gradients arrived.
    assert model[2].weight.grad is not None


def test_a_whole_backward_in_the_step_still_expects_every_parameter() -> None:
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 1))
    frozen_by_mistake = nn.Linear(3, 1)  # registered but cut off below

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = model
            self.side = frozen_by_mistake

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.body(x) + self.side(x).detach()

    net = Net()
    with watch(net) as session:
        out = net(torch.randn(2, 3)).sum()
        out.backward(inputs=list(model.parameters()), retain_graph=True)
        out.backward()  # asks for every leaf: side.* got nothing, and that is reported
    assert [f.parameter for f in session.findings() if f.code == "GP107"] == [
        "side.weight",
        "side.bias",
    ]


def test_two_sessions_share_the_backward_wrapper_and_both_remove_it() -> None:
    backward, grad = torch.autograd.backward, torch.autograd.grad
    a, b = nn.Linear(2, 1), nn.Linear(2, 1)
    outer = watch(a)
    inner = watch(b)
    assert torch.autograd.backward is not backward
    outer.close()  # closed first, out of order: the wrapper stays for the inner session
    a(torch.randn(3, 2)).sum().backward(inputs=[a.weight])
    b(torch.randn(3, 2)).sum().backward(inputs=[b.weight])
    inner.close()
    assert (torch.autograd.backward, torch.autograd.grad) == (backward, grad)
    assert not [f for f in inner.findings() if f.code == "GP107"]


def test_a_session_nobody_closes_lets_go_of_the_backward_wrapper_when_collected() -> None:
    backward = torch.autograd.backward
    model = nn.Linear(2, 1)
    watch(model)
    assert torch.autograd.backward is not backward
    del model  # the hooks on it were all that kept the session alive
    gc.collect()
    assert torch.autograd.backward is backward


class _Pair(nn.Module):
    """A container whose own forward is never called: the loop calls G and D directly."""

    def __init__(self) -> None:
        super().__init__()
        self.G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        self.D = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))


def _gan_iteration(pair: _Pair) -> None:
    fake = pair.G(torch.randn(16, 4))
    real = torch.randn(16, 2)
    d_loss = (pair.D(fake.detach()) - pair.D(real)).mean()
    d_loss.backward()
    pair.D(fake).mean().neg().backward(inputs=list(pair.G.parameters()))


def test_a_container_whose_forward_never_runs_says_how_to_end_steps() -> None:
    pair = _Pair()
    with warnings.catch_warnings(record=True) as caught, watch(pair) as s:
        warnings.simplefilter("always")
        for _ in range(3):
            _gan_iteration(pair)
    (warning,) = caught
    assert warning.category is GradprobeWarning
    assert "step_on='manual'" in str(warning.message)
    assert warning.filename == __file__  # points at the user's backward(), not at hooks
    assert s.steps == 1
    assert any("own forward never ran" in note for note in s.notes)
    # The way out it names: one step per iteration, and GP107 stays quiet.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with watch(pair, step_on="manual") as s:
            for _ in range(3):
                _gan_iteration(pair)
                s.step()
    assert s.steps == 3
    assert not s.notes
    assert not [f for f in s.findings() if f.code == "GP107"]


def test_report_refuses_what_is_not_a_console() -> None:
    model = nn.Linear(2, 1)
    with watch(model) as session:
        model(torch.ones(1, 2)).sum().backward()
    with pytest.raises(
        GradprobeTypeError, match=r"report\(console=...\) takes a rich.console.Console, got 5"
    ):
        session.report(console=5)  # type: ignore[arg-type]
    console = Console(file=io.StringIO(), width=100)
    session.report(console=console)
    assert "parameter gradients at step 0" in console.file.getvalue()  # type: ignore[attr-defined]


def test_names_that_look_like_rich_markup_are_shown_as_written() -> None:
    model = nn.Sequential()
    model.add_module("[/]", nn.Linear(3, 4))
    model.add_module("[bold red]act", nn.ReLU())
    model.add_module("[link=https://example]head", nn.Linear(4, 1))
    model.register_parameter("[i]offset", nn.Parameter(torch.zeros(1)))
    with watch(model, sample_every=1) as session:
        out = model(torch.randn(2, 3)).sum() + model.get_parameter("[i]offset").sum() * math.nan
        out.backward()
    buffer = io.StringIO()
    console = Console(file=buffer, width=120, force_terminal=True, color_system="truecolor")
    session.report(console=console)  # "[/]" used to raise rich's MarkupError
    styled = buffer.getvalue()
    assert "\x1b]8;" not in styled  # no hyperlink was made from a module name
    plain = Console(file=io.StringIO(), width=120, color_system=None, record=True)
    session.report(console=plain)
    text = plain.export_text()
    for name in ("[/].weight", "[bold red]act", "[link=https://example]head.bias", "[i]offset"):
        assert name in text
    assert "[i]offset" in {f.parameter for f in session.findings()}


@pytest.mark.parametrize("sample_every", [1, 20], ids=["sampled", "between-samples"])
def test_a_non_finite_gradient_from_the_loss_is_blamed_past_a_sigmoid(sample_every: int) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Sigmoid())
    with watch(model, sample_every=sample_every) as session:
        for step in range(2):
            y = model(torch.randn(2, 3))
            # sqrt at 0: a finite forward, an infinite gradient into the Sigmoid's output
            loss = y.sum() if step == 0 else (y - y.detach()).sqrt().sum()
            loss.backward()
    (found,) = [f for f in session.findings() if f.code == "GP202"]
    assert found.module == "1" and found.details["step"] == 1
    assert "it came from the operations after this module (or from the loss)" in found.message


def test_zero_gradients_behind_a_dead_relu_are_its_symptom_not_a_vanishing_gradient() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    with torch.no_grad():
        model[0].bias.fill_(-100.0)  # every unit of the ReLU dead
    with watch(model, sample_every=1) as session:
        for _ in range(3):
            model(torch.randn(16, 4)).sum().backward()
    # plain torch: what is exactly zero behind the ReLU, and what is not
    zero = [n for n, p in model.named_parameters() if p.grad is not None and not p.grad.any()]
    assert zero == ["0.weight", "0.bias", "2.weight"]
    assert model[2].bias.grad is not None and model[2].bias.grad.abs().sum() > 0
    codes = [f.code for f in session.findings()]
    assert codes == ["GP205"]  # no GP204 before (or after) the root cause
    (dead,) = session.findings()
    assert dead.module == "1" and dead.details["zero_gradients"] == zero
    assert dead.message.endswith(
        "No gradient flows back through it: '0.weight', '0.bias', '2.weight' got exactly zero "
        "gradients."
    )


def test_zero_gradients_behind_a_silent_relu_seen_on_too_few_rows_name_it() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    with torch.no_grad():
        model[0].bias.fill_(-100.0)  # every unit of the ReLU off
    with watch(model, sample_every=1) as session:
        for _ in range(3):
            model(torch.randn(4, 4)).sum().backward()  # 12 rows: too few to judge the ReLU
    zero = [n for n, p in model.named_parameters() if p.grad is not None and not p.grad.any()]
    assert zero == ["0.weight", "0.bias", "2.weight"]
    (found,) = session.findings()
    assert found.code == "GP204"  # no GP205 on 12 rows, but the cause is named
    assert found.details["zero_behind"] == {"1": zero}
    assert found.message.endswith(
        "'0.weight', '0.bias', '2.weight' are exactly zero behind '1' (ReLU), none of whose 8 "
        "units fired in the 12 rows seen: likely a dead ReLU, not a small gradient (GP205 "
        "judges a ReLU after 32 rows)."
    )
    with torch.no_grad():
        model[0].bias.fill_(0.0)  # alive again: tiny gradients are just small
        model[2].weight.fill_(1e-12)
    with watch(model, sample_every=1) as session:
        for _ in range(3):
            model(torch.randn(4, 4)).sum().backward()
    (found,) = session.findings()
    assert found.code == "GP204" and "zero_behind" not in found.details
    assert "dead ReLU" not in found.message


def test_a_vanishing_gradient_elsewhere_is_still_reported_after_the_dead_relu() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1), nn.Linear(1, 1))
    with torch.no_grad():
        model[0].bias.fill_(-100.0)
        model[3].weight.fill_(1e-12)  # tiny, not zero: gradients above it vanish
    with watch(model, sample_every=1) as session:
        for _ in range(3):
            model(torch.randn(16, 4)).sum().backward()
    found = session.findings()
    assert [f.code for f in found] == ["GP205", "GP204"]
    assert "'2.bias'" in found[1].message and "'0.weight'" not in found[1].message
