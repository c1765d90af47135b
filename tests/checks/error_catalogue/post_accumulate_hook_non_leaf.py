"""post accumulate grad hooks cannot be registered on non-leaf tensors"""

import torch

w = torch.randn(3, requires_grad=True) * 0.1  # <- CAUSE
w.register_post_accumulate_grad_hook(lambda p: None)  # <- ERROR
