"""kb.attention's bthd layout on the host (no GPU; issue #47): the heads'
transpose(1, 2) of q, k, v in front of F.scaled_dot_product_attention and
of its result behind it fold into one kb.attention bthd ([B, T, H, D]
operands and result, no copy), for the Llama block (rotary, then the
transposes) and the GPT-2 block with SDPA; what the importer refuses
around it; and the compiled blocks against eager on CPU (the pieces run by
PyTorch)."""
import pytest

torch = pytest.importorskip("torch")
if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("the kb backend needs torch >= 2 (Dynamo)", allow_module_level=True)

import torch.nn.functional as F  # noqa: E402

import kb  # noqa: E402
import kb.backend as B  # noqa: E402
import kb.models as M  # noqa: E402
from kb.ir import KbError, Program  # noqa: E402
from kb.partition import bindings, import_piece, partition, piece_graph  # noqa: E402

from conftest import parse_with_kb_opt  # noqa: E402
from fx_pieces import capture, piece_mlir  # noqa: E402


def attention_piece_mlir(model, x):
    return piece_mlir(model, [x], "attention")


def test_llama_explain_folds_the_transposes():
    """Before: 6 ops left to PyTorch (the four transposes, two getitems of
    the tables). After: the transposes are in the attention's piece."""
    part = kb.explain(M.LlamaBlock(dim=512, heads=4).to(torch.bfloat16),
                      torch.randn(1, 256, 512, dtype=torch.bfloat16), print_=False)[0]
    left = {l.node: l.reason for l in part.left_out}
    assert not any("transpose" in r for r in left.values()), part.text()
    assert sorted(left) == ["getitem", "getitem_1"], part.text()
    attn = [p for p in part.pieces if "attention" in p.ops]
    assert len(attn) == 1 and {"transpose_3", "transpose_4", "transpose_5", "v", "y"} <= set(attn[0].nodes)
    assert len(part.pieces) == 3


def test_gpt2_sdpa_explain_folds_the_transposes():
    part = kb.explain(M.GPT2Block(768, 12, sdpa=True).to(torch.bfloat16),
                      torch.randn(2, 128, 768, dtype=torch.bfloat16), print_=False)[0]
    left = {l.node: l.reason for l in part.left_out}
    assert sorted(left) == ["k", "q", "v"], part.text()  # the split's getitems
    attn = next(p for p in part.pieces if "attention" in p.ops)
    assert {"q_1", "k_1", "v_1", "y", "transpose_3"} <= set(attn.nodes)


def test_gpt2_written_out_attention_folds_too():
    """GPT2Block's default (q @ k^T * c, causal masked_fill, softmax, @ v of
    heads' transposes) becomes SDPA (fold_explicit_attention), then the same
    bthd piece. Before: 10 ops left to PyTorch (the transposes, views and
    getitems), the attention's piece cut from the transposes."""
    part = kb.explain(M.GPT2Block(768, 12).to(torch.bfloat16),
                      torch.randn(2, 128, 768, dtype=torch.bfloat16), print_=False)[0]
    left = {l.node: l.reason for l in part.left_out}
    assert sorted(left) == ["k", "q", "v"], part.text()
    attn = next(p for p in part.pieces if "attention" in p.ops)
    assert {"q_1", "k_1", "v_1", "scaled_dot_product_attention", "transpose_4"} <= set(attn.nodes)
    assert not any(n.startswith(("matmul", "softmax", "causal_fill")) for n in attn.nodes)
    _, _, mlir = attention_piece_mlir(M.GPT2Block(64, 4).to(torch.bfloat16),
                                      torch.zeros(2, 16, 64, dtype=torch.bfloat16))
    line = next(l for l in mlir.splitlines() if "kb.attention" in l)
    assert "scale(0.25) causal bthd : tensor<2x16x4x16xbf16>" in line, line


class _NotHeads(torch.nn.Module):
    """The written-out attention of [B, H, T, D] inputs (no heads' transposes):
    left for kb-fuse-attention, as before."""
    def forward(self, q, k, v):
        return torch.softmax((q @ k.transpose(-2, -1)) * 0.25, dim=-1) @ v


class _Stacklevel(torch.nn.Module):
    """F.softmax's third positional argument is _stacklevel, not dtype: the
    written-out attention still folds; a k of one head (broadcast) does not."""
    def __init__(self, k_heads=4):
        super().__init__()
        self.k_heads = k_heads

    def forward(self, x, y):
        q = x.view(2, 16, 4, 8).transpose(1, 2)
        k = y.view(2, 16, self.k_heads, 8).transpose(1, 2)
        v = x.view(2, 16, 4, 8).transpose(1, 2)
        s = (q @ k.transpose(-2, -1)) * 0.25
        return (F.softmax(s, -1, 3) if self.k_heads == 4 else torch.softmax(s, dim=-1)) @ v


@pytest.mark.parametrize("k_heads,folds", [(4, True), (1, False)])
def test_written_out_attention_fold_reads_softmax_args_and_heads(k_heads, folds):
    gm, ex = capture(_Stacklevel(k_heads), torch.randn(2, 16, 32), torch.randn(2, 16, 8 * k_heads))
    names = [n.name for n in partition(gm, ex).graph_module.graph.nodes]
    assert any("scaled_dot" in n for n in names) == folds, names


