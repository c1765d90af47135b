"""The pytest plugin, run with pytester: fixture, marker, options, summary, xdist, imports.

In-process runs (``runpytest``) share ``sys.modules`` with this test run, which has
imported torch already; whatever is about imports runs in a subprocess.
"""

from __future__ import annotations

import importlib.metadata
import re
import textwrap
from pathlib import Path

import pytest

# In-process runs also drop the modules they imported when they end. torch._dynamo, which
# record() imports, registers torch operator libraries that refuse a second import: import
# it here, once (`import gradprobe` no longer does).
import torch._dynamo  # noqa: F401

pytest_plugins = ["pytester"]

PLUGIN_MODULE = "_gradprobe_pytestplugin"


def _entry_point() -> importlib.metadata.EntryPoint | None:
    found = importlib.metadata.entry_points(group="pytest11")
    return next((ep for ep in found if ep.value == PLUGIN_MODULE), None)


# Until the package is installed with its pytest11 entry point, load the plugin by name;
# loading it both ways would register it twice.
PLUGIN = () if _entry_point() is not None else ("-p", PLUGIN_MODULE)
BASE = (*PLUGIN, "-p", "no:cacheprovider")


def line_of(source: str, marker: str) -> int:
    lines = source.splitlines()
    hits = [i for i, text in enumerate(lines, start=1) if text.rstrip().endswith(f"# {marker}")]
    assert len(hits) == 1, marker
    return hits[0]


SUITE = textwrap.dedent(
    """
    import pytest
    import torch
    from torch import nn
    from torch.autograd.function import Function


    class Detached(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Linear(4, 4)
            self.head = nn.Linear(4, 2)

        def forward(self, x):
            return self.head(self.features(x).detach())  # DETACH


    class WrongSquare(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):  # WRONG BACKWARD
            (x,) = ctx.saved_tensors
            return grad * x


    @pytest.mark.gradprobe
    def test_grad_flows(gradprobe):
        model = Detached()
        gradprobe.assert_grad_flows(model, model(torch.ones(3, 4)).sum())


    def test_grads_finite(gradprobe):
        w = torch.zeros(3, requires_grad=True)
        w.grad = torch.tensor([1.0, float("nan"), float("inf")])
        gradprobe.assert_grads_finite({"w": w})


    def test_is_leaf(gradprobe):
        a = torch.ones(2, dtype=torch.float64, requires_grad=True).float()
        gradprobe.assert_is_leaf(a, "a")


    def test_not_leaf(gradprobe):
        gradprobe.assert_not_leaf(torch.ones(2), "b")


    def test_inplace(gradprobe):
        a = torch.ones(5, requires_grad=True)
        b = a.sigmoid()
        loss = b.sum()
        b.mul_(2)
        gradprobe.assert_no_inplace_conflicts(loss)


    def test_hook_order(gradprobe):
        def step():
            x = torch.ones(2, requires_grad=True)
            y = x * 2

            def on_x(grad):
                return None

            def on_y(grad):
                return None

            x.register_hook(on_x)
            y.register_hook(on_y)
            y.sum().backward()

        gradprobe.assert_hook_order(step, ["on_x", "on_y"])


    def test_gradcheck(gradprobe):
        x = torch.rand(3, dtype=torch.float64, requires_grad=True)
        gradprobe.assert_gradcheck(lambda t: WrongSquare.apply(t), (x,))


    def test_passes(gradprobe):
        layer = nn.Linear(2, 2)
        gradprobe.assert_grad_flows(layer, layer(torch.ones(1, 2)).sum())
    """
).lstrip()


