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
import torch.nn.functional as F


def train_batch(rnn, optimizer, lines, categories):
    hidden = rnn.init_hidden(lines.size(1))
    optimizer.zero_grad()
    for i in range(lines.size(0)):
        output, hidden = rnn(lines[i], hidden)
    loss = F.nll_loss(output, categories)
    loss.backward()
    optimizer.step()
    return loss.item()
