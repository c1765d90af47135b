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
import torch.nn as nn


class TinyVGG(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(inplace=True),  # <- CAUSE
        )
        self.classifier = nn.Linear(16, num_classes)

    def forward(self, x):
        fmap = self.features(x)  # <- ERROR
        return self.classifier(fmap.mean((2, 3)))
