"""torch's autograd errors explained at the line to change: a custom backward's return
(GP138), a custom Function under autocast without custom_fwd/custom_bwd (GP139), an
autograd.grad input the outputs never used (GP140), requires_grad on a tensor a loop made
a non-leaf (GP126), inference tensors from a decorated function (GP114)."""

from __future__ import annotations

from pathlib import Path

from _run import diagnose, line_of, roles


def test_a_backward_returning_too_few_gradients_names_that_return(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch

        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, factor):
                ctx.factor = factor
                return x * factor

            @staticmethod
            def backward(ctx, grad):
                if ctx.factor == 0:
                    return None, None
                return grad * ctx.factor  # one value for two inputs

        w = torch.randn(3, requires_grad=True)
        y = Scale.apply(w, 2.0)  # applied here
        y.sum().backward()
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP138"]
    assert roles(finding) == [
        ("cause", line_of(text, "one value for two inputs")),
        ("created", line_of(text, "applied here")),
        ("error", line_of(text, "y.sum().backward()")),
    ]
    assert finding.details == {"function": "Scale", "expected": 2, "got": 1}


def test_a_gradient_for_a_flag_argument_is_named(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch

        class Gate(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, on):
                return x if on else x * 0

            @staticmethod
            def backward(ctx, grad):
                return grad, grad  # `on` is a bool

        w = torch.randn(3, requires_grad=True)
        Gate.apply(w * 2, True).sum().backward()
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP138"]
    assert roles(finding)[0] == ("cause", line_of(text, "`on` is a bool"))
    assert finding.details["index"] == 1


def _quantised(decorated: bool) -> str:
    fwd = "@torch.amp.custom_fwd(device_type='cpu')" if decorated else ""
    bwd = "@torch.amp.custom_bwd(device_type='cpu')" if decorated else ""
    return f"""
        import torch

        class Mm(torch.autograd.Function):
            @staticmethod
            {fwd}
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x.mm(w)

            @staticmethod
            {bwd}
            def backward(ctx, grad):  # the decorator goes here
                x, w = ctx.saved_tensors
                return grad.mm(w.t()), x.t().mm(grad)  # mixes dtypes

        w = torch.randn(4, 2, requires_grad=True)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = Mm.apply(torch.randn(3, 4), w)
        y.float().sum().backward()
        """


def test_a_custom_function_under_autocast_without_custom_bwd_is_named(tmp_path: Path) -> None:
    found, text = diagnose(tmp_path, _quantised(decorated=False), status=1)
    (finding,) = [f for f in found if f.code == "GP139"]
    assert roles(finding) == [
        ("cause", line_of(text, "the decorator goes here")),
        ("created", line_of(text, "y = Mm.apply")),
        ("error", line_of(text, "mixes dtypes")),
    ]


def test_the_same_function_with_custom_fwd_and_custom_bwd_runs_clean(tmp_path: Path) -> None:
    found, _ = diagnose(tmp_path, _quantised(decorated=True))
    assert [f.code for f in found] == []


def test_an_unused_autograd_grad_input_is_named_by_its_parameter(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        heads = nn.ModuleDict({"a": nn.Linear(3, 1), "b": nn.Linear(3, 1)})  # built here
        net = nn.ModuleDict({"trunk": nn.Linear(3, 3), "heads": heads})
        out = net["heads"]["a"](net["trunk"](torch.randn(2, 3))).sum()
        grads = torch.autograd.grad(out, list(net.parameters()))  # asks for all
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP140"]
    assert finding.tensor == "heads.b.weight"
    assert "was never called" in finding.message
    assert roles(finding)[:2] == [
        ("cause", line_of(text, "asks for all")),
        ("created", line_of(text, "built here")),
    ]


def test_an_autograd_grad_input_made_after_the_outputs_names_where_it_was_made(
    tmp_path: Path,
) -> None:
    """A slice taken after the forward is a new tensor: no output can depend on it. The
    line that made it is the cause, the autograd.grad call where it raised is context."""
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
        xt = torch.rand(32, 2, requires_grad=True)
        u = net(xt)
        x = xt[:, 0:1]  # sliced after the forward
        (u_x,) = torch.autograd.grad(u.sum(), x, create_graph=True)  # raises
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP140"]
    assert roles(finding) == [
        ("cause", line_of(text, "sliced after the forward")),
        ("error", line_of(text, "raises")),
    ]
    assert "after the outputs were computed" in finding.message
    # a slice made before the forward, from which the outputs are computed, is fine
    found, _ = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        net = nn.Sequential(nn.Linear(2, 16), nn.Tanh(), nn.Linear(16, 1))
        xt = torch.rand(32, 2, requires_grad=True)
        x, t = xt[:, 0:1], xt[:, 1:2]
        u = net(torch.cat([x, t], dim=1))
        (u_x,) = torch.autograd.grad(u.sum(), x, create_graph=True)
        """,
    )
    assert found == []


def test_requires_grad_on_a_tensor_the_loop_reassigned_names_the_assignment(
    tmp_path: Path,
) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Linear(4, 2).requires_grad_(False)
        x = torch.rand(3, 4)
        for step in range(3):
            x.requires_grad = True  # refused on the second pass
            loss = model(x).sum()
            (g,) = torch.autograd.grad(loss, x)
            x = x + 0.1 * g.sign()  # a non-leaf from here on
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP126"]
    assert roles(finding)[:2] == [
        ("cause", line_of(text, "a non-leaf from here on")),
        ("error", line_of(text, "refused on the second pass")),
    ]


def test_requires_grad_on_a_model_output_stays_at_its_own_line(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        h = nn.Linear(4, 2)(torch.rand(3, 4))
        h.requires_grad = True  # wants h.grad
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP126"]
    assert [r for r in roles(finding) if r[0] == "cause"] == [
        ("cause", line_of(text, "wants h.grad"))
    ]


def test_inference_tensors_from_a_decorated_function_name_the_decorator(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        backbone = nn.Linear(4, 4)

        @torch.inference_mode()  # the decorator
        def features(x):
            return backbone(x)

        head = nn.Linear(4, 1)
        head(features(torch.randn(2, 4))).sum().backward()
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP114"]
    assert [r for r in roles(finding) if r[0] == "cause"] == [
        ("cause", line_of(text, "the decorator"))
    ]


def test_requires_grad_of_an_integer_tensor_names_where_it_was_made(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch

        def load_batch(n):
            return torch.randint(0, 256, (n, 8), dtype=torch.uint8)  # made uint8 here

        images = load_batch(2)
        images.requires_grad_()  # asked here
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP125"]
    assert roles(finding) == [
        ("cause", line_of(text, "made uint8 here")),
        ("error", line_of(text, "asked here")),
    ]


def test_an_integer_tensor_made_on_an_earlier_line_is_named_there(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch

        counts = torch.arange(5)  # made here
        counts.requires_grad = True  # asked here
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP125"]
    assert roles(finding) == [
        ("cause", line_of(text, "made here")),
        ("error", line_of(text, "asked here")),
    ]
