"""Case 226 - anomaly-detection student network with a "learnable" memory bank stored as
plain tensors instead of nn.Parameter

Source: https://github.com/SimonThomine/RememberingNormality/issues/7 "some questions"
        (`self.keys = torch.randn(L, channel).to('cuda')` and the same for values, not
        wrapped in nn.Parameter: they stay at their random initialisation; the author
        confirmed and fixed it)
Category: registration (tensor attribute never registered as a parameter)

Reported symptom:
    No error.  Adding the memory module does not improve the metrics; the memory keys
    and values never change during training.

Root cause:
    nn.Module registers only nn.Parameter / nn.Module attributes (and buffers through
    register_buffer).  A plain tensor attribute created with torch.randn has
    requires_grad=False, is not returned by model.parameters(), is not in the
    optimizer and not in state_dict(): the memory is a fixed random projection.

Ground truth a good tool should report:
    `memory.keys` and `memory.values` (created at lines 46 and 47) are used in
    forward (line 52) but are plain tensors that do not require grad and are not
    registered; they never change.  Fix: nn.Parameter(torch.randn(L, C) * 0.02).
    EXPECT: kind=unregistered_tensor; tensors=memory.keys,memory.values; cause_line=46,47

Observed (torch 2.13, CPU):
    exit code: 0
    stdout:
        step 0: distillation loss=0.0558
        step 1: distillation loss=0.0518
        step 2: distillation loss=0.0469
        step 3: distillation loss=0.0431
        step 4: distillation loss=0.0377
        memory keys changed: False | 'memory.keys' in state_dict: False
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class NormalityMemory(nn.Module):
    def __init__(self, n_slots, channels):
        super().__init__()
        self.keys = torch.randn(n_slots, channels)  # <- CAUSE: plain tensor, not nn.Parameter
        self.values = torch.randn(n_slots, channels)  # <- CAUSE: same

    def forward(self, feat):  # feat: (B, C, H, W)
        b, c, h, w = feat.shape
        q = feat.flatten(2).transpose(1, 2)  # (B, HW, C)
        attn = torch.softmax(q @ self.keys.t() / c ** 0.5, dim=-1)  # <- READ
        recalled = (attn @ self.values).transpose(1, 2).reshape(b, c, h, w)
        return torch.cat([feat, recalled], dim=1)


class Student(nn.Module):
    def __init__(self, c=16):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1))
        self.memory = NormalityMemory(n_slots=10, channels=c)
        self.dec = nn.Conv2d(2 * c, c, 1)

    def forward(self, x):
        return self.dec(self.memory(self.enc(x)))


teacher = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU()).requires_grad_(False)
student = Student()
keys_before = student.memory.keys.clone()
optimizer = torch.optim.Adam(student.parameters(), lr=1e-3)
for step in range(5):
    x = torch.rand(8, 3, 16, 16)  # "normal" training images
    loss = F.mse_loss(student(x), teacher(x))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: distillation loss={loss.item():.4f}")

print("memory keys changed:", not torch.equal(keys_before, student.memory.keys),
      "| 'memory.keys' in state_dict:", "memory.keys" in student.state_dict())
