"""Hypothesis strategies for small random autograd graphs.

A graph is drawn as a :class:`Program` (plain data, so hypothesis shrinks and prints it
readably) and built into tensors by :func:`build`. Every value in the program's pool is a
``(2, 2)`` float64 tensor, so any op can take any earlier value. The ops cover what makes
autograd graphs irregular: shared subexpressions, views (view/transpose/slice/expand),
in-place writes to non-leaf tensors and to views of them (``CopySlices``,
``AsStridedBackward0``), multi-output nodes (``unbind``, a two-output custom Function),
``detach`` islands, results computed under ``no_grad``, custom ``autograd.Function`` nodes,
nodes that save tensor lists (advanced indexing), nodes whose saved slots are all unneeded
(``addcmul``), tensors packed by ``saved_tensors_hooks``, and leaves that do not require
grad.

Use :func:`random_graphs` for built graphs, or :func:`programs` plus :func:`build` when a
test needs to build the same program twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from hypothesis import strategies as st

__all__ = [
    "OPS",
    "STALE_OPS",
    "Built",
    "Program",
    "Scale",
    "SumAndProduct",
    "build",
    "programs",
    "random_graphs",
]

N = 2  # every pooled value is (N, N)


class Scale(torch.autograd.Function):
    """A one-output custom Function that saves its input."""

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(a)
        return a * 3.0

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad * 3.0


class SumAndProduct(torch.autograd.Function):
    """A two-output custom Function: consumers reach its node with input_nr 0 and 1."""

    @staticmethod
    def forward(ctx: Any, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        ctx.save_for_backward(a, b)
        return a + b, a * b

    @staticmethod
    def backward(
        ctx: Any, grad_sum: torch.Tensor, grad_prod: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        a, b = ctx.saved_tensors
        return grad_sum + grad_prod * b, grad_sum + grad_prod * a


# op name -> (number of pool operands, number of values it adds to the pool)
OPS: dict[str, tuple[int, int]] = {
    "mul": (2, 1),
    "add": (2, 1),
    "matmul": (2, 1),
    "scale": (1, 1),  # x * 2.0: saves no tensor for self
    "view": (1, 1),  # reshape(4).view(2, 2): a view, or a copy when not contiguous
    "transpose": (1, 1),
    "slice_expand": (1, 1),  # x[:1].expand(2, 2)
    "unbind_stack": (1, 1),  # stack(reversed(x.unbind(0))): edges with input_nr 1 and 0
    "inplace": (2, 1),  # c = x.clone(); c.add_(y)
    "inplace_view": (2, 2),  # c = x.clone(); c[:1].mul_(y[:1]) -> CopySlices, AsStrided view
    "inplace_saved": (2, 2),  # c = x * 1; p = c * y; c.add_(1): p saved c at version 0
    "detach": (1, 1),  # no grad_fn
    "island": (1, 1),  # x.detach().requires_grad_(): a new leaf
    "no_grad": (2, 1),  # x * y under torch.no_grad()
    "custom": (1, 1),  # Scale.apply
    "custom2": (2, 2),  # SumAndProduct.apply: two outputs of one node
    "index": (1, 1),  # x[tensor([1, 0])]: IndexBackward0 saves a *list* of tensors
    "index_put": (2, 1),  # c = x.clone(); c[tensor([1])] = y[:1]: IndexPutBackward0
    "addcmul": (3, 1),  # saves neither factor when only `self` requires grad
    "packed": (2, 1),  # x * y under saved_tensors_hooks that pack (device, tensor)
}

STALE_OPS = frozenset({"inplace_saved"})
"""Ops after which backward() fails (a saved tensor was modified in place)."""


@dataclass(frozen=True)
class Program:
    """A recipe for a random graph: leaves, then ops over a growing pool, then outputs.

    ``requires_grad[i]`` says whether leaf ``i`` requires grad. Each step is
    ``(op, operand pool indices)``. ``outputs`` are pool indices (repeats allowed);
    ``nesting`` groups them into the arguments of ``trace``: ``0`` passes an output
    directly, ``1`` wraps it in a list, ``2`` in a tuple inside a list.
    """

    requires_grad: tuple[bool, ...]
    steps: tuple[tuple[str, tuple[int, ...]], ...]
    outputs: tuple[int, ...]
    nesting: tuple[int, ...]
    sum_outputs: tuple[bool, ...]

    def __repr__(self) -> str:
        lines = [f"leaves requires_grad={list(self.requires_grad)}"]
        pool = len(self.requires_grad)
        for op, operands in self.steps:
            made = OPS[op][1]
            targets = ", ".join(f"v{pool + i}" for i in range(made))
            lines.append(f"{targets} = {op}({', '.join(f'v{i}' for i in operands)})")
            pool += made
        lines.append(
            f"outputs={list(self.outputs)} nesting={list(self.nesting)} "
            f"sum={list(self.sum_outputs)}"
        )
        return "Program(\n  " + "\n  ".join(lines) + "\n)"


@dataclass
class Built:
    """A built program: what to pass to ``trace`` and the tensors behind it.

    ``args`` is the (possibly nested) argument tuple for ``trace(*args)``; ``outputs`` is
    the same tensors flattened in order. ``pool`` keeps every intermediate alive.
    """

    program: Program
    args: tuple[Any, ...]
    outputs: list[torch.Tensor]
    leaves: list[torch.Tensor]
    pool: list[torch.Tensor]

    def __repr__(self) -> str:
        return f"Built({self.program!r})"


def _leaf(index: int, requires_grad: bool) -> torch.Tensor:
    # Values are irrelevant to the graph's shape; keep them deterministic anyway.
    base = torch.arange(N * N, dtype=torch.float64).reshape(N, N)
    return (base / 10 + index + 1).requires_grad_(requires_grad)


def _pack(tensor: torch.Tensor) -> tuple[torch.device, torch.Tensor]:
    return (tensor.device, tensor)  # the shape of save_on_cpu's pack result


def _unpack(packed: tuple[torch.device, torch.Tensor]) -> torch.Tensor:
    return packed[1]


def _apply(op: str, xs: list[torch.Tensor]) -> list[torch.Tensor]:
    if op == "mul":
        return [xs[0] * xs[1]]
    if op == "add":
        return [xs[0] + xs[1]]
    if op == "matmul":
        return [xs[0] @ xs[1]]
    if op == "scale":
        return [xs[0] * 2.0]
    if op == "view":
        return [xs[0].reshape(N * N).view(N, N)]
    if op == "transpose":
        return [xs[0].t()]
    if op == "slice_expand":
        return [xs[0][:1].expand(N, N)]
    if op == "unbind_stack":
        rows = xs[0].unbind(0)
        return [torch.stack(rows[::-1])]
    if op == "inplace":
        # clone() first: in-place on a leaf that requires grad (or a view of one) is an error.
        out = xs[0].clone()
        out.add_(xs[1])
        return [out]
    if op == "inplace_view":
        base = xs[0].clone()
        view = base[:1]
        view.mul_(xs[1][:1])
        return [base, view.expand(N, N)]
    if op == "inplace_saved":
        value = xs[0] * 1.0
        product = value * xs[1]
        value.add_(1.0)
        return [value, product]
    if op == "detach":
        return [xs[0].detach()]
    if op == "island":
        return [xs[0].detach().requires_grad_()]
    if op == "no_grad":
        with torch.no_grad():
            return [xs[0] * xs[1]]
    if op == "custom":
        return [Scale.apply(xs[0])]
    if op == "custom2":
        return list(SumAndProduct.apply(xs[0], xs[1]))
    if op == "index":
        return [xs[0][torch.tensor([1, 0])]]
    if op == "index_put":
        out = xs[0].clone()
        out[torch.tensor([1])] = xs[1][:1]
        return [out]
    if op == "addcmul":
        return [torch.addcmul(xs[0], xs[1], xs[2])]
    if op == "packed":
        with torch.autograd.graph.saved_tensors_hooks(_pack, _unpack):
            return [xs[0] * xs[1]]
    msg = f"unknown op {op!r}"
    raise AssertionError(msg)


def build(program: Program) -> Built:
    """Run ``program``: make its leaves, apply its steps, collect its outputs."""
    leaves = [_leaf(i, flag) for i, flag in enumerate(program.requires_grad)]
    pool = list(leaves)
    for op, operands in program.steps:
        made = _apply(op, [pool[i] for i in operands])
        assert len(made) == OPS[op][1], op
        pool.extend(made)
    outputs = [
        pool[i].sum() if summed else pool[i]
        for i, summed in zip(program.outputs, program.sum_outputs, strict=True)
    ]
    args: list[Any] = []
    for tensor, nest in zip(outputs, program.nesting, strict=True):
        if nest == 0:
            args.append(tensor)
        elif nest == 1:
            args.append([tensor])
        else:
            args.append([(tensor,)])
    return Built(program=program, args=tuple(args), outputs=outputs, leaves=leaves, pool=pool)


@st.composite
def programs(
    draw: st.DrawFn,
    *,
    max_leaves: int = 4,
    max_steps: int = 12,
    max_outputs: int = 3,
    exclude: frozenset[str] = frozenset(),
) -> Program:
    """Random :class:`Program` values (see the module docstring for what they cover).

    ``exclude`` names ops of :data:`OPS` not to use.
    """
    ops = sorted(set(OPS) - exclude)
    # Leaf 0 requires grad, or most graphs would be empty; the others are random.
    requires_grad = (True, *draw(st.lists(st.booleans(), max_size=max_leaves - 1)))
    pool = len(requires_grad)
    steps: list[tuple[str, tuple[int, ...]]] = []
    for _ in range(draw(st.integers(1, max_steps))):
        op = draw(st.sampled_from(ops))
        arity, made = OPS[op]
        # Prefer recent values so graphs get deep rather than wide.
        operands = tuple(
            draw(st.integers(0, pool - 1).map(lambda i, p=pool: p - 1 - i)) for _ in range(arity)
        )
        steps.append((op, operands))
        pool += made
    count = draw(st.integers(1, max_outputs))
    outputs = tuple(
        draw(st.integers(0, pool - 1).map(lambda i: pool - 1 - i)) for _ in range(count)
    )
    nesting = tuple(draw(st.integers(0, 2)) for _ in range(count))
    sum_outputs = tuple(draw(st.booleans()) for _ in range(count))
    return Program(requires_grad, tuple(steps), outputs, nesting, sum_outputs)


def random_graphs(**kwargs: Any) -> st.SearchStrategy[Built]:
    """Built random graphs: ``Built.args`` goes to ``trace``, ``Built.leaves`` are the leaves
    (``Built.outputs`` the same tensors flattened). Takes the options of :func:`programs`."""
    return programs(**kwargs).map(build)
