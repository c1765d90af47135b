"""Case 172 - model.to(device) after building the optimizer, with a conversion that creates new Parameters

Source: https://github.com/pytorch/xla/issues/1623
        "Sending .to(device) after defining optimizer leads to subtle bug":
        `optimizer = optim.SGD(model.parameters()); model.to(device)` "will lead
        to an extremely subtle bug: model gradients and everything else seems to
        be fine ... and no error is raised" (see also pytorch/xla#6861: on XLA
        `module.to()` "will create new parameter tensors instead of modify the
        tensor in place")
Category: wiring (optimizer holds parameters the model no longer uses)

Reported symptom:
    No error, the loss does not go down: the optimizer steps tensors that the
    model does not use any more; the model's parameters get gradients and are
    never updated.

Root cause:
    `Module._apply` (behind `.to()`, `.cuda()`, `.double()`) normally swaps
    `param.data` and keeps the Parameter objects, so an optimizer built before
    the move still holds the live parameters.  When the conversion cannot be
    done by a `.data` swap -- XLA tensors, or (as here, to reproduce it on CPU)
    `torch.__future__.set_overwrite_module_params_on_conversion(True)` -- it
    registers NEW Parameter objects.  The optimizer built at line 55 keeps the
    old ones: they get no gradient, and the new ones are never stepped.

Ground truth a good tool should report:
    The parameters used in forward (`0.weight`, `0.bias`, `2.weight`,
    `2.bias`) receive gradients but are in no optimizer; the optimizer built
    at line 55 holds the pre-conversion tensors, replaced by `model.to(device)`
    at line 56.  Build the optimizer after moving the model.
    EXPECT: kind=param_not_in_optimizer; params=0.weight,0.bias,2.weight,2.bias;
            cause_line=55,56

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        epoch  0 loss 29.6053
        epoch 13 loss 29.6053
        epoch 26 loss 29.6053
        epoch 39 loss 29.6053
        optimizer holds the model's weight: False
        grads of the tensors the optimizer holds: [None, None, None, None]
        model[0].weight.grad norm (never applied): 118.301
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
# the conversion path XLA devices take: .to() installs new Parameter objects
torch.__future__.set_overwrite_module_params_on_conversion(True)
device = torch.device("cpu")

model = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)  # <- CAUSE: built before the move
model.to(device)  # <- CAUSE: replaces every Parameter object

x = torch.randn(64, 4, device=device)
y = (x ** 2).sum(dim=1, keepdim=True)
for epoch in range(40):
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    if epoch % 13 == 0:
        print(f"epoch {epoch:2d} loss {loss.item():.4f}")

held = optimizer.param_groups[0]["params"]
print("optimizer holds the model's weight:", any(p is model[0].weight for p in held))
print("grads of the tensors the optimizer holds:", [None if p.grad is None else "set" for p in held])
print(f"model[0].weight.grad norm (never applied): {model[0].weight.grad.norm():.3f}")
