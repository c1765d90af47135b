"""Case 921 - a pretrained extractor kept fixed by torch.no_grad(), then a saliency map (correct)

Source: https://theneuralbase.com/torchvision/learn/intermediate/feature-extraction-freeze-backbone/
        "a pretrained model's learned weights (backbone) as a fixed feature encoder, then
        training only a new classification head on top"
        and https://github.com/sunnynevarekar/pytorch-saliency-maps/issues/1
        ("backward pass to get gradients of score predicted class w.r.t. input image")
Category: correct (invariant 2)
EXPECT: no findings

Reported symptom:
    None. The backbone is used as a fixed feature extractor: instead of setting
    requires_grad=False, its forward runs under torch.no_grad(), and only the new
    head is given to the optimizer. After training, a saliency map of one input
    is computed by a backward through the whole network.

Root cause:
    None. During training the backbone builds no graph, so no gradient is
    produced for it. The saliency pass fills the backbone's .grad once, but it is
    an analysis of the input (x.grad is what is read), applied to the data, not a
    module left out of training.

Ground truth a good tool should report:
    Nothing. Every gradient the training loop produces is stepped by the
    optimizer; the analysis pass at the end is not training.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

backbone = nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 32), nn.ReLU())
head = nn.Linear(32, 4)
optimizer = torch.optim.SGD(head.parameters(), lr=0.1, momentum=0.9)

centers = torch.randn(4, 20) * 2
labels = torch.randint(0, 4, (512,))
x = centers[labels] + torch.randn(512, 20)

for step in range(30):
    idx = torch.randint(0, 512, (64,))
    with torch.no_grad():
        feats = backbone(x[idx])
    loss = F.cross_entropy(head(feats), labels[idx])
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

sample = x[:1].clone().requires_grad_(True)
score = head(backbone(sample)).max()
score.backward()
saliency = sample.grad.abs().squeeze(0)
print(f"loss {loss.item():.4f}  most salient input {saliency.argmax().item()}")
