"""optimizer got an empty parameter list"""

import torch

model = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Flatten())
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)  # <- CAUSE
