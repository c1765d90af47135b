"""Case 601 - one feed-forward block is handed to every transformer layer

Source: https://github.com/habla-liaa/encodecmae/issues/3
        "each TransformerLayer uses the same ff_layer weights that are instantiated once"
Category: 6 - structure (registration, sharing, replacement)

Reported symptom:
    A reader of the encoder notices that all layers of the transformer use the same
    feed-forward weights and asks whether that is intended; the model has far fewer
    distinct parameters than its configuration suggests.

Root cause:
    TransformerEncoder.__init__ builds the default feed-forward Sequential once, before
    the list comprehension that makes the layers, and passes that one object to every
    TransformerLayer (the attention, by contrast, is built inside the comprehension).
    The same module is registered at encoder_layers.0.ff, encoder_layers.1.ff, ...:
    every layer applies and trains one shared feed-forward network.

Ground truth a good tool should report:
    encoder_layers.N.ff are one module object at several layers of the ModuleList;
    it is built once at the `ff_layer = nn.Sequential(...)` line in encoder.py and
    passed to each layer by the comprehension; build it inside the comprehension.
"""
import torch.nn as nn

from layers import TransformerLayer


class TransformerEncoder(nn.Module):
    def __init__(self, model_dim=32, num_layers=4, num_heads=4, ff_dim=64, ff_layer=None):
        super().__init__()
        if ff_layer is None:
            ff_layer = nn.Sequential(nn.Linear(model_dim, ff_dim), nn.ReLU(), nn.Linear(ff_dim, model_dim))  # <- CAUSE
        else:
            ff_layer = ff_layer()
        self.encoder_layers = nn.ModuleList(
            [
                TransformerLayer(
                    model_dim,
                    nn.MultiheadAttention(model_dim, num_heads, batch_first=True),
                    ff_layer,
                )
                for _ in range(num_layers)
            ]
        )
        self.out = nn.LayerNorm(model_dim)

    def forward(self, x):
        for layer in self.encoder_layers:
            x = layer(x)
        return self.out(x)
