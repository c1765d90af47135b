"""Case 567 - a model whose forward returns `.data`; the loss is then rewrapped

Source: https://github.com/huggingface/torchMoji/issues/21
        "I noticed in model_def line 249-250 (`if return_tensor: outputs = outputs.data`)"
Category: 8 - tensors that require grad do not leave autograd silently

Reported symptom:
    Fine-tuning raised "element 0 of tensors does not require grad and does not
    have a grad_fn" unless the loss was wrapped as Variable(loss,
    requires_grad=True). With the wrap it runs, but validation loss and accuracy
    are identical from one epoch to the next.

Root cause:
    The model's forward ends with `outputs = outputs.data` when it is asked to
    return a tensor: `.data` is the values without the graph. The loss computed
    from it has no history; making it require grad turns it into a new leaf, so
    backward reaches no parameter and the optimizer has nothing to apply.

Ground truth a good tool should report:
    No parameter gets a gradient: the outputs left autograd at `outputs.data` in
    model_def.py; the requires_grad on the loss only hides the error.
"""
import torch
import torch.nn as nn

from finetune import finetune_step
from model_def import TextClassifier

torch.manual_seed(0)

vocab, seq_len = 50, 12
model = TextClassifier(vocab, n_classes=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

tokens = torch.randint(0, vocab, (256, seq_len))
labels = (tokens < 10).sum(1).gt(2).long()

for epoch in range(15):
    idx = torch.randint(0, 256, (32,))
    loss = finetune_step(model, optimizer, criterion, tokens[idx], labels[idx])

print(f"final loss {loss:.4f}")
