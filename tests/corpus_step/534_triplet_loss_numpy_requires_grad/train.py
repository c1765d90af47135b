"""Case 534 - triplet loss computed in NumPy, then forced to require grad

Source: https://github.com/roman-vygon/triplet_loss_kws/issues/6
        "In pytorch, you need set loss.requres_grad = True."
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    Training first failed with "Torch autograd expects Variable with requires_grad
    set to True"; after setting mean_losses.requires_grad = True (the suggested
    fix) it runs, but the embedding network does not learn and the loss stays flat.

Root cause:
    BatchHardTripletLoss converts the embeddings to NumPy to mine the hardest
    positive/negative and computes the margin loss there. The value that comes
    back is a new tensor with no history; marking it requires_grad=True makes it
    a leaf, so backward never reaches the embedding network.

Ground truth a good tool should report:
    The loss is disconnected from every model parameter: the embeddings leave
    autograd through `.detach().numpy()` in losses/triplet.py (the
    `emb = embeddings.detach().cpu().numpy()` line); requires_grad=True on the
    result only hides the break.
"""
import torch

from losses.triplet import BatchHardTripletLoss
from model import KeywordEmbedder

torch.manual_seed(0)

centers = torch.randn(5, 20) * 1.5
labels = torch.randint(0, 5, (400,))
feats = centers[labels] + torch.randn(400, 20)

model = KeywordEmbedder()
criterion = BatchHardTripletLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=5e-3)

for step in range(30):
    idx = torch.randint(0, 400, (64,))
    loss = criterion(model(feats[idx]), labels[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

print(f"final loss {loss.item():.4f}")
