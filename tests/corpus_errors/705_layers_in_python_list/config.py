"""Case 705 - MLP keeps its layers in a plain Python list

Source: pytorch/pytorch test/optim/test_optim.py (Optimizer rejects an empty parameter list: "optimizer got an empty parameter list")
Category: optimizer construction / module registration

Reported symptom:
    ValueError: optimizer got an empty parameter list

Root cause:
    ConfigurableMLP (model.py) builds its layers in a list comprehension and
    stores them in a regular Python list attribute. nn.Module only registers
    sub-modules assigned directly or held in nn.ModuleList/ModuleDict, so the
    model reports no parameters and the optimizer receives an empty list.

Ground truth a good tool should report:
    `self.layers = [...]` in model.py (CAUSE) must be an nn.ModuleList; the
    optimizer construction in train.py raises (ERROR).
"""
SIZES = [8, 32, 32, 1]
LR = 1e-3
STEPS = 3
