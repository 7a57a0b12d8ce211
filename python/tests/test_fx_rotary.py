"""Rotary embeddings on the host (no GPU): fold_rotary's rewrite of
kb.models.rotary into rotary_rows (in front of the heads' view of a
linear), its numerics against eager on CPU, kb.explain of the Llama block
(the rotary in the q/k projections' kb piece), the kb.rotary it imports
to, and the forms it leaves alone."""
import pytest

torch = pytest.importorskip("torch")
if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("the kb backend needs torch >= 2 (Dynamo)", allow_module_level=True)

import kb  # noqa: E402
import kb.backend as B  # noqa: E402
import kb.models as M  # noqa: E402
from kb.fx_rotary import fold_rotary, rotary_rows  # noqa: E402
from kb.ir import KbError, Program  # noqa: E402
from kb.partition import partition  # noqa: E402

from fx_pieces import capture, piece_mlir  # noqa: E402


def tables(t, d):
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2).float() / d))
    ang = torch.outer(torch.arange(t).float(), inv)
    return ang.cos(), ang.sin()


def test_rotary_rows_is_the_interleaved_rotation_of_the_heads():
    """rotary_rows of a (B, T, h*d) linear output, viewed as heads, is
    kb.models.rotary of the heads; of (B, h, T, d) itself too."""
    torch.manual_seed(0)
    b, t, h, d = 2, 16, 4, 8
    y = torch.randn(b, t, h * d)
    cos, sin = tables(t, d)
    heads = y.view(b, t, h, d).transpose(1, 2)
    want = M.rotary(heads, cos, sin)
    got = rotary_rows(y, cos, sin).view(b, t, h, d).transpose(1, 2)
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(rotary_rows(heads.contiguous(), cos, sin), want, rtol=1e-6, atol=1e-6)
    # 16-bit: f32 arithmetic, rounded once (within one bf16 rounding of eager's).
    yb = y.bfloat16()
    gb = rotary_rows(yb, cos.bfloat16(), sin.bfloat16())
    assert gb.dtype == torch.bfloat16
    ref = rotary_rows(yb.float(), cos.bfloat16().float(), sin.bfloat16().float())
    torch.testing.assert_close(gb.float(), ref, rtol=2 ** -8, atol=1e-6)


def test_llama_block_folds_and_matches_eager():
    """Dynamo's graph of the Llama block: both rotaries fold (the strided
    slices, muls and stacks are gone) and the rewritten graph, run by
    PyTorch on CPU, gives eager's result."""
    torch.manual_seed(0)
    m = M.LlamaBlock(64, 4, max_seq=32).eval()
    x = torch.randn(2, 16, 64)
    gm, ex = capture(m, x)
    part = partition(gm, ex)
    g = part.graph_module
    names = [n.name for n in g.graph.nodes]
    assert sum(n.startswith("rotary_rows") for n in names) == 2
    assert not any(n.startswith(("stack", "x1", "x2", "mul_1")) for n in names)
    with torch.no_grad():
        torch.testing.assert_close(g(*ex)[0] if isinstance(g(*ex), tuple) else g(*ex), m(x),
                                   rtol=1e-5, atol=1e-5)


def test_llama_explain_puts_the_rotary_in_the_projections_piece():
    part = kb.explain(M.LlamaBlock(dim=256, heads=4).eval(), torch.randn(1, 128, 256), print_=False)[0]
    text = part.text()
    proj = [p for p in part.pieces if "rotary" in p.ops]
    assert len(proj) == 1 and {"rms_norm", "matmul", "rotary"} <= set(proj[0].ops)
    assert sum(n.startswith("rotary_rows") for n in proj[0].nodes) == 2
    left = {l.node for l in part.left_out}
    assert not any(n.startswith(("mul", "stack", "x1", "x2")) for n in left if n != "mul_8")
    assert len(part.left_out) <= 6, text
    assert "kb ops: rms_norm, matmul, rotary" in text


def _projection_piece(dtype):
    m = M.LlamaBlock(dim=256, heads=4).eval().to(dtype)
    return piece_mlir(m, [torch.zeros(1, 128, 256, dtype=dtype)], "rotary")[2]


@pytest.mark.parametrize("dtype,ty", [(torch.float32, "f32"), (torch.bfloat16, "bf16")])
def test_rotary_imports_on_the_linears_rows(dtype, ty):
    """kb.rotary on each projection's (B*T, h*d) rows, its tables (T, d/2):
    the input kb-fuse-elementwise makes the matmul's epilogue."""
    mlir = _projection_piece(dtype)
    rot = [l for l in mlir.splitlines() if "kb.rotary" in l]
    assert len(rot) == 2
    for line in rot:
        assert (f": tensor<128x256x{ty}>, tensor<128x32x{ty}>, tensor<128x32x{ty}> -> tensor<128x256x{ty}>"
                in line)
        src = line.split("kb.rotary %")[1].split(",")[0]
        assert any(l.strip().startswith(f"%{src} = kb.matmul") for l in mlir.splitlines())


def test_forms_left_alone():
    """A rotation by tables that are not (T, d/2) of x, and the stack along
    another axis, are not folded: PyTorch runs them as before."""
    class Wrong(torch.nn.Module):
        def forward(self, x, cos, sin):
            x1, x2 = x[..., ::2], x[..., 1::2]
            return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1).flatten(-2)

    x = torch.randn(2, 4, 16, 8)
    cos, sin = tables(16, 8)
    gm, ex = capture(Wrong(), x, cos[:1], sin[:1])  # (1, d/2): broadcast, not one row a position
    assert fold_rotary(gm) == 0

    class OtherAxis(torch.nn.Module):
        def forward(self, x, cos, sin):
            x1, x2 = x[..., ::2], x[..., 1::2]
            return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=0).flatten(-2)

    gm, ex = capture(OtherAxis(), x, cos, sin)
    assert fold_rotary(gm) == 0


def test_program_rotary_checks_its_operands():
    p = Program("r")
    x = p.input("x", (8, 64))
    c, s = p.input("c", (8, 16)), p.input("s", (8, 16))
    y = p.rotary(x, c, s)
    p.output(y)
    assert "kb.rotary %x, %c, %s : tensor<8x64xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x64xf32>" in p.mlir()
    bad = p.input("bad", (8, 24))
    with pytest.raises(KbError, match="head_dim 48 does not divide the last axis 64"):
        p.rotary(x, bad, bad)
