"""MinGPT's NewGELU, written out with tanh and torch.pow(x, 3.0)
(KernelBench level 1, 88_MinGPTNewGelu)."""
import math

import torch
import torch.nn as nn

batch, dim = 4096, 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return []
