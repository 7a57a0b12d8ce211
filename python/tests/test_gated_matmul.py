"""kb-fuse-gated-matmul on the importer's Llama MLP (host only): the bf16
LlamaBlock's MLP piece imports w1, silu, w3 and mul as two kb.matmul of one
A (the rms_norm's result), and the pass folds them into one
kb.gated_matmul gate(silu), leaving w2 and the residual add as they were.
The pass is not in kb-compile's pipeline yet (kb.gated_matmul has no
kernel: docs/design.md "Gated matmul"), so kb.explain is unchanged."""
import subprocess

import pytest

torch = pytest.importorskip("torch")
if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("the kb backend needs torch >= 2 (Dynamo)", allow_module_level=True)

import kb.backend as B  # noqa: E402
import kb.models as M  # noqa: E402
from kb.bundle import find_tool  # noqa: E402

from fx_pieces import piece_mlir  # noqa: E402


def _mlp_piece(dtype):
    m = M.LlamaBlock(dim=512, heads=4).eval().to(dtype)
    return piece_mlir(m, [torch.zeros(1, 128, 512, dtype=dtype)], "silu")[2]


def _fuse(mlir):
    kb_opt = find_tool("kb-opt", "KB_OPT")
    if not kb_opt:
        pytest.skip("kb-opt is not built")
    return subprocess.run([kb_opt, "--kb-fuse-gated-matmul", "-"], input=mlir, text=True,
                          capture_output=True, check=True).stdout


def test_llama_mlp_folds_into_one_gated_matmul():
    mlir = _mlp_piece(torch.bfloat16)
    assert mlir.count("kb.matmul") == 4 and "kb.silu" in mlir  # wo, w1, w3, w2
    out = _fuse(mlir)
    gated = [l for l in out.splitlines() if "kb.gated_matmul" in l]
    assert len(gated) == 1, out
    line = gated[0]
    assert "gate(silu) transpose_b" in line
    assert ("tensor<128x512xbf16>, tensor<1344x512xbf16>, tensor<1344x512xbf16> -> "
            "tensor<128x1344xbf16>") in line
    # Its A is the rms_norm's result; B1 is w1's weight and B2 w3's.
    a = line.split("kb.gated_matmul ")[1].split(",")[0]
    assert any(l.strip().startswith(f"{a} = kb.rms_norm") for l in out.splitlines())
    sig = out.split("func.func @kb_piece(")[1].split(") ->")[0]
    names = {a.split(":")[0].strip(): a.split('kb.name = "')[1].split('"')[0]
             for a in sig.split("}, ")}
    b1, b2 = (v.strip() for v in line.split("kb.gated_matmul ")[1].split(" gate")[0].split(",")[1:])
    assert "w1_parameters_weight" in names[b1] and "w3_parameters_weight" in names[b2], names
    # wo and w2 stay matmuls; the silu and the mul are gone.
    assert out.count("kb.matmul") == 2 and "kb.silu" not in out and "kb.mul " not in out


def test_llama_mlp_explain_is_unchanged():
    """Not in the pipeline: the backend's MLP piece still has the ops it had."""
    part = B.explain(M.LlamaBlock(dim=512, heads=4).eval().to(torch.bfloat16),
                     torch.zeros(1, 128, 512, dtype=torch.bfloat16), print_=False)[0]
    mlp = [p for p in part.pieces if "silu" in p.ops]
    assert len(mlp) == 1 and {"matmul", "silu", "mul"} <= set(mlp[0].ops)
