"""Case 505 - optimizer built over a first model instance, training runs on a second one

Source: https://github.com/spro/practical-pytorch/issues/9
        "loss is big, and loss flow up and down, do not diminish."
Category: 2 - every gradient backward produces is consumed

Reported symptom:
    Replacing the hand-written parameter update with optimizer.step() in the
    char-RNN classification tutorial makes training stop working: the loss stays
    large and only fluctuates.

Root cause:
    The RNN is instantiated twice. The optimizer is created right after the first
    instance; the script later rebinds `rnn` to a fresh instance, which is the one
    used in the forward pass. Backward fills the .grad of the new instance, but
    optimizer.step() only looks at the old, unused parameters.

Ground truth a good tool should report:
    The parameters that receive gradients are not held by any optimizer, and the
    optimizer's parameters never receive gradients. The model used for training
    was re-created after the optimizer was built (the second `rnn = CharRNN(...)`
    line); the optimizer was created over the first instance.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

n_letters, n_hidden, n_categories = 12, 32, 3


class CharRNN(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(input_size + hidden_size, output_size)

    def forward(self, letter, hidden):
        combined = torch.cat((letter, hidden), 1)
        return self.i2o(combined), torch.tanh(self.i2h(combined))

    def init_hidden(self, batch):
        return torch.zeros(batch, self.hidden_size)


rnn = CharRNN(n_letters, n_hidden, n_categories)
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.05)  # <- CREATED

# synthetic "names": each category prefers a different band of letters
categories = torch.randint(0, n_categories, (64,))
letters = (categories[:, None] * 4 + torch.randint(0, 4, (64, 6))) % n_letters
lines = F.one_hot(letters, n_letters).float()


def train_batch(category, line_tensor):
    hidden = rnn.init_hidden(line_tensor.shape[0])
    optimizer.zero_grad()
    for i in range(line_tensor.shape[1]):
        output, hidden = rnn(line_tensor[:, i], hidden)
    loss = F.cross_entropy(output, category)
    loss.backward()
    optimizer.step()
    return loss.item()


rnn = CharRNN(n_letters, n_hidden, n_categories)  # <- CAUSE

for step in range(30):
    idx = torch.randint(0, 64, (16,))
    loss = train_batch(categories[idx], lines[idx])

print(f"final loss {loss:.4f}")
