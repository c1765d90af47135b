"""Case 618 - two task losses backpropagated one after the other through a shared encoder (trainer module)

Source: pytorch/pytorch test/test_autograd.py, test_backward_twice_with_saved_values (assertRaisesRegex "Specify retain_graph=True")
Category: graph-freed

Reported symptom:
    RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.

Root cause:
    train_step computes both task losses from the same encoder output `feats` and
    calls loss_cls.backward() and then loss_reg.backward(). The first backward frees
    the saved tensors of the shared encoder graph (Tanh output, ReLU output, ...),
    so the second backward through the encoder finds them gone.

Ground truth a good tool should report:
    The first backward, `loss_cls.backward()`, must keep the graph
    (retain_graph=True), or the two losses should be summed and backpropagated
    once. The error is raised at `loss_reg.backward()`.
"""
import torch.nn.functional as F


def train_step(model, opt, x, y_cls, y_reg):
    feats = model.encoder(x)
    loss_cls = F.cross_entropy(model.cls_head(feats), y_cls)
    loss_reg = F.mse_loss(model.reg_head(feats).squeeze(1), y_reg)
    opt.zero_grad()
    loss_cls.backward()  # <- CAUSE: frees the shared encoder graph
    loss_reg.backward()  # <- ERROR
    opt.step()
    return loss_cls.item(), loss_reg.item()
