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


class GradCAM:
    def __init__(self, model, target_layer):
        self.model = model
        self.activations = None
        self.gradients = None
        target_layer.register_forward_hook(self._save_activation)
        target_layer.register_full_backward_hook(self._save_gradient)  # <- REGISTERED

    def _save_activation(self, module, inputs, output):
        self.activations = output.detach()

    def _save_gradient(self, module, grad_input, grad_output):
        self.gradients = grad_output[0].detach()

    def __call__(self, images, class_idx):
        self.model.zero_grad()
        scores = self.model(images)
        scores[:, class_idx].sum().backward()
        weights = self.gradients.mean((2, 3), keepdim=True)
        cam = torch.relu((weights * self.activations).sum(1))
        return cam / (cam.amax((1, 2), keepdim=True) + 1e-8)
