"""Case 677 - full backward hook on a two-input module returns grad_output

Source: pytorch/pytorch test/nn/test_module_hooks.py, TestModuleHookNN.test_hook_invalid_outputs (assertRaisesRegex 'got 2, but expected 1' / 'got 0, but expected 1')
Category: module hooks

Reported symptom:
    RuntimeError: Backward hook returned an invalid number of grad_input, got 1, but expected 2

Root cause:
    A gradient-scaling hook is registered with register_full_backward_hook on
    a fusion module that takes two tensor inputs. The hook is meant to replace
    grad_input but returns the rescaled grad_output tuple instead (one element
    for the single output). A full backward hook must return one gradient per
    forward input, so autograd rejects the result.

Ground truth a good tool should report:
    The hook's `return tuple(g * 0.5 for g in grad_output)` (CAUSE) returns
    gradients for the outputs instead of the inputs; the hook was registered
    on the fusion module (REGISTERED); raised in loss.backward() (ERROR).
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedFusion(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.gate = nn.Linear(2 * dim, dim)

    def forward(self, a, b):
        g = torch.sigmoid(self.gate(torch.cat([a, b], -1)))
        return g * a + (1 - g) * b


def damp_fusion_grads(module, grad_input, grad_output):
    return tuple(g * 0.5 for g in grad_output)  # <- CAUSE


img_enc = nn.Linear(10, 8)
txt_enc = nn.Linear(6, 8)
fusion = GatedFusion(8)
head = nn.Linear(8, 2)
fusion.register_full_backward_hook(damp_fusion_grads)  # <- REGISTERED

params = [*img_enc.parameters(), *txt_enc.parameters(), *fusion.parameters(), *head.parameters()]
opt = torch.optim.Adam(params, lr=1e-3)
img, txt = torch.randn(4, 10), torch.randn(4, 6)
labels = torch.tensor([0, 1, 1, 0])

opt.zero_grad()
logits = head(fusion(img_enc(img), txt_enc(txt)))
loss = nn.functional.cross_entropy(logits, labels)
loss.backward()  # <- ERROR
opt.step()
print("loss", loss.item())
