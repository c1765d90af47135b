"""Case 124 - frozen-backbone feature function decorated with @torch.inference_mode(), trainable head on top

Source: https://github.com/facebookresearch/dinov2/issues/399
        "Inference Tensors Problem" (fine-tuning a DPT depth head on a frozen
        ViT backbone: "Inference tensors cannot be saved for backward";
        facebookresearch/dinov2#472: "remove the decoration and forward work fine")
Category: inference tensors used in autograd

Reported symptom:
    RuntimeError: Inference tensors cannot be saved for backward. To work around
    you can make a clone to get a normal tensor and use it in autograd.

Root cause:
    The backbone's feature function is decorated with @torch.inference_mode()
    so that the frozen backbone costs nothing.  Everything it returns is an
    *inference tensor*.  The trainable depth head's first convolution must save
    its input to compute the weight gradient, and autograd refuses to save an
    inference tensor: the head cannot be trained on these features.  The
    backbone should be frozen with torch.no_grad() (or requires_grad_(False))
    instead, or the features cloned outside inference mode.

Ground truth a good tool should report:
    `feats` (returned by extract_features, decorated with
    @torch.inference_mode() at line 53) are inference tensors; the depth
    head's conv at line 65 (called from line 79) tries to save one for
    backward.  Fix: use @torch.no_grad() at line 53.
    EXPECT: kind=inference_tensor_saved; tensor=feats; created_line=55;
            cause_line=53; error_line=65

Observed (torch 2.13.0, CPU, this script):
    exit code: 1
    stdout:
        features: (2, 32, 8, 8) is_inference=True
    exception:
        RuntimeError: Inference tensors cannot be saved for backward. Please do not
          use Tensors created in inference mode in computation tracked by autograd.
          To work around this, you can make a clone to get a normal tensor and use
          it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

backbone = nn.Sequential(
    nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.GELU(),
    nn.Conv2d(16, 32, 3, stride=2, padding=1), nn.GELU(),
)
backbone.eval()


@torch.inference_mode()  # <- CAUSE: outputs are inference tensors; use torch.no_grad()
def extract_features(images):
    return backbone(images)  # <- CREATED


class DepthHead(nn.Module):
    def __init__(self, channels=32):
        super().__init__()
        self.reduce = nn.Conv2d(channels, 16, 3, padding=1)
        self.predict = nn.Conv2d(16, 1, 1)

    def forward(self, feats, out_size):
        x = F.relu(self.reduce(feats))  # <- ERROR
        depth = F.softplus(self.predict(x))
        return F.interpolate(depth, size=out_size, mode="bilinear", align_corners=False)


head = DepthHead()
optimizer = torch.optim.AdamW(head.parameters(), lr=1e-3)
images = torch.rand(2, 3, 32, 32)
gt_depth = torch.rand(2, 1, 32, 32) * 10

for it in range(2):
    feats = extract_features(images)
    if it == 0:
        print("features:", tuple(feats.shape), "is_inference=%s" % feats.is_inference())
    pred = head(feats, gt_depth.shape[-2:])
    loss = F.l1_loss(pred, gt_depth)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("head trained (bug not reproduced)")
