"""Linear (with its bias) + ReLU, written with F.linear and torch.relu."""
import torch
import torch.nn as nn
import torch.nn.functional as F

batch, in_features, out_features = 2048, 4096, 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / in_features ** 0.5)
        self.bias = nn.Parameter(torch.randn(out_features))

    def forward(self, x):
        return torch.relu(F.linear(x, self.weight, self.bias))


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features]
