"""The backward that ``assert_grad_flows`` runs: old ``.grad`` set aside, and node hooks
that find where the first non-finite gradient appeared (tensors only; one sync after)."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any, final

import torch

from gradprobe._trace import live_nodes

__all__ = ["NonFiniteOrigins", "StashedGrads"]

Tensor = torch.Tensor


@final
class StashedGrads:
    """Set existing ``.grad`` values aside for one backward and add them back afterwards.

    The end state equals what a plain ``backward()`` leaves (AccumulateGrad adds in place
    into an existing ``.grad``), while in between ``.grad`` holds only the new gradient.
    """

    def __init__(self, tensors: list[Tensor]) -> None:
        self._tensors = [t for t in tensors if t.is_leaf and t.requires_grad]
        self._old: list[Tensor | None] = []

    def __enter__(self) -> StashedGrads:
        for tensor in self._tensors:
            self._old.append(tensor.grad)
            tensor.grad = None
        return self

    def __exit__(self, *exc: object) -> None:
        for tensor, old in zip(self._tensors, self._old, strict=True):
            if old is None:
                continue
            new = tensor.grad
            if new is not None:
                with torch.no_grad():
                    old.add_(new)
            tensor.grad = old
        self._old.clear()


@final
class NonFiniteOrigins:
    """Node post-hooks that flag, as tensors, which backward nodes turned finite incoming
    gradients into non-finite outgoing ones. Synced once, in :meth:`origins`."""

    def __init__(self, loss: Tensor, graph: Any) -> None:
        self._loss = loss
        self._graph = graph
        self._handles: list[Any] = []
        self._flags: list[tuple[int, Tensor, Tensor]] = []

    def __enter__(self) -> NonFiniteOrigins:
        # check() traced the graph first, so every node here already has a Python wrapper
        # held as NOTE [deep free] in _deepfree requires: this walk adds no hazard.
        collecting = gc.isenabled()
        gc.disable()
        nodes: list[Any] = []
        try:
            nodes = live_nodes([self._loss], len(self._graph.nodes))
            for index, node in enumerate(nodes):
                self._handles.append(node.register_hook(self._hook(index)))
        finally:
            if collecting:
                gc.enable()
            del nodes
        return self

    def _hook(self, index: int) -> Callable[[Any, Any], None]:
        flags = self._flags

        def hook(grad_inputs: Any, grad_outputs: Any) -> None:
            with torch.no_grad():
                incoming = total(grad_outputs)
                outgoing = total(grad_inputs)
                if incoming is not None and outgoing is not None:
                    flags.append((index, incoming, outgoing))

        return hook

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles.clear()

    def origins(self) -> list[str]:
        """Names of the nodes that produced non-finite gradients from finite ones."""
        if not self._flags:
            return []
        pairs = torch.stack(
            [torch.stack((torch.isfinite(i), torch.isfinite(o))) for _, i, o in self._flags]
        ).tolist()  # one host sync for the whole backward pass
        ids = sorted(
            index
            for (index, _, _), (finite_in, finite_out) in zip(self._flags, pairs, strict=True)
            if finite_in and not finite_out
        )
        self._flags.clear()
        return [self._graph.nodes[i].name for i in ids]


LOW_PRECISION = (torch.float16, torch.bfloat16)


def total(grads: Any) -> Tensor | None:
    """The sum of every element of ``grads``: NaN and inf propagate through addition, so
    it is non-finite exactly when some gradient is (barring an overflow of the sum itself,
    which only blurs which node gets named)."""
    total: Tensor | None = None
    for grad in grads:
        if not isinstance(grad, torch.Tensor):
            continue
        part = grad.sum(dtype=torch.float32) if grad.dtype in LOW_PRECISION else grad.sum()
        total = part if total is None else total + part
    return total
