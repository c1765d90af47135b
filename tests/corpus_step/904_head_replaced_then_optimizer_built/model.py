import torch.nn as nn


class Net(nn.Module):
    def __init__(self, d_in=16, n_classes=10):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(d_in, 48), nn.ReLU(), nn.Linear(48, 48), nn.ReLU())
        self.fc = nn.Linear(48, n_classes)

    def forward(self, x):
        return self.fc(self.features(x))


def replace_head(model, n_classes):
    model.fc = nn.Linear(model.fc.in_features, n_classes)
    return model
