"""Case 363 - correct: input embedding and output projection tied, pretrained weights loaded in place

Source: https://github.com/pytorch/examples/blob/main/word_language_model/model.py
        (`if tie_weights: self.decoder.weight = self.encoder.weight`, "Using the
        Output Embedding to Improve Language Models", Press & Wolf 2016)
Category: correct code a naive tool flags (one Parameter used by two modules)

What the code does:
    A small GRU language model ties `decoder.weight = embed.weight` in
    __init__, before the optimizer is built.  "Pretrained" embeddings are then
    loaded with `load_state_dict`, which copies into the existing Parameter
    (in place), so the tie survives; the model is trained with teacher forcing.
    The shared matrix receives the sum of two gradient contributions (lookup
    and projection) and is stepped once per iteration.

Why a naive tool might flag it:
    One leaf is used by two modules and appears twice in `state_dict()`;
    `named_parameters()` lists it once; the embedding gradient is the sum of
    a sparse-looking lookup gradient and a dense projection gradient.

Ground truth a good tool should report:
    Nothing: the tie is intact at the end (same object, zero difference).
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        step  0 loss 3.4905
        step 39 loss 1.7148
        decoder.weight is embed.weight: True
        named parameters: ['embed.weight', 'rnn.weight_ih_l0', 'rnn.weight_hh_l0'] ...
        state_dict keys sharing storage: True
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class TiedGRULM(nn.Module):
    def __init__(self, vocab=20, dim=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rnn = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.Linear(dim, vocab)
        self.decoder.weight = self.embed.weight

    def forward(self, tokens):
        out, _ = self.rnn(self.embed(tokens))
        return self.decoder(out)


model = TiedGRULM()
pretrained = {k: v.clone() + 0.01 for k, v in model.state_dict().items()}
model.load_state_dict(pretrained)  # copies in place: tie preserved
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)

corpus = torch.randint(0, 20, (8, 13))
inputs, targets = corpus[:, :-1], corpus[:, 1:]
for step in range(40):
    optimizer.zero_grad()
    logits = model(inputs)
    loss = F.cross_entropy(logits.reshape(-1, 20), targets.reshape(-1))
    loss.backward()
    optimizer.step()
    if step in (0, 39):
        print(f"step {step:2d} loss {loss.item():.4f}")

print("decoder.weight is embed.weight:", model.decoder.weight is model.embed.weight)
print("named parameters:", [n for n, _ in model.named_parameters()][:3], "...")
print("state_dict keys sharing storage:",
      model.state_dict()["decoder.weight"].data_ptr() == model.state_dict()["embed.weight"].data_ptr())