def test_each_assertion_fails_with_its_explanation(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_suite=SUITE)
    result = pytester.runpytest(*BASE)
    result.assert_outcomes(failed=7, passed=1)
    out = result.stdout.str()
    detach = line_of(SUITE, "DETACH")
    result.stdout.fnmatch_lines(
        [
            (
                "E *gradprobe.errors.GradprobeAssertionError: assert_grad_flows: 2 of 4 "
                "parameters get no usable gradient:"
            ),
            (
                "E *✗ features.weight (4, 4): no .grad: not in the graph of the loss; the "
                f"recording saw the graph cut at test_suite.py:{detach} by .detach()"
            ),
            (
                f"E *cause at */test_suite.py:{detach} in forward: "
                "return self.head(self.features(x).detach())  # DETACH"
            ),
            "E *✗ w: 1 NaN, 1 +inf of 3 values",
            "E *assert_is_leaf: a is not a leaf: it was produced by ToCopyBackward0*",
            "E *assert_not_leaf: b is a leaf: it does not require grad*",
            "E *✗ GP101 inplace_modified_saved_tensor: SigmoidBackward0 saved its own output*",
            "E *expected: on_x → on_y",
            "E *fired:    on_y → on_x",
            "E *the backward of test_gradcheck.<lambda> disagrees with finite differences*",
            "E *✗ custom autograd.Function WrongSquare: its backward alone fails gradcheck*",
            (
                f"E *cause at */test_suite.py:{line_of(SUITE, 'WRONG BACKWARD')} in "
                "WrongSquare.backward: def backward(ctx, grad):  # WRONG BACKWARD"
            ),
        ]
    )
    # Our frames are hidden: the traceback ends at the test's own line.
    assert "testing.py:" not in out and "pytest_plugin.py:" not in out
    # Only the marked test was recorded and gets a diagnosis section.
    assert out.count("- gradprobe diagnosis -") == 1
    result.stdout.fnmatch_lines(
        ["gradprobe: 1 test recorded, 1 failing test diagnosed (*finding*)"]
    )


def test_a_passing_suite_reports_a_summary_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_ok="""
        import pytest
        import torch
        from gradprobe._record import active_recording

        @pytest.mark.gradprobe
        def test_recorded(gradprobe):
            layer = torch.nn.Linear(2, 1)
            graph = gradprobe.trace(layer(torch.ones(1, 2)).sum(), model=layer)
            assert sorted(leaf.name for leaf in graph.parameters) == ["bias", "weight"]
            assert gradprobe.record() is gradprobe.record()  # the marker's recording
            assert gradprobe.findings == []

        def test_fixture_recording(gradprobe):
            rec = gradprobe.record()
            assert gradprobe.record() is rec and active_recording() is rec

        def test_recording_was_stopped_at_teardown():
            assert active_recording() is None

        def test_without_plugin_use():
            assert True
        """
    )
    result = pytester.runpytest(*BASE)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        ["gradprobe: 1 test recorded, 0 failing tests diagnosed (0 findings)"]
    )


def test_record_option_and_diagnosis_section(pytester: pytest.Pytester) -> None:
    source = textwrap.dedent(
        """
        import pytest
        import torch

        def test_inplace_error():
            x = torch.ones(3, requires_grad=True)
            y = x.exp()
            y.add_(1)  # WRITE
            y.sum().backward()

        def test_plain_failure():
            assert 1 == 2

        @pytest.mark.gradprobe(record=False)
        def test_opted_out():
            assert 1 == 2

        def test_passes():
            torch.ones(2, requires_grad=True).sum().backward()
        """
    ).lstrip()
    pytester.makepyfile(test_rec=source)
    result = pytester.runpytest(*BASE, "--gradprobe-record")
    result.assert_outcomes(failed=3, passed=1)
    out = result.stdout.str()
    assert out.count("- gradprobe diagnosis -") == 2  # not for the opted-out test
    result.stdout.fnmatch_lines(
        [
            "*- gradprobe diagnosis -*",
            "gradprobe recorded this test: 1 finding",
            "*GP101 inplace_modified_saved_tensor*",
            f"*cause *test_rec.py:{line_of(source, 'WRITE')} in test_inplace_error*",
            "*- gradprobe diagnosis -*",
            "gradprobe recorded this test: no autograd problem found (the failure is elsewhere).",
        ]
    )
    result.stdout.fnmatch_lines(
        ["gradprobe: 3 tests recorded, 2 failing tests diagnosed (1 finding)"]
    )


def test_a_broken_diagnosis_never_hides_the_test_result(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gradprobe.pytest_plugin import TestRecording

    def broken(*args: object, **kwargs: object) -> str:
        raise KeyError("rendering failed")

    monkeypatch.setattr(TestRecording, "diagnosis", broken)
    pytester.makepyfile(
        test_broken="""
        import pytest

        @pytest.mark.gradprobe
        def test_fails():
            assert 1 == 2
        """
    )
    result = pytester.runpytest(*BASE)
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "E *assert 1 == 2",
            (
                "gradprobe could not diagnose this test: KeyError: 'rendering failed'. The test's "
                "own result is unaffected*"
            ),
        ]
    )


