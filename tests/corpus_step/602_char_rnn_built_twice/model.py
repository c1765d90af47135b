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
import torch.nn as nn


class CharRNN(nn.Module):
    def __init__(self, n_letters, n_hidden, n_categories):
        super().__init__()
        self.n_hidden = n_hidden
        self.i2h = nn.Linear(n_letters + n_hidden, n_hidden)
        self.i2o = nn.Linear(n_letters + n_hidden, n_categories)

    def forward(self, letter, hidden):
        combined = torch.cat([letter, hidden], 1)
        return torch.log_softmax(self.i2o(combined), 1), torch.tanh(self.i2h(combined))

    def init_hidden(self, batch):
        return torch.zeros(batch, self.n_hidden)
