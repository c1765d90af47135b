"""Case 592 - a sample-logging callback switches the model to eval mode and leaves it

Source: https://github.com/shubhamagarwal92/mmd/issues/14
Category: 5 - global switches are scoped

Root cause:
    (see callbacks.py) Trainer.fit() switches to train mode once and runs the
    callbacks after every step.
"""
import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer, callbacks=()):
        self.model, self.optimizer, self.callbacks = model, optimizer, list(callbacks)
        self.step = 0

    def fit(self, batches, epochs):
        self.model.train()
        for _ in range(epochs):
            for src, tgt in batches:
                loss = F.cross_entropy(self.model(src).transpose(1, 2), tgt)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                self.step += 1
                for callback in self.callbacks:
                    callback.on_step_end(self, self.step)
        return loss.item()
