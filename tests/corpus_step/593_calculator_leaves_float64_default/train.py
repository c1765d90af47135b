"""Case 593 - a calculator sets the default dtype to float64 and a later student crashes

Source: https://github.com/ACEsuit/mace/issues/877
        "When the MACE calculators are initialised, they call torch.set_default_dtype(dtype)"
        (the same failure: https://github.com/gmboquet/mixle/pull/509)
Category: 5 - global switches are scoped

Reported symptom:
    Distilling the reference potential into a small float32 network fails with
    "mat1 and mat2 must have the same dtype, but got Float and Double", though
    the student's data is explicitly cast to float32.

Root cause:
    PairPotential.__init__ (potentials.py) sets the default dtype to float64 and
    never restores it, so the student's Linear layers are made in float64.

Ground truth a good tool should report:
    The default dtype was float64 when the student's layers were made; it was
    set by set_default_dtype in PairPotential.__init__ and not restored.
"""
import torch

from distill import fit_student
from potentials import PairPotential

torch.manual_seed(0)

reference = PairPotential()
distances = 1.0 + torch.rand(256, 6)
energies = reference.energy(distances)
student, loss = fit_student(distances, energies)
print(f"student loss {loss:.4f}")
