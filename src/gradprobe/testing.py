"""Autograd assertions for test suites, whose failures say *why*, not only *that*.

Usable with any test runner (no pytest import). Each ``assert_*`` returns ``None`` when the
property holds and raises :class:`GradprobeAssertionError` (an ``AssertionError`` and a
:class:`~gradprobe.errors.GradprobeError`) when it does not. The error carries the
:class:`~gradprobe.findings.Finding` s behind it in ``.findings`` and a plain-text message
that reads well without pytest's assertion rewriting: one line per failing parameter or
tensor with the reason, then what to change.

Example:
    >>> import torch
    >>> from gradprobe.testing import assert_grad_flows
    >>> layer = torch.nn.Linear(3, 2)
    >>> assert_grad_flows(layer, layer(torch.ones(1, 3)).sum())

When a :func:`gradprobe.record` recording is active, its findings (which carry the line that
cut the graph or produced the NaN) are attached to the failures they explain.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import torch
from torch.autograd.gradcheck import GradcheckError

from gradprobe import _testing_recorder
from gradprobe._check import check
from gradprobe._explain import explain
from gradprobe._testing_args import (
    check_atol,
    check_loss,
    check_names,
    check_tensor,
    grad_readable,
    named_any,
    named_tensors,
    select,
)
from gradprobe._testing_codes import LEAF_HINTS, compose, finding, indent, nonleaf_message, where
from gradprobe._testing_flow import Context, grad_problems, problem_line
from gradprobe._testing_gradcheck import Culprit, find_culprits, function_of
from gradprobe._testing_grads import NonFiniteOrigins, StashedGrads
from gradprobe.errors import (
    GradprobeAssertionError,
    GradprobeTypeError,
    GradprobeValueError,
    describe,
    error_text,
)
from gradprobe.findings import Finding
from gradprobe.leaves import leaf_report

__all__ = [
    "GradprobeAssertionError",
    "assert_grad_flows",
    "assert_gradcheck",
    "assert_grads_finite",
    "assert_hook_order",
    "assert_is_leaf",
    "assert_no_inplace_conflicts",
    "assert_not_leaf",
]

Tensor = torch.Tensor
_INPLACE_CODES = frozenset(("GP101", "GP102", "GP108", "GP109"))
_NAN_CODES = frozenset(("GP201", "GP202"))


# -- assert_grad_flows ------------------------------------------------------------------------


def assert_grad_flows(
    model: torch.nn.Module | Mapping[str, torch.Tensor],
    loss: torch.Tensor | None = None,
    *,
    params: Iterable[str | torch.Tensor] | None = None,
    atol: float = 0.0,
) -> None:
    """Assert that every selected parameter receives a finite gradient that is not all zero.

    With ``loss``, runs ``loss.backward()`` and checks the gradients *this* backward
    produced: ``.grad`` values already present are set aside first and added back after,
    so the end state is what a plain ``loss.backward()`` would leave. With ``loss=None``,
    checks the ``.grad`` already there.

    A parameter fails when it is frozen (``requires_grad=False``), gets no ``.grad``
    (unused in forward, or cut from the loss by ``.detach()``, ``.data``, ``torch.no_grad()``
    or an integer op), has NaN or infinite gradient values (with ``loss``, the failure
    names the first backward node that turned finite gradients into non-finite ones), or a
    gradient that is zero everywhere (``|grad| <= atol``).

    Some parameters legitimately get a ~0 gradient: a convolution or linear bias directly
    followed by BatchNorm (which subtracts the batch mean, so the bias cancels out) gets
    rounding noise of order 1e-8. With the default ``atol=0.0`` only exact zeros fail;
    with a positive ``atol`` leave such biases out with ``params=`` (or build the layer
    with ``bias=False``).

    Args:
        model: an ``nn.Module`` (its named parameters) or a ``{name: tensor}`` mapping.
        loss: a scalar tensor to call ``backward()`` on, or None to check existing grads.
        params: which parameters to check (default: all): names, glob patterns such as
            ``"encoder.*"``, or the tensors themselves.
        atol: a gradient with every ``|value| <= atol`` counts as zero.

    Raises:
        GradprobeAssertionError: some selected parameter failed; the message names each
            one and why, ``.findings`` holds GP107 (no gradient), GP120 (zero gradient),
            GP202 (NaN/inf gradient) findings with the parameter name.
        GradprobeTypeError, GradprobeValueError: unusable arguments.

    Example:
        >>> import torch
        >>> from gradprobe.testing import assert_grad_flows
        >>> net = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 1))
        >>> out = net[1](net[0](torch.ones(2, 4)).detach())
        >>> try:
        ...     assert_grad_flows(net, out.sum())
        ... except AssertionError as error:
        ...     print(sorted(f.parameter for f in error.findings))
        ['0.bias', '0.weight']
    """
    __tracebackhide__ = True  # pytest: show the test's line, not ours
    named = named_tensors(model, "assert_grad_flows")
    selected = select(named, params)
    tolerance = check_atol(atol)
    if loss is not None:
        check_loss(loss)
    model_arg = model if isinstance(model, torch.nn.Module) else None
    names_arg = dict(named) if model_arg is None else None
    graph = None
    origins: list[str] = []
    loss_finite: Tensor | None = None
    if loss is not None:
        with _testing_recorder.quiet():
            report = check(loss, model=model_arg, names=names_arg)
        if not report.ok:
            lines = [f"  ✗ {f.code} {f.kind}: {f.message}" for f in report.findings]
            message = compose(
                "assert_grad_flows: backward() from the loss would fail, so no parameter "
                "gets a gradient:",
                lines,
                report.findings,
            )
            raise GradprobeAssertionError(message, report.findings)
        graph = report.graph
    with contextlib.ExitStack() as stack:
        if loss is not None and graph is not None:
            # Judge the gradient of this backward alone; the old .grad comes back on exit.
            stack.enter_context(StashedGrads([t for _, t in selected]))
            with NonFiniteOrigins(loss, graph) as probe, explain():
                loss.backward()  # type: ignore[no-untyped-call]
            with _testing_recorder.quiet():
                loss_finite = torch.isfinite(loss.detach()).all()
            origins = probe.origins()
        sources: list[Any] = [model_arg if model_arg is not None else names_arg]
        if graph is not None:
            sources.insert(0, graph)
        with _testing_recorder.quiet():
            rows = {row.name: row for row in leaf_report(*sources).rows}
            context = Context(
                traced=graph is not None,
                atol=tolerance,
                origins=origins,
                recorded=_testing_recorder.active_findings(),
                unused=(
                    _testing_recorder.unused_modules(model_arg) if model_arg is not None else None
                ),
                cuts=_testing_recorder.cut_locations(),
            )
            problems = grad_problems(selected, rows, context)
            loss_bad = loss_finite is not None and not bool(loss_finite)
    if not problems:
        return
    lines = [problem_line(problem) for problem in problems]
    found = [f for problem in problems for f in problem.findings]
    if any(problem.nonfinite for problem in problems):
        for item in context.recorded:
            if item.code in _NAN_CODES:
                lines.append(f"  note (recorded): {item.message}")
                lines.extend(f"      {loc.role} at {where(loc)}" for loc in item.locations)
                found.append(item)
        if loss_bad and not any(f.code == "GP201" for f in context.recorded):
            lines.append(
                "  note: the loss itself is NaN or infinite: the forward pass produced it "
                "(GP201); run the test under gradprobe.record() to get the line."
            )
    ok = len(selected) - len(problems)
    if ok:
        lines.append(f"  ✓ {ok} other{'s' if ok != 1 else ''}: finite, non-zero gradient")
    title = (
        f"assert_grad_flows: {len(problems)} of {len(selected)} parameter"
        f"{'s' if len(selected) != 1 else ''} "
        f"{'get' if len(problems) != 1 else 'gets'} no usable gradient:"
    )
    raise GradprobeAssertionError(compose(title, lines, found), found)


# -- other assertions ---------------------------------------------------------------------


def assert_grads_finite(
    model_or_tensors: torch.nn.Module
    | torch.Tensor
    | Sequence[torch.Tensor]
    | Mapping[str, torch.Tensor],
) -> None:
    """Assert that every ``.grad`` present is free of NaN and infinity.

    Tensors without a ``.grad`` are skipped, but at least one must have one (a check of
    nothing would hide a missing ``backward()``).

    Args:
        model_or_tensors: an ``nn.Module`` (its parameters), a tensor, a sequence of
            tensors, or a ``{name: tensor}`` mapping.

    Raises:
        GradprobeAssertionError: some gradient has NaN/inf values (GP202 findings, one per
            tensor, with the counts), or no tensor has a ``.grad``.

    Example:
        >>> import torch
        >>> from gradprobe.testing import assert_grads_finite
        >>> w = torch.ones(3, requires_grad=True)
        >>> (w * 2).sum().backward()
        >>> assert_grads_finite(w)
    """
    __tracebackhide__ = True  # pytest: show the test's line, not ours
    named = named_any(model_or_tensors)
    with _testing_recorder.quiet():
        present = [(name, t.grad) for name, t in named if grad_readable(t) and t.grad is not None]
        if not present:
            message = (
                f"assert_grads_finite: none of the {len(named)} tensor"
                f"{'s' if len(named) != 1 else ''} has a .grad, so there is nothing to check. "
                "Call backward() first, or check that the loss reaches them "
                "(assert_grad_flows says why a .grad is missing)."
            )
            raise GradprobeAssertionError(message)
        with torch.no_grad():
            # max |g| is NaN or inf exactly when g has such a value: one cheap pass each,
            # then the counts for the few gradients that need them.
            finite = torch.stack(
                [torch.isfinite(g.abs().amax()) for _, g in present if g is not None and g.numel()]
                or [torch.tensor(True)]
            )
            if bool(finite.all()):  # one host sync
                return
            counts = torch.stack(
                [
                    torch.stack((g.isnan().sum(), g.isposinf().sum(), g.isneginf().sum()))
                    for _, g in present
                    if g is not None
                ]
            ).tolist()  # and one more to count, only when something is wrong
        recorded = [f for f in _testing_recorder.active_findings() if f.code in _NAN_CODES]
    lines: list[str] = []
    found: list[Finding] = []
    for (name, grad), (nan, posinf, neginf) in zip(present, counts, strict=True):
        if not (nan or posinf or neginf) or grad is None:
            continue
        parts = [
            f"{count} {label}"
            for count, label in ((nan, "NaN"), (posinf, "+inf"), (neginf, "-inf"))
            if count
        ]
        what = f"{', '.join(parts)} of {grad.numel()} values"
        lines.append(f"  ✗ {name}: {what}")
        found.append(
            finding(
                "GP202",
                message=f"The gradient of {name!r} has {what}.",
                parameter=name,
                details={"nan": nan, "posinf": posinf, "neginf": neginf, "numel": grad.numel()},
            )
        )
    if not found:
        return
    for item in recorded:
        lines.append(f"  recorded: {item.code} {item.message}")
        lines.extend(f"      {loc.role} at {where(loc)}" for loc in item.locations)
    title = (
        f"assert_grads_finite: {len(found)} of {len(present)} gradient"
        f"{'s' if len(present) != 1 else ''} {'have' if len(found) != 1 else 'has'} "
        "NaN or infinite values:"
    )
    everything = [*found, *recorded]
    raise GradprobeAssertionError(compose(title, lines, everything), everything)


def assert_is_leaf(tensor: torch.Tensor, name: str = "tensor") -> None:
    """Assert that ``tensor`` is a leaf, so ``backward()`` fills its ``.grad``.

    The classic failure is a ``.to()``, ``.cuda()`` or ``.float()`` after
    ``requires_grad=True``: the name then holds a copy (``ToCopyBackward0``), and the
    gradient goes to the hidden original.

    Raises:
        GradprobeAssertionError: with a GP106 finding naming the ``grad_fn``.

    Example:
        >>> import torch
        >>> from gradprobe.testing import assert_is_leaf
        >>> assert_is_leaf(torch.zeros(2, requires_grad=True), "w")
    """
    __tracebackhide__ = True  # pytest: show the test's line, not ours
    check_tensor(tensor, "assert_is_leaf")
    if tensor.is_leaf:
        return
    node = tensor.grad_fn.name() if tensor.grad_fn is not None else "?"
    hint = LEAF_HINTS.get(
        node,
        "Make a leaf with t = t.detach().requires_grad_(), or read the .grad of the leaf it "
        "was computed from.",
    )
    item = finding("GP106", message=nonleaf_message(name, node), tensor=name, hint=hint)
    message = compose(
        f"assert_is_leaf: {name} is not a leaf: it was produced by {node}, so backward() "
        f"will not fill {name}.grad.",
        [],
        [item],
    )
    raise GradprobeAssertionError(message, [item])


def assert_not_leaf(tensor: torch.Tensor, name: str = "tensor") -> None:
    """Assert that ``tensor`` is the result of a differentiable operation (has a ``grad_fn``).

    Raises:
        GradprobeAssertionError: the tensor is a leaf; the message says whether it does not
            require grad (computed under ``no_grad``, detached, or from constants) or is a
            leaf that requires grad.

    Example:
        >>> import torch
        >>> from gradprobe.testing import assert_not_leaf
        >>> w = torch.ones(2, requires_grad=True)
        >>> assert_not_leaf(w * 2, "y")
    """
    __tracebackhide__ = True  # pytest: show the test's line, not ours
    check_tensor(tensor, "assert_not_leaf")
    if not tensor.is_leaf:
        return
    if tensor.requires_grad:
        why = (
            "it requires grad but has no grad_fn: it was created directly (a parameter or an "
            "input made with requires_grad=True), not computed"
        )
    else:
        why = (
            "it does not require grad: it was computed under torch.no_grad() or "
            "inference_mode, with .detach()/.data/.item(), or only from tensors that do not "
            "require grad"
        )
    raise GradprobeAssertionError(f"assert_not_leaf: {name} is a leaf: {why}.")


def assert_no_inplace_conflicts(
    loss: torch.Tensor,
    *,
    model: torch.nn.Module | None = None,
    names: Mapping[str, torch.Tensor] | None = None,
) -> None:
    """Assert that no tensor saved for ``loss``'s backward was modified in place.

    Built on :func:`gradprobe.check`: nothing runs backward. Only in-place findings
    (GP101, GP109, and GP108 under a recording) fail; a graph that is already freed or a loss without ``grad_fn`` are
    other problems and pass here.

    Args:
        loss: what you would call ``backward()`` on.
        model, names: name parameters and tensors in the findings.

    Raises:
        GradprobeAssertionError: with :func:`gradprobe.check`'s findings (node, slot,
            versions, parameter); inside :func:`gradprobe.record` also the line that wrote
            (role ``cause``), and GP108 for writes through ``.data`` that bypassed the
            version counter (backward would not fail, but compute a wrong gradient).

    Example:
        >>> import torch
        >>> from gradprobe.testing import assert_no_inplace_conflicts
        >>> x = torch.ones(3, requires_grad=True)
        >>> assert_no_inplace_conflicts((x.exp() * 2).sum())
    """
    __tracebackhide__ = True  # pytest: show the test's line, not ours
    with _testing_recorder.quiet():
        report = check(loss, model=model, names=names)
    # Inside a recording check() already joins the lines that wrote (role "cause").
    found = [f for f in report.findings if f.code in _INPLACE_CODES]
    # GP108: a write that bypassed the version counter; only a recording sees those.
    found.extend(_testing_recorder.silent_writes([loss]))
    if not found:
        return
    lines: list[str] = []
    for item in found:
        lines.append(f"  ✗ {item.code} {item.kind}: {item.message}")
        lines.extend(f"      {loc.role} at {where(loc)}" for loc in item.locations)
    title = (
        f"assert_no_inplace_conflicts: {len(found)} tensor"
        f"{'s' if len(found) != 1 else ''} saved for backward "
        f"{'were' if len(found) != 1 else 'was'} modified in place:"
    )
    raise GradprobeAssertionError(compose(title, lines, found), found)


def assert_hook_order(
    fn: Callable[[], object],
    expected: Sequence[str],
    *,
    model: torch.nn.Module | None = None,
) -> None:
    """Run ``fn`` and assert that the hooks it triggers fire in the ``expected`` order.

    The firing order comes from :func:`gradprobe.hooks.timeline`, so hooks registered
    before ``fn`` runs (on modules, tensors, autograd nodes, globally) count as well as those
    ``fn`` registers. A hook is named as the timeline names it (``step.on_grad`` for a
    function defined in ``step``, ``Net.hook`` for a bound method, ``<lambda>`` for a
    lambda, so give the hooks you assert on a name); ``expected`` may use that full name or
    any tail of it (``on_grad``). Only the names listed in ``expected`` are compared, so other
    hooks may fire in between; a name appears once per firing.

    Args:
        fn: runs a forward and backward pass (and may register hooks itself).
        expected: hook names in the order they must fire.
        model: optional; names modules in the failure message by their paths.

    Raises:
        GradprobeAssertionError: the order differs; the message shows both orders and every
            hook call with its kind, target and definition line.

    Example:
        >>> import torch
        >>> from gradprobe.testing import assert_hook_order
        >>> def step():
        ...     x = torch.ones(2, requires_grad=True)
        ...     y = x * 2
        ...     def on_y(grad): return None
        ...     def on_x(grad): return None
        ...     x.register_hook(on_x)
        ...     y.register_hook(on_y)
        ...     y.sum().backward()
        >>> assert_hook_order(step, ["on_y", "on_x"])
    """
    __tracebackhide__ = True  # pytest: show the test's line, not ours
    given: object = fn  # users pass anything; the check is real
    if not callable(given):
        msg = (
            f"assert_hook_order() needs a function to run, got {describe(fn)}; pass e.g. "
            "lambda: model(x).sum().backward()."
        )
        raise GradprobeTypeError(msg)
    wanted = check_names(expected)
    events = list(_timeline()(fn, model=model))
    seen = [name for name in (_match(event.hook, wanted) for event in events) if name]
    if seen == wanted:
        return
    lines = [
        f"  expected: {' → '.join(wanted) or '(nothing)'}",
        f"  fired:    {' → '.join(seen) or '(none of them)'}",
    ]
    missing = [name for name in dict.fromkeys(wanted) if name not in seen]
    if missing:
        lines.append(f"  never fired: {', '.join(missing)}")
    if events:
        lines.append("  every hook call, in order (index, phase, kind, target: hook):")
        lines.extend(f"    {event}" for event in events)
    else:
        lines.append("  no hook fired at all while fn ran.")
    raise GradprobeAssertionError(
        "assert_hook_order: the hooks fired in a different order than expected:\n"
        + "\n".join(lines)
    )


def _match(hook: str, wanted: Sequence[str]) -> str | None:
    """The expected name a fired hook answers to: its full name (``test.step.on_grad``),
    else the longest expected name that ends it at a dot (``step.on_grad``, ``on_grad``)."""
    if hook in wanted:
        return hook
    endings = [name for name in wanted if hook.endswith("." + name)]
    return max(endings, key=len) if endings else None


def _timeline() -> Callable[..., Iterable[Any]]:
    from gradprobe.hooks import timeline

    return timeline


def assert_gradcheck(
    fn: Callable[..., Any],
    inputs: torch.Tensor | Sequence[Any],
    *,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    fast_mode: bool = False,
) -> None:
    """:func:`torch.autograd.gradcheck` that names the custom backward at fault.

    Runs ``gradcheck(fn, inputs)``. When the analytical and numerical Jacobians disagree,
    it finds which custom ``torch.autograd.Function`` (checked alone, on the inputs it got)
    or which backward hook (a tensor hook registered while ``fn`` runs, a hook on an
    input, or a module backward hook when ``fn`` is a module) is responsible: gradcheck
    passes once that hook is left out.

    Use float64 inputs with ``requires_grad=True``, as gradcheck itself requires.

    Args:
        fn: the function under test; it must return a tensor or a tuple of tensors.
        inputs: a tensor or a tuple of inputs.
        eps, atol, rtol, fast_mode: passed to ``gradcheck``.

    Raises:
        GradprobeAssertionError: the Jacobians disagree; GP121 findings name each culprit
            with the line of its backward (role ``cause``) and where it was applied or
            registered.

    Example:
        >>> import torch
        >>> from gradprobe.testing import assert_gradcheck
        >>> x = torch.rand(3, dtype=torch.float64, requires_grad=True)
        >>> assert_gradcheck(torch.sin, (x,))
    """
    __tracebackhide__ = True  # pytest: show the test's line, not ours
    given: object = fn  # users pass anything; the check is real
    if not callable(given):
        msg = f"assert_gradcheck() needs a function, got {describe(fn)}."
        raise GradprobeTypeError(msg)
    if isinstance(inputs, torch.Tensor):
        args: tuple[Any, ...] = (inputs,)
    elif isinstance(inputs, (tuple, list)):
        args = tuple(inputs)
    else:
        msg = (
            f"assert_gradcheck(fn, inputs) takes a tensor or a tuple of inputs, got "
            f"{describe(inputs)}; e.g. (torch.rand(3, dtype=torch.float64, "
            "requires_grad=True),)."
        )
        raise GradprobeTypeError(msg)
    for index, arg in enumerate(args):
        if isinstance(arg, torch.Tensor) and (arg.is_meta or arg.layout != torch.strided):
            kind = "on the meta device, with no values" if arg.is_meta else f"a {arg.layout} tensor"
            msg = (
                f"assert_gradcheck() compares gradients with finite differences of real "
                f"values, but input {index} (shape {tuple(arg.shape)}) is {kind}. Pass a "
                "dense float64 tensor with values (x.to_dense(), or real data on the CPU)."
            )
            raise GradprobeValueError(msg)
    if not any(isinstance(a, torch.Tensor) and a.requires_grad for a in args):
        msg = (
            "assert_gradcheck() needs at least one input tensor with requires_grad=True, "
            f"got {describe(inputs)}; e.g. torch.rand(3, dtype=torch.float64, "
            "requires_grad=True)."
        )
        raise GradprobeValueError(msg)
    options = {"eps": eps, "atol": atol, "rtol": rtol, "fast_mode": fast_mode}
    try:
        torch.autograd.gradcheck(_tensor_outputs(fn), args, raise_exception=True, **options)  # type: ignore[arg-type]
    except GradcheckError as error:
        original = error_text(error).strip()
    else:
        return
    culprits = find_culprits(fn, args, options)
    raise _gradcheck_failure(fn, original, culprits)


def _tensor_outputs(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, refusing outputs gradcheck cannot read (a dict, None) with a GradprobeError
    instead of an AttributeError from inside gradcheck."""

    def checked(*args: Any) -> Any:
        out = fn(*args)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        if not outs or not all(isinstance(o, torch.Tensor) for o in outs):
            keys = f" with keys {sorted(map(str, out))}" if isinstance(out, dict) else ""
            msg = (
                f"assert_gradcheck(fn): fn must return a tensor or a tuple of tensors, "
                f"returned {describe(out)}{keys}. Wrap it to return the tensors to check, "
                "e.g. lambda x: fn(x)['loss']."
            )
            raise GradprobeTypeError(msg)
        return out

    return checked


