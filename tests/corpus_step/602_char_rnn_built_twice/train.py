"""Case 602 - the classifier is built a second time after the optimizer took the first

Source: https://github.com/spro/practical-pytorch/issues/9
        "I have the model instantiated twice"
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    Replacing the hand-written parameter update of the char-RNN tutorial with an
    optimizer makes training fail: the loss stays high and jumps around, most names
    are classified wrong.

Root cause:
    The notebook creates the RNN once right after its class and builds the optimizer
    from that instance; further down, just before the training loop, it creates the RNN
    again under the same name. The loop trains the second instance, whose parameters
    get gradients at every backward, while the optimizer steps the first instance,
    which nothing uses any more.

Ground truth a good tool should report:
    The CharRNN used in training was made at the second `rnn = CharRNN(...)` line,
    after the optimizer was built over the parameters of an earlier instance; its
    gradients are never applied. Remove the second instantiation (or build the
    optimizer after it).
"""
import torch

from model import CharRNN
from trainer import train_batch

torch.manual_seed(0)

n_letters, n_hidden, n_categories = 26, 64, 4
rnn = CharRNN(n_letters, n_hidden, n_categories)
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.05)  # <- CREATED

letters = torch.randint(0, n_letters, (6, 256))
lines = torch.nn.functional.one_hot(letters, n_letters).float()
categories = letters[0] % n_categories

rnn = CharRNN(n_letters, n_hidden, n_categories)  # <- CAUSE

for step in range(20):
    idx = torch.randint(0, 256, (32,))
    loss = train_batch(rnn, optimizer, lines[:, idx], categories[idx])

print(f"final loss {loss:.4f}")
