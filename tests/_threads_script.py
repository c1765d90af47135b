"""Run by tests/test_record_threads.py in a subprocess (threads that crash must not take
pytest down with them). ``python _threads_script.py SCENARIO [STEPS]`` prints one JSON line.

Scenarios:
  one       a thread trains inside record() (BUG_A) beside a thread training without it
  two       two threads, each inside its own record(), each with its own bug (BUG_A, BUG_B)
  overlap   A enters, B enters, A exits, B exits; then B enters, A enters, B exits, A exits
  raise     the same orders, with the user's code raising inside every block
  diagnose  run by ``gradprobe diagnose``: the main thread (recorded) and a plain thread
"""

from __future__ import annotations

import faulthandler
import json
import sys
import threading
import types
from pathlib import Path

import torch
from torch import nn

faulthandler.enable()
torch.set_num_threads(1)


class Cut(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.a(x)).detach()  # BUG_A: self.a never gets a gradient
        return self.b(h)


class Plain(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.b(torch.relu(self.a(x)))  # PLAIN_FORWARD


# Each returns its model: a recording judges the modules still alive when it ends.
def train_cut(steps: int) -> nn.Module:
    model = Cut()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    for _ in range(steps):
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    return model


def train_stale(steps: int) -> nn.Module:
    model = Plain()
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    for _ in range(steps):
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()  # BUG_B: gradients pile up, no zero_grad() after this step
    return model


def train_plain(steps: int) -> nn.Module:
    model = Plain()
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(16, 8), torch.randn(16, 1)
    for _ in range(steps):
        opt.zero_grad()  # PLAIN_ZERO
        loss = ((model(x) - y) ** 2).mean()  # PLAIN_LOSS
        loss.backward()  # PLAIN_BACKWARD
        opt.step()  # PLAIN_STEP
        with torch.no_grad():
            model.a.weight.requires_grad = True  # PLAIN_SETATTR
    return model


def marked_lines() -> dict[str, int]:
    """Line number of every ``# NAME`` marker in this file."""
    lines: dict[str, int] = {}
    with Path(__file__).open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, 1):
            if "# " in text:
                tag = text.rsplit("# ", 1)[1].split(":")[0].strip()
                if tag.isupper():
                    lines.setdefault(tag, number)
    return lines


def describe(rec: object) -> list[dict[str, object]]:
    return [
        {
            "code": f.code,
            "lines": [(loc.file.rsplit("/", 1)[-1], loc.line) for loc in f.locations],
        }
        for f in rec.findings  # type: ignore[attr-defined]
    ]


