"""Case 218 - fast style transfer: a Tanh output layer is added, and the [-1, 1] output
is rescaled to pixel range in place

Source: https://github.com/abhiskk/fast-neural-style/issues/12 "About adding Tanh() at
        the end of the model" and https://github.com/pytorch/pytorch/issues/1321 ("Is
        there a non-inplace version of nn.Tanh()": adding nn.Tanh() as the last layer
        of the transformer net made loss.backward() raise the in-place error;
        apaszke: nn.Tanh is out-of-place, the error is elsewhere)
Category: inplace-modified-saved-tensor (output of an op that saves its result)

Reported symptom:
    RuntimeError: one of the variables needed for gradient computation has been
    modified by an inplace operation ... (only after appending nn.Tanh(); the same
    code trained fine without it).

Root cause:
    TanhBackward0 computes grad * (1 - y**2) from its OUTPUT y, so it saves y.  The
    training loop maps the network output to [0, 255] with y.add_(1).mul_(127.5),
    which bumps y's version from 0 to 2.  Without the Tanh the last op was a
    convolution, whose backward does not need its output, so the same in-place
    rescale was harmless; that is why the error seemed to come from nn.Tanh.

Ground truth a good tool should report:
    Output of Tanh (line 56) saved by TanhBackward0, modified in place by add_/mul_
    at line 69, then needed by loss.backward() at line 75.  Fix: out-of-place
    rescale `styled = (styled + 1) * 127.5`.
    EXPECT: kind=inplace_saved_tensor; saved_by=TanhBackward0; saved_line=56;
            cause_line=69; error_line=75

Observed (torch 2.13, CPU):
    exit code: 1
    exception:
        RuntimeError: one of the variables needed for gradient computation has been
          modified by an inplace operation: [torch.FloatTensor [2, 3, 16, 16]],
          which is output 0 of Tanh, is at version 2; expected version 0 instead.
          Hint: enable anomaly detection to find the operation that failed to
          compute its gradient, with torch.autograd.set_detect_anomaly(True,
          check_nan=False).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TransformerNet(nn.Module):
    def __init__(self, ch=8):
        super().__init__()
        self.down = nn.Sequential(nn.Conv2d(3, ch, 3, padding=1), nn.InstanceNorm2d(ch, affine=True),
                                  nn.ReLU(), nn.Conv2d(ch, ch, 3, stride=2, padding=1), nn.ReLU())
        self.up = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(ch, 3, 3, padding=1))
        self.tanh = nn.Tanh()

    def forward(self, x):
        return self.tanh(self.up(self.down(x)))  # <- SAVED: TanhBackward0 keeps its output


# stand-in for the frozen VGG feature extractor (expects pixel values)
features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
features.requires_grad_(False)
net = TransformerNet()
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
content = torch.rand(2, 3, 16, 16) * 255.0
style_gram_target = torch.rand(8, 8)

for step in range(2):
    styled = net(content / 127.5 - 1.0)
    styled.add_(1.0).mul_(127.5)  # <- CAUSE: in-place rescale of the saved tanh output
    f_styled, f_content = features(styled / 255.0), features(content / 255.0)
    b, c, h, w = f_styled.shape
    gram = torch.einsum("bchw,bdhw->cd", f_styled, f_styled) / (b * h * w)
    loss = F.mse_loss(f_styled, f_content) + 10.0 * F.mse_loss(gram, style_gram_target)
    optimizer.zero_grad()
    loss.backward()  # <- ERROR
    optimizer.step()
    print(f"step {step}: loss={loss.item():.4f}")