def _gradcheck_failure(
    fn: object, original: str, culprits: list[Culprit]
) -> GradprobeAssertionError:
    cls = function_of(fn)
    label = getattr(fn, "__qualname__", None) or type(fn).__name__
    if cls is not None:
        label = f"{cls.__qualname__}.apply"
    label = label.replace("<locals>.", "")
    lines: list[str] = []
    found: list[Finding] = []
    for culprit in culprits:
        lines.append(f"  ✗ {culprit.what}: {culprit.why}")
        lines.extend(f"      {loc.role} at {where(loc)}" for loc in culprit.locations)
        found.append(
            finding(
                "GP121",
                message=f"{culprit.what}: {culprit.why}.",
                node=culprit.node,
                locations=culprit.locations,
                details={"kind": culprit.kind, "mismatch": culprit.mismatch},
            )
        )
    if not culprits:
        lines.append(
            "  no custom autograd.Function or backward hook is involved (or each passes "
            "alone): the mismatch comes from built-in operations, typically at a point "
            "where they are not differentiable (relu/abs/max at a tie), from float32 "
            "inputs, or from an eps too large for the function's curvature."
        )
    first = original.splitlines()[0].rstrip(",") if original else "Jacobian mismatch"
    title = (
        f"assert_gradcheck: the backward of {label} disagrees with finite differences ({first}):"
    )
    message = compose(title, lines, found) + "\n\ngradcheck reported:\n" + indent(original)
    return GradprobeAssertionError(message, found)
