"""Case 591 - a face detector used in the data pipeline turns gradients off for good

Source: https://github.com/choyingw/SynergyNet/pull/22
Category: 5 - global switches are scoped

Root cause:
    (see faceboxes.py) FaceCrops.__getitem__ crops every image around the face
    the detector finds; the detector leaves gradients off.
"""
import torch
from torch.utils.data import Dataset

from faceboxes import FaceBoxes


class FaceCrops(Dataset):
    def __init__(self, images, targets, size=8):
        self.images, self.targets, self.size = images, targets, size
        self.detector = FaceBoxes(size)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        row, col = self.detector(self.images[i])
        crop = self.images[i, row:row + self.size, col:col + self.size]
        return crop.reshape(-1), self.targets[i]
