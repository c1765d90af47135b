"""Which nodes trace() holds on deep graphs: every free cascade must stay within one band.

A run of consecutive un-held nodes along any path is what a free cascade recurses through,
so it must never exceed ``BAND`` (shrunk here to keep graphs small). The sequence-number
shortcut is used for single-thread graphs; graphs that break its assumption (nodes made in
another thread) must fall back to exact longest-path bands.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
import torch

import gradprobe
from gradprobe import _deepfree

BAND = 8


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {"ids": None, "by": None}
    by_sequence = _deepfree.hold_points_by_sequence
    exact = _deepfree.hold_points

    def record(name: str, fn: Callable[..., list[int]]) -> Callable[..., list[int]]:
        def wrapper(*args: Any) -> list[int]:
            result = fn(*args)
            if seen["by"] is None or name == "exact":
                seen["ids"], seen["by"] = result, name
            return result

        return wrapper

    monkeypatch.setattr(_deepfree, "BAND", BAND)
    monkeypatch.setattr(_deepfree, "hold_points_by_sequence", record("sequence", by_sequence))
    monkeypatch.setattr(_deepfree, "hold_points", record("exact", exact))
    yield seen
    _deepfree.drain()


def longest_unheld_run(graph: gradprobe.Graph, hold: set[int]) -> int:
    run = [0] * len(graph)
    indegree = [len(graph.parents(i)) for i in range(len(graph))]
    ready = [i for i, count in enumerate(indegree) if not count]
    for node in ready:
        run[node] = 0 if node in hold else 1
    longest = 0
    while ready:
        node = ready.pop()
        longest = max(longest, run[node])
        for edge in graph.children(node):
            child = edge.dst
            candidate = 0 if child in hold else run[node] + 1
            run[child] = max(run[child], candidate)
            indegree[child] -= 1
            if not indegree[child]:
                ready.append(child)
    return longest


def chain(x: torch.Tensor, steps: int) -> torch.Tensor:
    for _ in range(steps):
        x = x * 1.01 + 0.1
    return x


def test_single_thread_chain_uses_sequence_bands(held: dict[str, Any]) -> None:
    graph = gradprobe.trace(chain(torch.ones(2, requires_grad=True), 60))
    assert held["by"] == "sequence"
    assert held["ids"], "a 121-node chain must be banded with BAND=8"
    assert longest_unheld_run(graph, set(held["ids"])) <= BAND + 1


def test_sum_over_a_recurrence_is_banded(held: dict[str, Any]) -> None:
    h = torch.ones(2, requires_grad=True)
    states = []
    for _ in range(40):
        h = torch.tanh(h * 1.1)
        states.append(h.sum())
    graph = gradprobe.trace(torch.stack(states).sum())
    assert longest_unheld_run(graph, set(held["ids"])) <= BAND + 1


def test_nodes_made_in_another_thread_fall_back_to_exact_bands(held: dict[str, Any]) -> None:
    # Sequence numbers are per thread: a new thread starts again from 0, so its nodes sit
    # above the main thread's nodes with *lower* numbers, breaking the shortcut.
    bottom = chain(torch.ones(2, requires_grad=True), 30)
    top: list[torch.Tensor] = []
    worker = threading.Thread(target=lambda: top.append(chain(bottom, 30)))
    worker.start()
    worker.join()
    graph = gradprobe.trace(top[0])
    assert held["by"] == "exact"
    assert longest_unheld_run(graph, set(held["ids"])) <= BAND + 1


def test_small_graphs_hold_nothing() -> None:
    before = _deepfree.held_count()
    gradprobe.trace(chain(torch.ones(2, requires_grad=True), 100))
    assert _deepfree.held_count() == before


def test_held_nodes_are_released_once_the_graph_is_dropped(held: dict[str, Any]) -> None:
    out = chain(torch.ones(2, requires_grad=True), 60)
    gradprobe.trace(out)
    assert _deepfree.held_count() > 0
    assert not _deepfree.drain(timeout=0.05)  # the user still owns the graph
    del out
    assert _deepfree.drain(timeout=10)
    assert _deepfree.held_count() == 0
