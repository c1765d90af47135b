"""Case 588 - activation checkpointing recomputes Conv+BatchNorm blocks in backward

Source: https://github.com/Tencent/YOLO-Master/issues/262
        (BaseModel._apply_checkpointing re-runs training-mode BatchNorm during the
        backward recomputation, so its running statistics are updated again)
Category: 7 - backward has no side effects on state

Root cause:
    BaseModel.run_layer() wraps every Conv block (Conv2d + BatchNorm2d + SiLU)
    in torch.utils.checkpoint when memory saving is on. The block runs once in
    forward and once more in backward to rebuild its activations, and being in
    train mode the BatchNorm updates running_mean/var and num_batches_tracked
    both times. Gradients match the eager run; the buffers do not.
"""
import torch
import torch.nn as nn
import torch.utils.checkpoint


class Conv(nn.Module):
    def __init__(self, c_in, c_out, k=3):
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, k, padding=k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c_out)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class BaseModel(nn.Module):
    def __init__(self, checkpointing=True):
        super().__init__()
        self.checkpointing = checkpointing
        self.layers = nn.ModuleList([Conv(3, 8), Conv(8, 16), Conv(16, 16)])
        self.head = nn.Linear(16, 4)

    def run_layer(self, layer, x):
        if self.checkpointing and x.requires_grad:
            return torch.utils.checkpoint.checkpoint(layer, x, use_reentrant=False)  # <- CAUSE
        return layer(x)

    def forward(self, x):
        for layer in self.layers:
            x = self.run_layer(layer, x)
        return self.head(x.mean((2, 3)))
