"""Correct 327 - per-modality saliency with autograd.grad(allow_unused=True, materialize_grads=True) under modality dropout

Pattern: https://docs.pytorch.org/docs/stable/generated/torch.autograd.grad.html
         (allow_unused: inputs not used to compute outputs get None;
         materialize_grads=True returns zeros instead of None)
Category: correct (autograd.grad with inputs that are unused on purpose)

What it does:
    A two-modality (image + audio features) classifier is trained with
    modality dropout: for some batches the audio branch is skipped entirely
    and the model runs on the image only.  After training, an attribution
    routine asks for the gradient of the predicted-class score w.r.t. both
    inputs.  When the audio modality was dropped for a sample batch the audio
    tensor is not in the graph; the routine passes allow_unused=True and
    materialize_grads=True on purpose, so the audio attribution is an
    all-zero tensor ("this modality contributed nothing") instead of an error
    or a None that the report code would have to special-case.

Why a naive tool might flag it:
    autograd.grad is asked for a gradient w.r.t. a tensor that does not reach
    the output; the returned gradient is identically zero; the audio branch's
    parameters get no gradient on the batches where it is dropped.

Ground truth a good tool should report:
    Nothing.
    EXPECT: no findings

Observed (torch 2.13.0, CPU, this script):
    exit code: 0
    stdout:
        loss 1.0793 -> 0.0065
        with audio:    image saliency 0.0381, audio saliency 0.0649
        audio dropped: image saliency 0.0762, audio saliency 0.0 (materialized zeros)
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class AudioVisualNet(nn.Module):
    def __init__(self, n_cls=3):
        super().__init__()
        self.image_enc = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 32), nn.ReLU())
        self.audio_enc = nn.Sequential(nn.Linear(20, 32), nn.ReLU())
        self.head = nn.Linear(32, n_cls)

    def forward(self, image, audio=None):
        h = self.image_enc(image)
        if audio is not None:
            h = 0.5 * (h + self.audio_enc(audio))
        return self.head(h)


def saliency(model, image, audio, use_audio):
    image = image.clone().requires_grad_(True)
    audio = audio.clone().requires_grad_(True)
    logits = model(image, audio if use_audio else None)
    score = logits.gather(1, logits.argmax(1, keepdim=True)).sum()
    g_img, g_aud = torch.autograd.grad(score, (image, audio), allow_unused=True, materialize_grads=True)
    return g_img.abs().mean().item(), g_aud.abs().mean().item()


model = AudioVisualNet()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
images, audio = torch.randn(32, 3, 8, 8), torch.randn(32, 20)
labels = (images.mean(dim=(1, 2, 3)) > 0).long() + (audio[:, 0] > 0).long()

drop = torch.Generator().manual_seed(1)
for step in range(60):
    use_audio = torch.rand((), generator=drop).item() > 0.3      # modality dropout
    loss = F.cross_entropy(model(images, audio if use_audio else None), labels)
    if step == 0:
        first = loss.item()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {first:.4f} -> {loss.item():.4f}")

img_s, aud_s = saliency(model, images[:4], audio[:4], use_audio=True)
print(f"with audio:    image saliency {img_s:.4f}, audio saliency {aud_s:.4f}")
img_s, aud_s = saliency(model, images[:4], audio[:4], use_audio=False)
print(f"audio dropped: image saliency {img_s:.4f}, audio saliency {aud_s} (materialized zeros)")
