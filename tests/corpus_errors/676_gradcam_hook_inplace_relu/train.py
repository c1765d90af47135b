"""Case 676 - Grad-CAM full backward hook on a conv followed by an in-place ReLU

Source: pytorch/pytorch test/nn/test_module_hooks.py, TestModuleHookNN.test_hook_inplace (assertRaisesRegex 'BackwardHookFunctionBackward is a view and is being modified inplace.')
Category: module hooks + in-place

Reported symptom:
    RuntimeError: Output 0 of BackwardHookFunction is a view and is being modified inplace. This view was created inside a custom Function (or because an input was returned as-is) and the autograd logic to handle view+inplace would override the custom backward associated with the custom Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function.

Root cause:
    GradCAM (gradcam.py) registers a full backward hook on the last conv layer.
    Full backward hooks wrap the module output in a BackwardHookFunction that
    returns its input as a view. The very next layer in the model is
    nn.ReLU(inplace=True) (model.py), which modifies that view in place; this
    is forbidden because it would bypass the hook Function.

Ground truth a good tool should report:
    The nn.ReLU(inplace=True) following the hooked conv in model.py (CAUSE);
    the hook registration in gradcam.py (REGISTERED) is what makes the output
    a custom-Function view. Raised during the forward call in model.py (ERROR).
"""
import torch
import torch.nn as nn

from gradcam import GradCAM
from model import TinyVGG

torch.manual_seed(0)

model = TinyVGG()
opt = torch.optim.SGD(model.parameters(), lr=0.05)
images = torch.randn(6, 3, 16, 16)
labels = torch.randint(0, 5, (6,))

for epoch in range(2):
    opt.zero_grad()
    nn.functional.cross_entropy(model(images), labels).backward()
    opt.step()

model.eval()
cam = GradCAM(model, model.features[3])
heatmap = cam(images[:2], class_idx=1)
print("cam shape", tuple(heatmap.shape))
