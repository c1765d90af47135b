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
import torch
import torch.nn.functional as F

from encoder import TransformerEncoder

torch.manual_seed(0)

x = torch.randn(64, 12, 32)
y = x.flip(1).cumsum(1) / 4

model = TransformerEncoder(model_dim=32, num_layers=4)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(15):
    idx = torch.randint(0, 64, (16,))
    loss = F.mse_loss(model(x[idx]), y[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