def test_written_out_attention_without_heads_transposes_is_left_alone():
    gm, ex = capture(_NotHeads(), *(torch.randn(2, 4, 16, 8) for _ in range(3)))
    part = partition(gm, ex)
    names = [n.name for n in part.graph_module.graph.nodes]
    assert "softmax" in names and not any("scaled_dot" in n for n in names)


@pytest.mark.parametrize("dtype,ty", [(torch.float32, "f32"), (torch.bfloat16, "bf16")])
def test_llama_attention_imports_as_bthd(kb_opt, dtype, ty):
    """The piece's kb.attention reads the projections' [1, 128, 4, 64]
    views as they are and writes [1, 128, 4, 64]; kb-opt verifies it."""
    m = M.LlamaBlock(dim=256, heads=4).to(dtype)
    _, p, mlir = attention_piece_mlir(m, torch.zeros(1, 128, 256, dtype=dtype))
    line = next(l for l in mlir.splitlines() if "kb.attention" in l)
    assert " causal bthd" in line
    assert f"tensor<1x128x4x64x{ty}>, tensor<1x128x4x64x{ty}>, tensor<1x128x4x64x{ty}> -> tensor<1x128x4x64x{ty}>" \
        in line, line
    assert "kb.transpose" not in mlir
    parse_with_kb_opt(kb_opt, mlir)


@pytest.mark.parametrize("model", ["llama", "gpt2", "gpt2-sdpa"])
def test_compiled_blocks_match_eager_on_cpu(model):
    torch.manual_seed(0)
    m = {"llama": M.LlamaBlock(64, 4, max_seq=32), "gpt2": M.GPT2Block(64, 4),
         "gpt2-sdpa": M.GPT2Block(64, 4, sdpa=True)}[model].eval()
    fast = torch.compile(m, backend="kb")
    x = torch.randn(2, 16, 64)
    with torch.no_grad():
        torch.testing.assert_close(fast(x), m(x), rtol=1e-5, atol=1e-5)
    part = B.PARTITIONS[-1]
    assert not any("transpose" in l.reason for l in part.left_out)


class _Mixed(torch.nn.Module):
    """q transposed from [B, T, H, D], k and v given as [B, H, T, D]."""
    def forward(self, x, k, v):
        q = x.view(2, 16, 4, 8).transpose(1, 2)
        return F.scaled_dot_product_attention(q, k, v)


class _Other(torch.nn.Module):
    """transpose(1, 2) of a rank-4 tensor read by a mul."""
    def forward(self, x):
        return x.view(2, 16, 4, 8).transpose(1, 2) * 2.0


def _import_whole(model, *inputs):
    gm, ex = capture(model, *inputs)
    part = partition(gm, ex)
    g = part.graph_module
    calls = [n for n in g.graph.nodes if n.op in ("call_function", "call_method")]
    pg, _ = piece_graph(g, calls, [calls[-1]])
    return part, lambda: import_piece(pg, bindings(g, ex))


def test_refusals_name_the_reason():
    """Imported whole, the mixed SDPA and the transposed tensor read by a mul
    are refused in one line; the partitioner then leaves the views to
    PyTorch and keeps the op (the SDPA on [B, H, T, D] tensors, as before)."""
    part, imp = _import_whole(_Mixed(), torch.randn(2, 16, 32), torch.randn(2, 4, 16, 8), torch.randn(2, 4, 16, 8))
    with pytest.raises(KbError, match=r"only some are transpose\(1, 2\) of a rank-4 tensor") as e:
        imp()
    assert "\n" not in str(e.value).split("\n  at")[0]
    assert [p.ops for p in part.pieces] == [["attention"]]
    part, imp = _import_whole(_Other(), torch.randn(2, 16, 32))
    with pytest.raises(KbError, match="read by anything but scaled_dot_product_attention"):
        imp()
    assert [p.nodes for p in part.pieces] == [["mul"]]


def test_program_attention_bthd(kb_opt):
    p = Program()
    q = p.input("q", (2, 100, 4, 64), "bf16")
    k = p.input("k", (2, 300, 4, 64), "bf16")
    v = p.input("v", (2, 300, 4, 32), "bf16")
    o = p.attention(q, k, v, 0.125, causal=True, bthd=True)
    assert o.shape == (2, 100, 4, 32)
    p.output(o, "o")
    assert "causal bthd : tensor<2x100x4x64xbf16>" in p.mlir()
    parse_with_kb_opt(kb_opt, p.mlir())
    with pytest.raises(KbError, match="bthd needs q, k, v of rank 4"):
        p.attention(p.input("q3", (8, 100, 64), "bf16"), p.input("k3", (8, 100, 64), "bf16"),
                    p.input("v3", (8, 100, 64), "bf16"), 0.125, bthd=True)
    with pytest.raises(KbError, match="one leading shape"):
        p.attention(q, p.input("k2", (2, 300, 2, 64), "bf16"), v, 0.125, bthd=True)
