"""Linear, then scaling by a constant and a swish x * sigmoid(x)
(after KernelBench level 2, 59_Matmul_Swish_Scaling)."""
import torch
import torch.nn as nn

batch, in_features, out_features = 2048, 4096, 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling_factor):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.scaling_factor = scaling_factor

    def forward(self, x):
        x = self.matmul(x)
        x = x * self.scaling_factor
        x = x * torch.sigmoid(x)
        return x


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, 2.0]
