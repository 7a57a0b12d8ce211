"""Softmax over the last dim (KernelBench level 1, 23_Softmax's shape)."""
import torch
import torch.nn as nn

batch, dim = 4096, 16384


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch, dim)]


def get_init_inputs():
    return []
