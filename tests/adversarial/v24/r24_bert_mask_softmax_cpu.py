# Adversarial corpus problem (round 24): a softmax over attention scores carrying BERT's
# additive padding mask, (1 - mask) * -10000.0 added before the call (the original
# Hugging Face BERT's extended attention mask): real positions hold N(0, 1) scores, padding
# positions the score minus 10000. Each row has L real positions, L uniform in [1, S], then
# padding. 256 x 2048 float32 (2 MiB).
import torch
import torch.nn as nn

R, S = 256, 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, scores: torch.Tensor) -> torch.Tensor:
        return torch.softmax(scores, dim=-1)


def get_inputs():
    lengths = torch.randint(1, S + 1, (R, 1))
    mask = (torch.arange(S)[None, :] < lengths).float()
    return [torch.randn(R, S) + (1.0 - mask) * -10000.0]


def get_init_inputs():
    return []
