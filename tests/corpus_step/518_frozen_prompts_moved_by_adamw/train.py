"""Case 518 - prompts frozen for an old task keep moving under AdamW

Source: https://github.com/iamwangyabin/S-Prompts/pull/2
        "the weight decay in your optimizer will still change their value even though you have set them as `requires_grad=False`"
Category: 4 - a step changes what it should and nothing else

Reported symptom:
    In task-incremental training the prompt learned for task 0 is frozen
    (requires_grad=False) while task 1 is trained, yet its values keep drifting
    at every step, so the task-0 model evaluated later is not the one that was
    trained and validated.

Root cause:
    The learner builds one AdamW optimizer over all model parameters and clears
    gradients with zero_grad(set_to_none=False). After task 0 the old prompt and
    head still carry a (zero) .grad tensor and Adam moment buffers, so every step
    of task 1 applies decoupled weight decay and the remaining momentum to them,
    although they are frozen.

Ground truth a good tool should report:
    Parameters with requires_grad=False change at every step of task 1 (weight
    decay and stale Adam moments). The optimizer in learner.py is built over all
    parameters instead of the trainable ones (the `self.optimizer = ...` line);
    zero_grad(set_to_none=False) keeps their zero gradients alive (second line).
"""
import torch
import torch.nn.functional as F

from learner import PromptLearner
from model import PromptedClassifier

torch.manual_seed(0)

tasks = []
for t in range(2):
    x = torch.randn(256, 16)
    y = (x[:, 3 * t:3 * t + 3]).argmax(1)
    tasks.append((x, y))

model = PromptedClassifier()
learner = PromptLearner(model)

for task, (x, y) in enumerate(tasks):
    learner.begin_task(task)
    if task == 1:
        prompt0 = model.prompts[0].detach().clone()
        with torch.no_grad():
            acc0_before = (model(tasks[0][0], 0).argmax(1) == tasks[0][1]).float().mean().item()
    for step in range(30):
        idx = torch.randint(0, 256, (64,))
        loss = learner.train_step(x[idx], y[idx], task)

drift = (model.prompts[0].detach() - prompt0).abs().max().item()
with torch.no_grad():
    acc0_after = (model(tasks[0][0], 0).argmax(1) == tasks[0][1]).float().mean().item()
    loss0 = F.cross_entropy(model(tasks[0][0], 0), tasks[0][1]).item()
print(f"frozen prompt 0 drifted by {drift:.4f}; task-0 acc {acc0_before:.3f} -> {acc0_after:.3f}")
print(f"final loss task 1 {loss:.4f}  task 0 {loss0:.4f}")