def test_svg_dir_gets_the_graph_of_each_failing_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_svg="""
        import torch

        def test_fails(gradprobe):
            layer = torch.nn.Linear(2, 1)
            layer.bias.requires_grad_(False)
            gradprobe.assert_grad_flows(layer, layer(torch.ones(1, 2)).sum())

        def test_fails_without_graph(gradprobe):
            assert False

        def test_passes(gradprobe):
            gradprobe.trace(torch.ones(1, requires_grad=True) * 2)
        """
    )
    result = pytester.runpytest(*BASE, "--gradprobe-svg-dir", "graphs")
    result.assert_outcomes(failed=2, passed=1)
    directory = pytester.path / "graphs"
    written = sorted(path.name for path in directory.iterdir())
    assert written == ["test_svg.py_test_fails.svg"]
    svg = (directory / written[0]).read_text()
    assert "<svg" in svg and ">Addmm<" in svg and ">weight<" in svg  # the traced graph
    result.stdout.fnmatch_lines(
        [
            "*- gradprobe graph -*",
            f"trace 1: <Graph * nodes, 1 params, * saved tensors> drawn to {directory / written[0]}",
            "*- gradprobe graph -*",
            "no graph to draw: trace the loss with the gradprobe fixture*",
            f"gradprobe: 0 tests recorded, 1 graph written to {directory}",
        ]
    )


def test_bad_marker_arguments_fail_the_test_at_setup(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_marks="""
        import pytest

        @pytest.fixture
        def model():
            return 3

        @pytest.mark.gradprobe(recrod=True)
        def test_typo():
            pass

        @pytest.mark.gradprobe(True)
        def test_positional():
            pass

        @pytest.mark.gradprobe(record="yes")
        def test_record_type():
            pass

        @pytest.mark.gradprobe(watch=3)
        def test_watch_type():
            pass

        @pytest.mark.gradprobe(watch="net")
        def test_watch_missing(model):
            pass

        @pytest.mark.gradprobe(watch="model", record=False)
        def test_watch_without_record(model):
            pass
        """
    )
    result = pytester.runpytest(*BASE)
    result.assert_outcomes(errors=6)
    result.stdout.fnmatch_lines_random(
        [
            "@pytest.mark.gradprobe got unknown argument 'recrod'; it accepts record, watch.",
            (
                "@pytest.mark.gradprobe takes keyword arguments only (record, watch), got "
                "positional (True,)*"
            ),
            "@pytest.mark.gradprobe(record=...) must be True or False, got 'yes' (str).",
            "@pytest.mark.gradprobe(watch=...) must name fixtures that hold nn.Modules*got 3*",
            (
                "@pytest.mark.gradprobe(watch='net'): 'net' is not a fixture of this test*"
                "(it uses: model)*"
            ),
            "@pytest.mark.gradprobe(watch=...) needs record=True*",
        ]
    )


def test_marker_watch_and_fixture_watch(pytester: pytest.Pytester) -> None:
    # Not "test_watch": in-process pytester would clash with tests/test_watch.py's module.
    pytester.makepyfile(
        test_plugin_watch_case="""
        import pytest
        import torch
        from torch import nn

        SESSIONS = []

        @pytest.fixture
        def model():
            return nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 1))

        @pytest.fixture
        def number():
            return 3

        @pytest.mark.gradprobe(watch="model")
        def test_nan_input(model):
            x = torch.ones(8, 4)
            x[0, 0] = float("nan")
            model(x).sum().backward()
            assert False

        @pytest.mark.gradprobe(watch="number")
        def test_not_a_module(number):
            pass

        def test_fixture_watch(gradprobe):
            layer = nn.Linear(2, 2)
            session = gradprobe.watch(layer)
            layer(torch.ones(1, 2)).sum().backward()
            assert session.open and session.steps == 1
            SESSIONS.append(session)

        def test_fixture_closed_it():
            assert not SESSIONS[0].open
        """
    )
    result = pytester.runpytest(*BASE)
    result.assert_outcomes(failed=2, passed=2)
    result.stdout.fnmatch_lines(
        [
            "*- gradprobe diagnosis -*",
            "gradprobe recorded this test and watched model: * findings",
            "*The model's input held NaN at step 0 (1 NaN of 32 values)*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            (
                "E *GradprobeTypeError: @pytest.mark.gradprobe(watch='number'): the fixture "
                "'number' is 3 (a int), not an nn.Module*"
            )
        ]
    )


