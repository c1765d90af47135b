"""Case 592 - a sample-logging callback switches the model to eval mode and leaves it

Source: https://github.com/shubhamagarwal92/mmd/issues/14
        (the model is set to eval when generating samples and logging, and never set
        back to train when training resumes)
Category: 5 - global switches are scoped

Root cause:
    SampleLogger.on_step_end() calls model.eval() to generate samples without
    dropout, under no_grad, and returns without model.train(). The trainer
    calls model.train() only once, before the first epoch.
"""
import torch


class SampleLogger:
    def __init__(self, prompts, every=5):
        self.prompts, self.every = prompts, every
        self.samples = []

    def on_step_end(self, trainer, step):
        if step % self.every:
            return
        trainer.model.eval()  # <- CAUSE
        with torch.no_grad():
            self.samples.append(trainer.model(self.prompts).argmax(-1))
