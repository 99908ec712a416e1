# Adversarial corpus problem (round 24): a softmax over attention scores whose padding was
# filled with torch.finfo(float32).min before the call (the way Hugging Face models mask:
# masked_fill(~mask, finfo.min), a finite value, not -inf). Each row has a random number of
# real positions L uniform in [1, S], then padding. 256 x 2048 float32 (2 MiB).
import torch
import torch.nn as nn

R, S = 256, 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        return torch.softmax(scores, dim=-1)


def get_inputs():
    x = torch.randn(R, S)
    lengths = torch.randint(1, S + 1, (R, 1))
    pad = torch.arange(S)[None, :] >= lengths
    return [x.masked_fill(pad, torch.finfo(torch.float32).min)]


def get_init_inputs():
    return []