def test_bad_svg_dir_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makefile(".txt", taken="x")
    result = pytester.runpytest(*BASE, "--gradprobe-svg-dir", "taken.txt")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gradprobe-svg-dir='taken.txt' exists and is not a directory*"])
    result = pytester.runpytest(*BASE, "--gradprobe-svg-dir=")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--gradprobe-svg-dir needs a directory*"])


def test_plugin_imports_neither_torch_nor_gradprobe_at_startup(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import sys

        def pytest_collection_finish(session):
            loaded = sorted(m for m in ("torch", "gradprobe") if m in sys.modules)
            print("LOADED AT START:", loaded)
            plugin = session.config.pluginmanager.hasplugin("gradprobe-reporter")
            print("PLUGIN ACTIVE:", plugin)
        """
    )
    pytester.makepyfile(
        test_light="""
        import sys

        def test_light(request):
            assert request.config.getoption("gradprobe_record") is False
            assert "torch" not in sys.modules

        def test_fixture_loads_torch(gradprobe):
            assert "torch" in sys.modules and "gradprobe.pytest_plugin" in sys.modules
        """
    )
    result = pytester.runpytest_subprocess(*BASE, "-s")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["LOADED AT START: []", "PLUGIN ACTIVE: True"])


def test_runs_under_xdist_with_strings_only(pytester: pytest.Pytester) -> None:
    pytest.importorskip("xdist")
    pytester.makepyfile(
        test_par="""
        import pytest
        import torch

        @pytest.mark.gradprobe
        def test_cut(gradprobe):
            layer = torch.nn.Linear(2, 2)
            out = layer(torch.ones(1, 2)).detach() * torch.ones(2, requires_grad=True)
            gradprobe.assert_grad_flows(layer, out.sum())

        @pytest.mark.gradprobe
        def test_ok(gradprobe):
            layer = torch.nn.Linear(2, 2)
            gradprobe.assert_grad_flows(layer, layer(torch.ones(1, 2)).sum())
        """
    )
    result = pytester.runpytest_subprocess(*BASE, "-n", "2", "--gradprobe-svg-dir", "out")
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            (
                "*✗ weight (2, 2): no .grad: not in the graph of the loss; the recording saw the "
                "graph cut at test_par.py:7 by .detach()"
            ),
            "*- gradprobe diagnosis -*",
            "gradprobe recorded this test*",
            "*- gradprobe graph -*",
            "gradprobe: 2 tests recorded, 1 failing test diagnosed (*), 1 graph written to *",
        ]
    )
    assert [p.name for p in (pytester.path / "out").iterdir()] == ["test_par.py_test_cut.svg"]


def test_entry_point_names_the_thin_plugin() -> None:
    entry = _entry_point()
    assert entry is not None, (
        "pyproject.toml needs [project.entry-points.pytest11] "
        f'gradprobe = "{PLUGIN_MODULE}" (then reinstall)'
    )
    assert entry.name == "gradprobe"
    module = entry.load()
    assert Path(module.__file__).name == f"{PLUGIN_MODULE}.py"


def test_the_marker_keeps_the_tests_traceback(pytester: pytest.Pytester) -> None:
    """Issue 24 item 4: a test under the marker fails with the frames it has without."""
    pytester.makepyfile(
        test_frames="""
        import pytest, torch

        def body():
            x = torch.ones(3, requires_grad=True)
            y = x.sigmoid()
            y.add_(1)
            y.sum().backward()

        @pytest.mark.gradprobe
        def test_marked():
            body()

        def test_plain():
            body()
        """
    )
    result = pytester.runpytest(*BASE, "--tb=long")
    located = re.compile(r"^(\S+):(\d+): ")
    sections: dict[str, list[str]] = {}
    name = ""
    for line in result.outlines:
        if line.startswith("____"):
            name = line.strip("_ ")
        elif located.match(line) and name:
            sections.setdefault(name, []).append(located.match(line).group(1))  # type: ignore[union-attr]
    assert sections["test_marked"] == sections["test_plain"]
    assert not any(
        "gradprobe" in file or "overrides.py" in file for file in sections["test_marked"]
    )
