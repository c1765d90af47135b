import torch.nn as nn


class TextClassifier(nn.Module):
    def __init__(self, vocab, n_classes, dim=32, return_tensor=True):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.lstm = nn.LSTM(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, n_classes)
        self.return_tensor = return_tensor

    def forward(self, tokens):
        h, _ = self.lstm(self.embed(tokens))
        outputs = self.head(h.mean(1))
        if self.return_tensor:
            outputs = outputs.data  # <- CAUSE
        return outputs
