"""A Lightning fit whose loss turns NaN at step 3: which line, which module, which step?

The LightningModule standardizes each input row in its ``training_step``. At step 3 the
data contains a constant row: its standard deviation is 0, and 0 / 0 is NaN. Lightning
trains on; ``GradprobeCallback`` records the fit and watches the model, logs what it
found through the trainer's loggers, and keeps the findings: the line that made the NaN
(from ``record()``) and the step and module where it appeared (from ``watch()``).

Needs the ``lightning`` extra. Run it: ``python examples/lightning_nan.py``.
"""

import logging

import lightning.pytorch as pl
import torch
from torch import nn

from gradprobe.integrations.lightning import GradprobeCallback

# expect: gradprobe: 4 findings in this fit
# expect: GP201 nan_in_forward
# expect: x = (x - x.mean(dim=1, keepdim=True)) / x.std(dim=1, keepdim=True)
# expect: The output of module 'fc1' (Linear) held NaN
# expect: logged: gradprobe/findings = 4.0 at step 5


class Regressor(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(32, 1)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], index: int) -> torch.Tensor:
        x, y = batch
        x = (x - x.mean(dim=1, keepdim=True)) / x.std(dim=1, keepdim=True)
        return nn.functional.mse_loss(self.fc2(self.act(self.fc1(x))), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.05)


class Remember(pl.loggers.logger.Logger):  # type: ignore[misc]
    """A logger that keeps what it is given (any Lightning logger works the same way)."""

    name, version, metrics = "remember", 0, {}

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        self.metrics.update({key: (value, step) for key, value in metrics.items()})

    def log_hyperparams(self, params: object, *args: object, **kwargs: object) -> None:
        pass


torch.manual_seed(0)
x = torch.randn(48, 16)
x[3 * 8 + 5] = 1.0  # batch 3 holds a constant row: std 0
data = torch.utils.data.TensorDataset(x, x[:, :4].sum(dim=1, keepdim=True))
logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
logging.getLogger("gradprobe").setLevel(logging.ERROR)  # the findings are printed below

probe = GradprobeCallback(sample_every=2)
logger = Remember()
trainer = pl.Trainer(
    max_steps=6,
    accelerator="cpu",
    callbacks=[probe],
    logger=logger,
    enable_progress_bar=False,
    enable_model_summary=False,
    enable_checkpointing=False,
)
trainer.fit(Regressor(), torch.utils.data.DataLoader(data, batch_size=8))

print(probe)
value, step = logger.metrics["gradprobe/findings"]
print(f"\nlogged: gradprobe/findings = {value} at step {step}")
