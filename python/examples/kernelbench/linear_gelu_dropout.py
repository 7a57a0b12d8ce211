"""Linear + GELU (exact) + dropout, in training mode (kb.dropout, checked
against PyTorch with kb's own mask). KernelBench format."""
import torch
import torch.nn as nn

batch, in_features, out_features = 2048, 4096, 4096


class Model(nn.Module):
    def __init__(self, in_features, out_features, p):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.gelu = nn.GELU()
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return self.drop(self.gelu(self.fc(x)))


def get_inputs():
    return [torch.randn(batch, in_features)]


def get_init_inputs():
    return [in_features, out_features, 0.1]
