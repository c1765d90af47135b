"""Case 170 - adaptive GCN: the learned adjacency is .detach()ed inside forward

Source: https://github.com/queenie88/A-GCN/issues/4
        "Question about gradient flow": "If adj is detached from the computation
        graph, how could the two weight matrices be updated (i.e. W_phi,
        W_theta)?" -- maintainer: "You are right, the .detach() should be removed"
Category: graph cut in the middle of the model (.detach)

Reported symptom:
    No error.  The projections that build the adjacency matrix never learn:
    their .grad stays None while the GCN weights train normally.

Root cause:
    The adjacency is computed from the label embeddings through `theta` and
    `phi`, then `adj = adj.detach()` (left over from visualising / thresholding
    it) cuts the graph: the GCN propagation uses a constant matrix, so no
    gradient reaches `theta` or `phi`.  Nothing fails because other parameters
    still require grad.

Ground truth a good tool should report:
    Parameters `theta.weight`, `theta.bias`, `phi.weight`, `phi.bias` receive
    no gradient: the adjacency built from them (line 57) is detached at
    line 58 before the propagation at line 59.
    EXPECT: kind=params_without_grad; params=theta.*,phi.*; cause_line=58;
            created_line=57

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        loss after 5 steps: 0.7028
        label_emb          grad is None: False
        theta.weight       grad is None: True
        theta.bias         grad is None: True
        phi.weight         grad is None: True
        phi.bias           grad is None: True
        gcn_weight.weight  grad is None: False
        gcn_weight.bias    grad is None: False
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AdaptiveGCNHead(nn.Module):
    """Multi-label classifier whose label graph is learned from label embeddings."""

    def __init__(self, n_labels=6, emb=12, feat=20):
        super().__init__()
        self.label_emb = nn.Parameter(torch.randn(n_labels, emb))
        self.theta = nn.Linear(emb, 8)
        self.phi = nn.Linear(emb, 8)
        self.gcn_weight = nn.Linear(emb, feat)

    def forward(self, img_feat):
        adj = torch.softmax(self.theta(self.label_emb) @ self.phi(self.label_emb).t(), dim=1)  # <- CREATED
        adj = adj.detach()  # <- CAUSE: cuts theta and phi out of the graph
        classifiers = F.leaky_relu(self.gcn_weight(adj @ self.label_emb), 0.2)
        return img_feat @ classifiers.t()


head = AdaptiveGCNHead()
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
feats = torch.randn(16, 20)
targets = (torch.rand(16, 6) > 0.6).float()

for step in range(5):
    optimizer.zero_grad()
    loss = F.binary_cross_entropy_with_logits(head(feats), targets)
    loss.backward()
    optimizer.step()
print(f"loss after 5 steps: {loss.item():.4f}")
for name, p in head.named_parameters():
    print(f"{name:18s} grad is None: {p.grad is None}")
