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


class TransformerLayer(nn.Module):
    def __init__(self, model_dim, attention_layer, ff_layer, norm_layer=nn.LayerNorm):
        super().__init__()
        self.att = attention_layer
        self.ff = ff_layer
        self.norm1 = norm_layer(model_dim)
        self.norm2 = norm_layer(model_dim)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.att(h, h, h, need_weights=False)[0]
        return x + self.ff(self.norm2(x))
