"""Modes: train/eval, dropout's training flag, inference_mode."""

from __future__ import annotations

import ast
import inspect
import re
import weakref
from collections.abc import Iterable, Sequence

import torch

from gradprobe._recorder import (
    Events,
    SourceLine,
)
from gradprobe.checks._api import Check, Run, register
from gradprobe.checks._common import (
    _locations,
    _top_modules,
    _where,
    backpropagated,
    left_set_by,
    location,
)
from gradprobe.findings import Finding, LocationRole, make_finding

__all__ = ["EvalFreeze", "EvalModeTraining", "FunctionalDropout", "InferenceTensors"]


@register
class EvalWithGradients(Check):
    """A model called again and again in eval mode with gradients on, whose graphs no
    backward() used (GP147)."""

    name = "gradprobe.modes.eval_with_gradients"
    codes = ("GP147",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        events = run.events
        for line, (count, eval_line, keys) in events.eval_graphs.items():
            if count < 3 or line is None:
                continue
            if any(backpropagated(events, key, -1) for key in keys):
                continue
            return (
                make_finding(
                    "GP147",
                    message=(
                        f"The model was called {count} times at {_where(line)} in eval mode "
                        "with gradients on, and no backward() used any of those graphs: "
                        + (f"model.eval() at {_where(eval_line)} " if eval_line else "eval() ")
                        + "changes dropout and batch norm, it does not turn gradients off, so "
                        "each call recorded a graph with its activations. Wrap the loop in "
                        "`with torch.no_grad():`."
                    ),
                    locations=_locations((line, "cause"), (eval_line, "read")),
                    details={"calls": count},
                ),
            )
        return ()


@register
class EvalFreeze(Check):
    """``eval()`` used to freeze a part that an optimizer still updates (GP111)."""

    name = "gradprobe.modes.eval_freeze"
    codes = ("GP111",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return eval_freezes(run.events, list(run.modules))


@register
class EvalModeTraining(Check):
    """Training continued in eval mode after a validation pass (GP131)."""

    name = "gradprobe.modes.eval_mode_training"
    codes = ("GP131",)
    reads_modules = True

    def conclude(self, run: Run) -> Iterable[Finding]:
        return eval_mode_training(run.events, list(run.modules))


@register
class FunctionalDropout(Check):
    """``F.dropout`` left at ``training=True`` inside a module in eval mode (GP132)."""

    name = "gradprobe.modes.functional_dropout"
    codes = ("GP132",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return eval_dropouts(run.events)


@register
class InferenceTensors(Check):
    """A tensor made under ``inference_mode`` used where autograd must save it (GP114)."""

    name = "gradprobe.modes.inference_tensors"
    codes = ("GP114",)

    def conclude(self, run: Run) -> Iterable[Finding]:
        return _inference_uses(run.events)


# -- analyses ---------------------------------------------------------------------------


def _inference_uses(events: Events) -> list[Finding]:
    if not events.inference_uses:
        return []
    line, idents, origin = events.inference_uses[0]
    cuts = [events.cuts[i] for i in idents if i in events.cuts]
    block = next((cut.context for cut in cuts if cut.context is not None), None)
    made = cuts[0].line if cuts else None
    if origin is not None:  # made from scratch inside a recorded inference_mode block
        block = block or origin.block
        made = made or origin.made
    return [
        make_finding(
            "GP114",
            message=(
                f"The operation at {_where(line)} was given a tensor made under "
                "torch.inference_mode()"
                + (f" (the block at {_where(block)}" if block else "")
                + (f", computed at {_where(made)})" if block and made else ")" if block else "")
                + ". Inference tensors can never be saved for backward. Use torch.no_grad() "
                "there instead, or .clone() the tensor after the block."
            ),
            locations=_locations(
                (block or made or line, "cause"), (made, "created"), (line, "error")
            ),
        )
    ]


_READS_TRAINING = re.compile(r"\.training\b")


# weakly: a class defined inside a test or a function must not live on in this cache
_verdicts: weakref.WeakKeyDictionary[type, bool] = weakref.WeakKeyDictionary()


def reads_training(module: torch.nn.Module) -> bool:
    """Whether ``module`` (not its children) behaves differently in train and eval mode.

    True when its class or a base below ``nn.Module`` reads ``.training``, unless it is a
    dropout whose probability is zero; also True when the source cannot be read.
    """
    verdict = _verdicts.get(type(module))
    if verdict is None:
        verdict = _verdicts[type(module)] = _class_reads_training(type(module))
    if not verdict:
        return False
    # Layers whose only use of the flag is dropout, with dropout switched off.
    rate = getattr(module, "p", None)
    if isinstance(module, torch.nn.modules.dropout._DropoutNd) and rate == 0:
        return False
    if isinstance(module, torch.nn.RNNBase | torch.nn.MultiheadAttention):
        return getattr(module, "dropout", 1) != 0
    return True


def _class_reads_training(cls: type) -> bool:
    for base in cls.__mro__:
        if base is torch.nn.Module or not issubclass(base, torch.nn.Module):
            continue
        try:
            source = inspect.getsource(base)
        except (OSError, TypeError):
            return True  # cannot tell: assume it does
        if _READS_TRAINING.search(source):
            return True
    return False


def eval_freezes(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    """GP111 for parts of a model the user called ``eval()`` on, that have no layer reading
    the flag, and whose parameters an optimizer then updated."""
    if not events.eval_trained:
        return []
    found: list[Finding] = []
    for top in _top_modules(modules):
        named = {id(m): (name, m) for name, m in top.named_modules() if name}
        for ident, line in events.eval_trained.items():
            if ident not in named:
                continue  # the whole model (a validation pass), or not in this one
            name, part = named[ident]
            if any(reads_training(m) for m in part.modules()):
                continue  # BatchNorm statistics or dropout: eval() does something here
            params = [f"{name}.{n}" for n, p in part.named_parameters() if p.requires_grad]
            if not params:
                continue
            found.append(_finding(name, type(part).__name__, line, params))
            if len(found) >= 3:
                return found
    return found


def _finding(name: str, kind: str, line: SourceLine | None, params: list[str]) -> Finding:
    shown = ", ".join(params[:3]) + (f" and {len(params) - 3} more" if len(params) > 3 else "")
    where = f"line {line[1]}" if line else "an unknown line"
    cause = location(line, "cause")
    expr, call = _call_at(cause.text if cause else None) or (name, "eval()")
    return make_finding(
        "GP111",
        message=(
            f"{expr}.{call} at {where} does not freeze the {kind} {name!r}: {call} only "
            "switches layers such as Dropout and BatchNorm to inference behaviour, and it "
            "has none, so the call changed nothing. Its parameters "
            f"({shown}) still received gradients and the optimizer updated them. To freeze "
            f"it: {expr}.requires_grad_(False), and leave its parameters out of the optimizer."
        ),
        module=kind,
        parameter=params[0],
        locations=[cause] if cause else [],
        details={"module": name, "parameters": params},
    )


def _call_at(text: str | None) -> tuple[str, str] | None:
    """``("model.encoder", "eval()")`` for a line ``model.encoder.eval()``: how the user
    names the module, to quote their own words back."""
    if not text:
        return None
    try:
        tree = ast.parse(text.rstrip(":"), mode="exec")
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("eval", "train")
        ):
            call = "eval()" if node.func.attr == "eval" else "train(False)"
            return ast.unparse(node.func.value), call
    return None


def eval_mode_training(events: Events, modules: Sequence[torch.nn.Module]) -> list[Finding]:
    """GP131 for a whole model switched to eval() after training, then stepped again while
    still in eval mode, when it has layers that behave differently in eval mode."""
    found: list[Finding] = []
    for top in _top_modules(modules):
        if id(top) not in events.eval_mode_steps:
            continue
        changed = sorted({type(m).__name__ for m in top.modules() if reads_training(m)})
        if not changed:
            continue  # no Dropout or BatchNorm: eval mode changes nothing
        stepped = events.eval_mode_steps[id(top)]
        if left_set_by(stepped.eval_stack, stepped.step_stack) is not None:
            continue  # a helper left the model in eval mode: GP174 (checks/switches.py)
        eval_line, train_line = stepped.eval_line, stepped.train_line
        kind = type(top).__name__
        message = (
            f"The {kind} was switched to eval mode at {_where(eval_line)} after it had "
            "trained, and the optimizer kept updating it without model.train() in between: "
            f"from then on its {', '.join(changed[:4])} layers run as at inference (Dropout "
            "off; BatchNorm using, and no longer updating, its running statistics) while it "
            "trains."
        )
        if train_line is not None:
            message += (
                f" model.train() at {_where(train_line)} did not run again after that "
                "eval(): call it at the start of every epoch (move it into the loop)."
            )
            pairs: list[tuple[SourceLine | None, LocationRole]] = [
                (train_line, "cause"),
                (eval_line, "read"),
            ]
        else:
            message += " Call model.train() at the start of each epoch."
            pairs = [(eval_line, "cause")]
        locations = [loc for line, role in pairs if (loc := location(line, role)) is not None]
        found.append(
            make_finding(
                "GP131",
                message=message,
                module=kind,
                locations=locations,
                details={"layers": changed},
            )
        )
    return found


def eval_dropouts(events: Events) -> list[Finding]:
    """GP132 for functional dropouts left at ``training=True`` that ran in eval mode."""
    found: list[Finding] = []
    for line, kind in list(events.eval_dropouts.items())[:3]:
        cause = location(line, "cause")
        found.append(
            make_finding(
                "GP132",
                message=(
                    f"The dropout call at {_where(line)}, in {kind}.forward, ran while the "
                    f"{kind} was in eval mode and still dropped units: functional dropout "
                    "takes training=True unless told otherwise, so model.eval() does not "
                    "turn it off and evaluation is random. Pass training=self.training, or "
                    "use an nn.Dropout layer."
                ),
                module=kind,
                locations=[cause] if cause else [],
            )
        )
    return found
