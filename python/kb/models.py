"""Small PyTorch models the torch.compile backend (kb.backend) is tested on,
each from its own nn.Module code, forward only: an MLP, a GPT-2 block
(LayerNorm, causal attention as matmul/softmax/matmul or through
F.scaled_dot_product_attention, a GELU MLP, residuals) and a Llama-style
block (RMSNorm, rotary embedding, SwiGLU MLP).

    block = kb.models.GPT2Block(768, 12).eval()
    fast = torch.compile(block, backend="kb")
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    """Linear -> GELU -> Linear -> ReLU -> Linear on (M, dim) rows."""

    def __init__(self, dim=256, hidden=512, out=128):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.fc3 = nn.Linear(hidden, out)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.gelu(self.fc1(x)))))


class GPT2Block(nn.Module):
    """A GPT-2 (MinGPT) transformer block on (B, T, C): pre-LayerNorm causal
    self-attention and a 4x GELU MLP, each with a residual. `sdpa` selects
    F.scaled_dot_product_attention instead of the matmul/softmax/matmul."""

    def __init__(self, dim=256, heads=4, sdpa=False):
        super().__init__()
        self.heads, self.sdpa = heads, sdpa
        self.ln_1 = nn.LayerNorm(dim)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.mlp_proj = nn.Linear(4 * dim, dim)

    def attention(self, x):
        B, T, C = x.shape
        h = self.heads
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, h, C // h).transpose(1, 2)
        k = k.view(B, T, h, C // h).transpose(1, 2)
        v = v.view(B, T, h, C // h).transpose(1, 2)
        if self.sdpa:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(C // h))
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
            att = att.masked_fill(~mask, float("-inf"))
            y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)

    def forward(self, x):
        x = x + self.attention(self.ln_1(x))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


def rotary(x, cos, sin):
    """Rotary position embedding of (B, h, T, d) by (T, d/2) tables."""
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)


class LlamaBlock(nn.Module):
    """A Llama-style block on (B, T, C): RMSNorm, causal attention with
    rotary embeddings (SDPA), RMSNorm, SwiGLU MLP, residuals."""

    def __init__(self, dim=256, heads=4, hidden=None, max_seq=4096):
        super().__init__()
        self.heads = heads
        hidden = hidden or 4 * dim * 2 // 3 // 64 * 64 or 64
        self.attn_norm = nn.RMSNorm(dim, eps=1e-6)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.mlp_norm = nn.RMSNorm(dim, eps=1e-6)
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        d = dim // heads
        inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
        ang = torch.outer(torch.arange(max_seq).float(), inv)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)

    def forward(self, x):
        B, T, C = x.shape
        h = self.attn_norm(x)
        q = self.wq(h).view(B, T, self.heads, -1).transpose(1, 2)
        k = self.wk(h).view(B, T, self.heads, -1).transpose(1, 2)
        v = self.wv(h).view(B, T, self.heads, -1).transpose(1, 2)
        cos, sin = self.cos[:T].to(x.dtype), self.sin[:T].to(x.dtype)
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(y.transpose(1, 2).reshape(B, T, C))
        h = self.mlp_norm(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))
