"""Scaled attention scores and their softmax: softmax(Q K^T / sqrt(d)),
batched (bmm with a transposed operand, scale, softmax over the last dim)."""
import math

import torch
import torch.nn as nn

heads, seq, d = 32, 1024, 64


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, q, k):
        s = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.size(-1))
        return torch.softmax(s, dim=-1)


def get_inputs():
    return [torch.randn(heads, seq, d), torch.randn(heads, seq, d)]


def get_init_inputs():
    return []
