"""Case 171 - sharing encoder/decoder embeddings after tying the output layer unties the output layer

Source: https://github.com/huggingface/transformers/pull/8224
        "Add encoder-decoder word embeddings tying by default", review thread:
        "Before we tie encoder-decoder embedding matrices, decoder output matrix
        is tied to decoder input matrix. If I remove this line decoder output
        matrix will point to the old decoder embedding matrix."
        (ordering question also in
        https://discuss.pytorch.org/t/unexpected-behavior-with-weight-sharing-between-nn-linear-and-nn-embedding/212223)
Category: wiring (weight tying broken by re-assigning one side)

Reported symptom:
    No error.  The model is meant to have ONE token matrix (encoder input,
    decoder input and output projection all tied), but it trains two: the
    output projection drifts away from the embeddings, the parameter count is
    larger than expected and the checkpoint stores two different matrices.

Root cause:
    In __init__, `self.proj.weight = self.dec_emb.weight` makes the output
    projection hold the decoder-embedding Parameter object.  Later
    `model.dec_emb.weight = model.enc_emb.weight` re-points only the decoder
    embedding at the encoder's Parameter; `proj.weight` keeps referring to the
    old decoder Parameter, which no embedding uses any more.  Tying is by object
    identity, so re-assigning one side silently unties the other.

Ground truth a good tool should report:
    After line 74, `proj.weight` is no longer the same tensor as
    `dec_emb.weight`/`enc_emb.weight` although it was tied at line 58: the
    re-assignment at line 74 left it on the old decoder-embedding Parameter.
    Re-tie `proj.weight` after sharing (or share in the other order).
    EXPECT: kind=tying_broken; params=proj.weight,dec_emb.weight; cause_line=74

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        unique parameters with decoder tying only: 1056
        unique parameters after 'three-way' tying: 1056 (expected 960 if all three were
          one matrix)
        proj.weight is dec_emb.weight: False
        loss 1.675; max |proj.weight - dec_emb.weight| after training: 3.794
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, DIM = 12, 8


class TinySeq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc_emb = nn.Embedding(VOCAB, DIM)
        self.dec_emb = nn.Embedding(VOCAB, DIM)
        self.encoder = nn.GRU(DIM, DIM, batch_first=True)
        self.decoder = nn.GRU(DIM, DIM, batch_first=True)
        self.proj = nn.Linear(DIM, VOCAB, bias=False)
        self.proj.weight = self.dec_emb.weight  # <- CREATED: tie decoder input/output embeddings

    def forward(self, src, tgt_in):
        _, h = self.encoder(self.enc_emb(src))
        out, _ = self.decoder(self.dec_emb(tgt_in), h)
        return self.proj(out)


def n_unique_params(m):
    return sum(p.numel() for p in {id(p): p for p in m.parameters()}.values())


model = TinySeq2Seq()
print("unique parameters with decoder tying only:", n_unique_params(model))

# same vocabulary on both sides: share the source and target embeddings too
model.dec_emb.weight = model.enc_emb.weight  # <- CAUSE: proj.weight still points at the old dec_emb Parameter
print("unique parameters after 'three-way' tying:", n_unique_params(model),
      "(expected", n_unique_params(model) - VOCAB * DIM, "if all three were one matrix)")
print("proj.weight is dec_emb.weight:", model.proj.weight is model.dec_emb.weight)

optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
src = torch.randint(1, VOCAB, (16, 5))
tgt_in = torch.cat([torch.zeros(16, 1, dtype=torch.long), src[:, :-1]], dim=1)
for step in range(30):
    optimizer.zero_grad()
    logits = model(src, tgt_in)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), src.reshape(-1))
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.3f}; max |proj.weight - dec_emb.weight| after training: "
      f"{(model.proj.weight - model.dec_emb.weight).abs().max():.3f}")
