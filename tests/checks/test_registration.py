"""Registration and wiring: layers in plain containers (GP116 and GP145 name the
container), tensors that should be parameters and Parameters in plain containers (GP146), hooks stacked every step (GP310),
gradients turned off by a decorator or a `with` block (GP107, GP104, GP115)."""

from __future__ import annotations

from pathlib import Path

from _run import diagnose, line_of, roles

_CELLS = """
import torch
from torch import nn

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = []  # the container
        for _ in range(2):
            self.layers.append(nn.Linear(4, 4))
        self.out = nn.Linear(4, 1)

    def forward(self, x):
        for layer in self.layers:
            x = torch.tanh(layer(x))
        return self.out(x)

model = Stack()
"""


def test_a_layer_in_a_plain_list_names_the_container(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        _CELLS
        + """
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    opt.zero_grad()
    model(torch.randn(3, 4)).pow(2).mean().backward()
    opt.step()
""",
    )
    (finding,) = [f for f in found if f.code == "GP116"]
    assert roles(finding)[0] == ("cause", line_of(text, "the container"))


def test_a_dtype_error_in_a_layer_the_model_does_not_hold_names_the_container(
    tmp_path: Path,
) -> None:
    found, text = diagnose(
        tmp_path,
        _CELLS
        + """
model.double()
model(torch.randn(3, 4, dtype=torch.float64))
""",
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP145"]
    assert roles(finding)[0] == ("cause", line_of(text, "the container"))
    assert finding.details["attribute"] == "layers"


def test_a_tensor_attribute_that_requires_grad_is_named(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        class Gate(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)
                self.peep = torch.zeros(4, requires_grad=True)  # not a Parameter
                self.scale = nn.Parameter(torch.ones(4))

            def forward(self, x):
                return self.lin(x) * self.peep.sigmoid() * self.scale

        gate = Gate()
        opt = torch.optim.Adam(gate.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            gate(torch.randn(2, 4)).sum().backward()
            opt.step()
        """,
    )
    assert [(f.code, f.tensor, roles(f)) for f in found] == [
        ("GP146", "peep", [("cause", line_of(text, "not a Parameter"))])
    ]


_GAINS = """
import torch
from torch import nn

class Bands(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.gains = {container}  # the gains

    def forward(self, x):
        h = self.lin(x)
        for gain in {values}:
            h = h * gain
        return h

bands = Bands()
opt = torch.optim.Adam({params}, lr=0.1)
for _ in range(2):
    opt.zero_grad()
    bands(torch.randn(2, 4)).sum().backward()
    opt.step()
"""


def _gains(container: str, values: str = "self.gains", params: str = "") -> str:
    return _GAINS.format(container=container, values=values, params=params or "bands.parameters()")


def test_parameters_in_a_plain_list_name_the_attribute(tmp_path: Path) -> None:
    found, text = diagnose(tmp_path, _gains("[nn.Parameter(torch.ones(4)) for _ in range(3)]"))
    assert [(f.code, f.tensor, roles(f)) for f in found] == [
        ("GP146", "gains", [("cause", line_of(text, "the gains"))])
    ]
    assert found[0].details["parameters"] == 3


def test_parameters_in_a_plain_dict_name_the_attribute(tmp_path: Path) -> None:
    found, _ = diagnose(
        tmp_path,
        _gains("{'a': nn.Parameter(torch.ones(4))}", values="self.gains.values()"),
    )
    assert [(f.code, f.details["container"]) for f in found] == [("GP146", "dict")]


def test_parameters_registered_or_handed_to_the_optimizer_are_silent(tmp_path: Path) -> None:
    registered = _gains("nn.ParameterList([nn.Parameter(torch.ones(4)) for _ in range(3)])")
    assert [f.code for f in diagnose(tmp_path, registered)[0]] == []
    handed = _gains(
        "[nn.Parameter(torch.ones(4)) for _ in range(3)]",
        params="[*bands.parameters(), *bands.gains]",
    )
    assert [f.code for f in diagnose(tmp_path, handed)[0]] == []


def test_a_hook_registered_every_step_is_named_and_a_removed_one_is_not(
    tmp_path: Path,
) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 1))
        acts = []
        for step in range(4):
            model[1].register_forward_hook(lambda m, i, o: acts.append(o))  # every step
            handle = model[0].register_forward_hook(lambda m, i, o: None)
            model(torch.randn(2, 4)).sum().backward()
            handle.remove()
        """,
    )
    (finding,) = [f for f in found if f.code == "GP310"]
    assert roles(finding) == [("cause", line_of(text, "every step"))]
    assert finding.details == {"registrations": 4, "attached": 4}
    assert len([f for f in found if f.code == "GP310"]) == 1


def test_a_no_grad_decorated_forward_and_its_band_aid_name_the_decorator(
    tmp_path: Path,
) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 1)

            @torch.no_grad()  # turns gradients off
            def forward(self, x):
                return self.lin(x)

        net = Net()
        loss = net(torch.randn(2, 4)).pow(2).mean()
        loss.requires_grad = True  # the band-aid
        loss.backward()
        """,
    )
    causes = {loc.line for f in found for loc in f.locations if loc.role == "cause"}
    assert causes == {line_of(text, "turns gradients off")}
    (band_aid,) = [f for f in found if f.code == "GP115"]
    assert ("created", line_of(text, "the band-aid")) in roles(band_aid)


def test_the_no_grad_block_that_made_the_value_is_named(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        lin = nn.Linear(3, 1)

        def loss_of(x):
            return lin(x).pow(2).mean()

        with torch.no_grad():  # a log line, fine
            before = loss_of(torch.randn(2, 3))
        with torch.no_grad():  # the one that feeds backward
            meta = loss_of(torch.randn(2, 3))
        meta.backward()
        """,
        status=1,
    )
    (finding,) = [f for f in found if f.code == "GP104"]
    assert [r for r in roles(finding) if r[0] == "cause"] == [
        ("cause", line_of(text, "feeds backward"))
    ]


def test_an_optimizer_left_holding_replaced_parameters_is_named(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        torch.__future__.set_overwrite_module_params_on_conversion(True)
        try:
            model = nn.Sequential(nn.Linear(4, 2))
            opt = torch.optim.SGD(model.parameters(), lr=0.1)  # before the move
            model.to(torch.float64)  # new Parameter objects
            for _ in range(2):
                opt.zero_grad()
                model(torch.randn(3, 4, dtype=torch.float64)).sum().backward()
                opt.step()
        finally:
            torch.__future__.set_overwrite_module_params_on_conversion(False)
        """,
    )
    (finding,) = [f for f in found if f.code == "GP116"]
    assert roles(finding) == [("cause", line_of(text, "before the move"))]
    assert finding.details["orphaned"] == 2


def test_reassigning_one_side_of_a_tie_is_named(tmp_path: Path) -> None:
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        class LM(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(10, 4)
                self.proj = nn.Linear(4, 10, bias=False)
                self.proj.weight = self.emb.weight  # tied

            def forward(self, x):
                return self.proj(self.emb(x))

        model, other = LM(), nn.Embedding(10, 4)
        model.emb.weight = other.weight  # breaks the tie
        model.proj.weight = model.proj.weight  # the same object again: nothing replaced
        model(torch.tensor([1, 2])).sum().backward()
        """,
    )
    (finding,) = [f for f in found if f.code == "GP148"]
    assert roles(finding) == [("cause", line_of(text, "breaks the tie"))]
    assert finding.details["still_held_by"] == "Linear.weight"


def test_hooks_stacked_on_a_model_local_to_main_are_named(tmp_path: Path) -> None:
    # The model dies with main(): the count of attached hooks is taken while it lives.
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        def main():
            model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
            for step in range(3):
                model[1].register_forward_hook(lambda m, i, o: None)  # every step
                model(torch.randn(2, 4)).sum().backward()

        main()
        """,
    )
    (finding,) = [f for f in found if f.code == "GP310"]
    assert roles(finding) == [("cause", line_of(text, "every step"))]


def test_a_tensor_hook_registered_on_parameters_every_forward_is_named(
    tmp_path: Path,
) -> None:
    """A parameter outlives the forward that hooks it: one more hook per step, all run.
    Hooks on activations (a new tensor per forward) and hooks removed after backward are
    not stacked."""
    found, text = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(4, 4)
                self.head = nn.Linear(4, 1)

            def forward(self, x):
                for p in self.body.parameters():
                    p.register_hook(lambda g: g * 0.1)  # every forward
                h = self.body(x)
                h.register_hook(lambda g: g * 0.5)  # a new tensor each time
                return self.head(h)

        model = Net()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(4):
            opt.zero_grad()
            model(torch.randn(2, 4)).sum().backward()
            opt.step()
        """,
    )
    (finding,) = [f for f in found if f.code == "GP310"]
    assert roles(finding) == [("cause", line_of(text, "every forward"))]
    assert finding.parameter == "body.weight"
    assert finding.details == {"hook": "<lambda>", "attached": 4}

    found, _ = diagnose(
        tmp_path,
        """
        import torch
        from torch import nn

        layer = nn.Linear(4, 1)
        for step in range(4):
            handles = [p.register_hook(lambda g: g.clamp(-1, 1)) for p in layer.parameters()]
            layer(torch.randn(2, 4)).sum().backward()
            for handle in handles:
                handle.remove()
        """,
    )
    assert [f for f in found if f.code == "GP310"] == []
