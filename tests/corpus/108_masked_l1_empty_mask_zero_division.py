"""Case 108 - per-image masked L1 divided by mask.sum() == 0 for a text-free crop -> NaN

Source: https://github.com/MhLiao/DB/issues/14
        "l1 loss may device zero" ("When mask.sum() == 0 in this line
        decoders/l1_loss.py#L10, the l1loss will get nan"; fixed by the author)
Category: nan-in-forward

Reported symptom:
    DB text-detection training: the loss is nan for some batches and the model weights
    become NaN after the optimizer step.

Root cause:
    The threshold-map loss averages |pred - gt| over the text-border mask of each image:
    sum(...) / mask.sum().  Random cropping produced an image crop without any text, so its
    mask is all zero and the division is 0 / 0 = NaN.  The NaN enters the total loss;
    DivBackward0 divides the gradient by 0 too, so every gradient and, after Adam, every
    weight is NaN.

Ground truth a good tool should report:
    First non-finite value in forward: NaN from the division at line 54 (denominator
    mask.sum() == 0 for image 1, whose empty box list is at line 59); it reaches the loss
    and model.thresh.weight.grad.  Fix: divide by mask.sum().clamp(min=1) (or add eps).
    EXPECT: kind=nan_forward; first_nan_line=54; nan_op=div; cause_line=54;
            created_line=59; affected=thresh.weight.grad

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        loss = nan
        thresh.weight.grad has NaN: True
        body weights NaN after step: True
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


class TinyDBHead(nn.Module):
    """Predicts a probability map and a threshold map for text detection."""

    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU())
        self.prob = nn.Conv2d(16, 1, 1)
        self.thresh = nn.Conv2d(16, 1, 1)

    def forward(self, x):
        h = self.body(x)
        return torch.sigmoid(self.prob(h)), torch.sigmoid(self.thresh(h))


def masked_l1(pred, gt, mask):
    per_image = (torch.abs(pred - gt) * mask).sum(dim=(1, 2, 3)) / mask.sum(dim=(1, 2, 3))  # <- CAUSE,NAN: 0 / 0 when a crop has no text border
    return per_image.mean()


images = torch.rand(3, 3, 16, 16)
text_boxes = [[(2, 3, 10, 12)], [], [(5, 1, 14, 8)]]  # <- CREATED: the random crop for image 1 holds no text
thresh_gt = torch.zeros(3, 1, 16, 16)
thresh_mask = torch.zeros(3, 1, 16, 16)
for i, boxes in enumerate(text_boxes):
    for (y0, x0, y1, x1) in boxes:
        thresh_mask[i, 0, y0:y1, x0:x1] = 1.0
        thresh_gt[i, 0, y0:y1, x0:x1] = 0.5
prob_gt = (thresh_gt > 0).float()

model = TinyDBHead()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
prob, thresh = model(images)
loss = nn.functional.binary_cross_entropy(prob, prob_gt) + 10.0 * masked_l1(thresh, thresh_gt, thresh_mask)
print("loss =", loss.item())
opt.zero_grad()
loss.backward()
print("thresh.weight.grad has NaN:", torch.isnan(model.thresh.weight.grad).any().item())
opt.step()
print("body weights NaN after step:", torch.isnan(model.body[0].weight).any().item())
