"""Case 647 - gradcheck of a function whose output size depends on the input values

Source: pytorch/pytorch test/test_autograd.py, test_gradcheck_output_shape_or_dtype_depend_on_values (assertRaisesRegex AssertionError "return outputs with the same shape when inputs are perturbed")
Category: gradcheck

Reported symptom:
    AssertionError: Expected `func` to return outputs with the same shape when inputs are perturbed on index (2,) by 1e-06, but got: shapes torch.Size([3]) and torch.Size([4]).

Root cause:
    positive_part keeps only the positive scores with boolean indexing
    (scores[scores > 0]). The number of elements returned depends on the values, and
    one score sits within finite-difference distance of 0, so perturbing it changes
    the output shape and gradcheck cannot form a Jacobian.

Ground truth a good tool should report:
    The boolean-mask line `scores[scores > 0]` in positive_part: use a fixed-shape
    formulation (torch.relu(scores) or torch.where) for a differentiable check;
    raised by the gradcheck call.
"""
import torch
from torch.autograd import gradcheck

torch.manual_seed(0)


def positive_part(scores):
    kept = scores[scores > 0]  # <- CAUSE: value-dependent output shape
    return kept * kept.sigmoid()


scores = torch.tensor([0.8, -0.3, -5e-7, 1.5, 0.2], dtype=torch.float64, requires_grad=True)
gradcheck(positive_part, (scores,))  # <- ERROR
print("positive_part verified")