def run_threads(targets: dict[str, object]) -> dict[str, object]:
    results: dict[str, object] = {}
    errors: list[str] = []

    def wrap(name: str, target: object) -> None:
        try:
            results[name] = target()  # type: ignore[operator]
        except BaseException as error:  # noqa: BLE001
            errors.append(f"{name}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=wrap, args=item) for item in targets.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    results["errors"] = errors
    return results


def scenario_one(steps: int) -> dict[str, object]:
    import gradprobe

    def recorded() -> object:
        with gradprobe.record() as rec:
            model = train_cut(steps)
        del model
        return describe(rec)

    def plain() -> None:
        train_plain(steps)

    return run_threads({"recorded": recorded, "plain": plain})


def scenario_two(steps: int) -> dict[str, object]:
    import gradprobe

    def first() -> object:
        with gradprobe.record() as rec:
            model = train_cut(steps)
        del model
        return describe(rec)

    def second() -> object:
        with gradprobe.record() as rec:
            model = train_stale(steps)
        del model
        return describe(rec)

    return run_threads({"cut": first, "stale": second})


# -- what gradprobe patches --------------------------------------------------------------


def _owners() -> list[object]:
    from torch import distributions
    from torch.nn.utils import clip_grad, parametrize, prune
    from torch.optim import optimizer
    from torch.utils import checkpoint
    from torch.utils.hooks import BackwardHook

    def subclasses(cls: type) -> list[type]:
        found, todo = [], [cls]
        while todo:
            klass = todo.pop()
            found.append(klass)
            todo.extend(klass.__subclasses__())
        return found

    owners: list[object] = [
        torch.Tensor,
        torch._C.TensorBase,
        torch.nn.Module,
        torch.nn.Parameter,
        torch.autograd.Function,
        torch.no_grad,
        torch.enable_grad,
        torch.set_grad_enabled,
        torch.inference_mode,
        BackwardHook,
        prune.BasePruningMethod,
        parametrize,
        prune,
        clip_grad,
        checkpoint,  # the error catalogue notes checkpointed functions
        torch.nn.utils,
        torch.autograd,
        torch.nn.modules.module,
        optimizer,
        torch.optim,
        torch,
        Cut,
        Plain,
    ]
    if torch.distributed.is_available():  # the distributed check's destroy_process_group
        owners += [torch.distributed, torch.distributed.distributed_c10d]
    owners += subclasses(torch.optim.Optimizer)
    owners += subclasses(torch.optim.lr_scheduler.LRScheduler)
    owners += subclasses(distributions.Distribution)
    for name in ("amp", "cuda"):
        scaler = getattr(getattr(torch, name, None), "GradScaler", None)
        if scaler is not None:
            owners += subclasses(scaler)
    owners += [cls for cls in subclasses(torch.nn.Module) if cls.__module__.startswith("torch.nn")]
    # what the torch.compile check patches (gradprobe.checks.compiled)
    owners += [torch.utils.hooks.RemovableHandle]
    dynamo = sys.modules.get("torch._dynamo")
    if dynamo is not None:
        owners += [dynamo, dynamo.eval_frame.OptimizedModule]
    return owners


def label(owner: object) -> str:
    if isinstance(owner, types.ModuleType):
        return owner.__name__
    return f"{getattr(owner, '__module__', '')}.{getattr(owner, '__qualname__', repr(owner))}"


# counters torch itself moves (every hook registration takes the next handle id)
_MOVING = {("torch.utils.hooks.RemovableHandle", "next_id")}


def snapshot() -> dict[tuple[str, str], object]:
    values: dict[tuple[str, str], object] = {}
    for owner in _owners():
        for name, value in list(vars(owner).items()):
            if (label(owner), name) not in _MOVING:
                values[(label(owner), name)] = value
    return values


def patch_table() -> list[tuple[str, str]]:
    """Every attribute gradprobe's shared patch sets have in place now (empty before
    gradprobe kept such a table)."""
    try:
        from gradprobe import _patch
    except ImportError:
        return []
    installed = getattr(_patch, "_INSTALLED", [])
    return [
        (label(owner), name) for shared in installed for owner, name in shared.patches.targets()
    ]


def hook_tables() -> dict[str, int]:
    from torch.nn.modules import module
    from torch.optim import optimizer

    tables = {
        name: getattr(module, name)
        for name in dir(module)
        if name.startswith("_global_") and isinstance(getattr(module, name), dict)
    }
    tables.update(
        {
            name: getattr(optimizer, name)
            for name in dir(optimizer)
            if name.startswith("_global_") and isinstance(getattr(optimizer, name), dict)
        }
    )
    return {name: len(table) for name, table in tables.items()}


def changed(before: dict[tuple[str, str], object]) -> list[str]:
    after = snapshot()
    out = [
        f"{owner}.{name}"
        for (owner, name), value in after.items()
        if (owner, name) not in before or before[(owner, name)] is not value
    ]
    out += [f"{owner}.{name} (deleted)" for (owner, name) in before if (owner, name) not in after]
    return sorted(out)


def overlapping(raising: bool, steps: int) -> dict[str, object]:
    """A enters, B enters, then they exit in the order "AB", then in the order "BA"."""
    # torch's own lazy set-up (an optimizer class's first construction wraps its step)
    # happens here, not inside the compared window.
    train_cut(1)
    train_stale(1)
    return {order: one_order(order, raising, steps) for order in ("AB", "BA")}


def one_order(order: str, raising: bool, steps: int) -> dict[str, object]:
    import gradprobe

    entered = {"A": threading.Event(), "B": threading.Event()}
    leave = {"A": threading.Event(), "B": threading.Event()}
    left = {"A": threading.Event(), "B": threading.Event()}
    modes: dict[str, int] = {}
    table: list[tuple[str, str]] = []

    def block(name: str, train: object) -> object:
        rec = gradprobe.record()
        try:
            with rec:
                model = train(steps)  # type: ignore[operator]
                entered[name].set()
                leave[name].wait(30)
                if raising:
                    raise ValueError(f"user error in {name}")  # USER_RAISE
        except ValueError:
            pass
        finally:
            left[name].set()
        modes[name] = torch._C._len_torch_function_stack()
        del model
        return describe(rec)

    def a() -> object:
        return block("A", train_cut)

    def b() -> object:
        entered["A"].wait(30)
        return block("B", train_stale)

    def conductor() -> None:
        entered["A"].wait(30)
        entered["B"].wait(30)
        table.extend(patch_table())
        first, second = order[0], order[1]
        leave[first].set()
        left[first].wait(30)
        leave[second].set()

    before = snapshot()
    scanned = {owner for owner, _ in before}
    tables = hook_tables()
    results = run_threads({"A": a, "B": b, "conductor": conductor})
    return {
        "changed": changed(before),
        "patched": len(table),
        "not_scanned": sorted(f"{o}.{n}" for o, n in table if o not in scanned),
        "tables_before": tables,
        "tables_after": hook_tables(),
        "modes_left": modes,
        "errors": results["errors"],
        "A": results.get("A"),
        "B": results.get("B"),
    }


def scenario_diagnose(steps: int) -> nn.Module:
    plain = threading.Thread(target=train_plain, args=(steps,))
    plain.start()
    model = train_cut(steps)
    plain.join()
    return model


MODEL: nn.Module | None = None


def main() -> None:
    scenario = sys.argv[1]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    torch.manual_seed(0)
    if scenario == "diagnose":
        global MODEL
        MODEL = scenario_diagnose(steps)  # alive when the script ends
        return
    if scenario == "one":
        out: object = scenario_one(steps)
    elif scenario == "two":
        out = scenario_two(steps)
    elif scenario in ("overlap", "raise"):
        out = overlapping(scenario == "raise", steps)
    else:
        raise SystemExit(f"unknown scenario {scenario!r}")
    print(json.dumps({"result": out, "lines": marked_lines()}), flush=True)


if __name__ in ("__main__", "__gradprobe_main__"):
    main()
