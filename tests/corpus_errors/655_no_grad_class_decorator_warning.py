"""Case 655 - decorating an evaluator class with @torch.no_grad()

Source: pytorch/pytorch test/test_autograd.py, test_grad_mode_class_decoration (assertWarnsRegex FutureWarning "Decorating classes is deprecated")
Category: grad-mode

Reported symptom:
    FutureWarning: Decorating classes is deprecated and will be disabled in future versions. You should only decorate functions or methods. To preserve the current behavior of class decoration, you can directly decorate the `__init__` method and nothing else.

Root cause:
    @torch.no_grad() is applied to the Evaluator class. Grad-mode decorators only
    wrap the class's constructor (not its methods), which is deprecated and
    misleading: evaluate() still runs with grad enabled and builds a graph.

Ground truth a good tool should report:
    The @torch.no_grad() line on the Evaluator class: decorate the evaluate method
    instead.
"""
import torch
from torch import nn

torch.manual_seed(0)


@torch.no_grad()  # <- CAUSE,ERROR
class Evaluator:
    def __init__(self, model, data, labels):
        self.model, self.data, self.labels = model, data, labels

    def evaluate(self):
        logits = self.model(self.data)
        return (logits.argmax(1) == self.labels).float().mean().item()


model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 3))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(30, 5), torch.randint(0, 3, (30,))
evaluator = Evaluator(model, x, y)

for epoch in range(2):
    loss = nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"epoch {epoch} loss {loss.item():.3f} acc {evaluator.evaluate():.2f}")
