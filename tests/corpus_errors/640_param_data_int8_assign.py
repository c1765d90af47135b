"""Case 640 - loading int8-quantised weights into a Parameter through .data

Source: pytorch/pytorch test/test_autograd.py, test_set_data_self_requires_grad (assertRaisesRegex "must be floating point or complex dtype")
Category: requires-grad

Reported symptom:
    RuntimeError: data set to a tensor that requires gradients must be floating point or complex dtype

Root cause:
    To simulate quantised fine-tuning the script rounds the weights to int8 and
    assigns them with layer.weight.data = q. The Parameter requires grad, and only
    floating point or complex tensors can require grad, so swapping its data for an
    integer tensor is refused.

Ground truth a good tool should report:
    The `layer.weight.data = q` line: dequantise first (q.float() * scale), or keep
    the integer copy outside the Parameter.
"""
import torch
from torch import nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))

for layer in model:
    if isinstance(layer, nn.Linear):
        scale = layer.weight.detach().abs().max() / 127
        q = torch.round(layer.weight.detach() / scale).to(torch.int8)
        layer.weight.data = q  # <- CAUSE,ERROR
        layer.register_buffer("w_scale", scale)

opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(10, 8), torch.randint(0, 4, (10,))
loss = nn.functional.cross_entropy(model(x), y)
loss.backward()
opt.step()
print("loss", loss.item())
