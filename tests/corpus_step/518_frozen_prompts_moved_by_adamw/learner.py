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


class PromptLearner:
    def __init__(self, model, lr=1e-2, weight_decay=0.05):
        self.model = model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)  # <- CAUSE

    def begin_task(self, task):
        for t in range(task):
            self.model.prompts[t].requires_grad_(False)
            self.model.heads[t].requires_grad_(False)

    def train_step(self, x, y, task):
        self.optimizer.zero_grad(set_to_none=False)  # <- CAUSE
        loss = F.cross_entropy(self.model(x, task), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()
