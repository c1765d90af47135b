import torch.nn as nn


class EmbeddingModel(nn.Module):
    def __init__(self, d_in=24, d_emb=16):
        super().__init__()
        self.img_enc = nn.Sequential(
            nn.Linear(d_in, 48), nn.BatchNorm1d(48), nn.ReLU(), nn.Dropout(0.3), nn.Linear(48, d_emb)
        )
        self.txt_enc = nn.Sequential(nn.Linear(d_in, 48), nn.ReLU(), nn.Dropout(0.3), nn.Linear(48, d_emb))

    def train_start(self):
        self.img_enc.train()
        self.txt_enc.train()

    def val_start(self):
        self.img_enc.eval()
        self.txt_enc.eval()

    def forward(self, img, txt):
        return self.img_enc(img), self.txt_enc(txt)
