"""The importer's compositions (fx_compose.py, fx_emit.vector_value): each
PyTorch form imports, the kb program it writes computes PyTorch's result
(kb_eval.py runs the program in float64), kb-opt parses it, and what kb
does not compose is refused in one located line."""
import copy

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

import kb
import kb_eval
from conftest import parse_with_kb_opt


class Wrap(nn.Module):
    def __init__(self, fn, **mods):
        super().__init__()
        self.fn = fn
        for k, v in mods.items():
            setattr(self, k, v)

    def forward(self, x):
        return self.fn(self, x)


def check(model, *inputs, tol=1e-6):  # kb writes constants as f32
    torch.manual_seed(0)
    imp = kb.import_torch(model, inputs, precision="ieee")
    got = kb_eval.run(imp, inputs, model if isinstance(model, nn.Module) else None)
    with torch.no_grad():
        want = model(*[t.double() for t in inputs]) if not isinstance(model, nn.Module) else \
            copy.deepcopy(model).double()(*[t.double() for t in inputs])
    wants = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(wants)
    for g, w in zip(got, wants):
        assert g.numel() == w.numel()
        torch.testing.assert_close(g.reshape(w.shape), w, rtol=tol, atol=tol)
    return imp


R = lambda *s: torch.rand(*s) + 0.1  # noqa: E731
N = lambda *s: torch.randn(*s)  # noqa: E731

CASES = {
    "max dim [0]": (lambda x: torch.max(x, 1)[0], [N(6, 9)]),
    "min dim keepdim .values": (lambda x: x.min(dim=1, keepdim=True).values + 1.0, [N(6, 9)]),
    "max all, maximum": (lambda x, y: (torch.max(x), torch.max(x, y)), [N(6, 9), N(6, 9)]),
    "logsumexp keepdim": (lambda x: torch.logsumexp(x * 20.0, dim=1, keepdim=True), [N(6, 9)]),
    "logsumexp size-1 dim": (lambda x: torch.logsumexp(x.sum(1, keepdim=True), dim=1), [N(6, 9)]),
    "vector mul, div, min, max": (lambda x, v: torch.minimum(x * v, v) / v + torch.maximum(v, x),
                                  [N(6, 9), R(9)]),
    "hinge": (lambda p, t: torch.mean(torch.clamp(1 - p * t, min=0)), [N(6, 9), N(9)]),
    "frobenius": (lambda x: x / torch.norm(x, p="fro"), [N(2, 3, 4)]),
    "norm dim": (lambda x: torch.linalg.norm(x, dim=1) + x.norm(p=1, dim=1), [N(6, 9)]),
    "smooth_l1, huber, mse": (lambda a, b: F.smooth_l1_loss(a, b) + F.huber_loss(a, b, delta=0.5)
                              + F.mse_loss(a, b, reduction="sum"), [N(6, 9) * 2, N(6, 9)]),
    "kl_div batchmean, zeros in target": (lambda p, t: F.kl_div(torch.log(p), t * (t > 0.5), reduction="batchmean"),
                                          [R(6, 9), R(6, 9)]),
    "triplet": (lambda a, p, n: F.triplet_margin_loss(a, p, n, margin=0.5), [N(6, 9), N(6, 9), N(6, 9)]),
    "einsum bijl,lk": (lambda a, b: torch.einsum("bijl,lk->bijk", a, b), [N(2, 3, 4, 5), N(5, 6)]),
    "einsum bik,bkj": (lambda a, b: torch.einsum("bik,bkj->bij", a, b), [N(2, 3, 4), N(2, 4, 5)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_function(name, kb_opt):
    fn, inputs = CASES[name]
    if name.startswith("kl_div"):  # the mask is made outside: the kernel sees zeros in t
        t = inputs[1] * (inputs[1] > 0.5)
        fn, inputs = (lambda p, t: F.kl_div(torch.log(p), t, reduction="batchmean")), [inputs[0], t]
    imp = check(fn, *inputs)
    parse_with_kb_opt(kb_opt, imp.program.mlir())


def test_batchnorm1d_train_and_eval(kb_opt):
    m = Wrap(lambda s, x: s.bn(s.fc(x)) * 2.0, fc=nn.Linear(7, 5), bn=nn.BatchNorm1d(5))
    with torch.no_grad():
        m.bn.weight.uniform_(0.5, 2)
        m.bn.bias.uniform_(-1, 1)
        m.bn.running_mean.uniform_(-1, 1)
        m.bn.running_var.uniform_(0.5, 2)
    x = N(8, 7)
    imp = check(m, x)  # training mode: batch statistics (PyTorch's default, KernelBench's)
    assert "kb.reduce" in imp.program.mlir()
    parse_with_kb_opt(kb_opt, imp.program.mlir())
    m.eval()
    imp = check(m, x)
    assert "bn_running_var" in imp.program.mlir() and "kb.reduce" not in imp.program.mlir()


def test_batchnorm_no_affine():
    check(Wrap(lambda s, x: s.bn(x), bn=nn.BatchNorm1d(5, affine=False)), N(8, 5))


def test_instance_norm_of_input_and_of_a_value(kb_opt):
    check(Wrap(lambda s, x: s.n(x), n=nn.InstanceNorm2d(3)), N(2, 3, 4, 5))
    m = Wrap(lambda s, x: s.n(s.fc(x).unsqueeze(1).unsqueeze(1)).squeeze(1).squeeze(1),
             fc=nn.Linear(6, 8), n=nn.InstanceNorm2d(8))
    imp = check(m, N(4, 6))
    parse_with_kb_opt(kb_opt, imp.program.mlir())


def test_zero_d_parameter_onto_an_input():
    m = Wrap(lambda s, x: (torch.min(x, s.c), x * s.c), c=nn.Parameter(torch.tensor(0.3)))
    check(m, N(4, 6))


REFUSED = {
    "max indices": (lambda x: torch.max(x, 1)[1].float(), "the indices of torch.max(x, dim)"),
    "logsumexp dim 0": (lambda x: torch.logsumexp(x, 0), "logsumexp over dim=0"),
    "norm p 3": (lambda x: torch.norm(x, p=3), "norm with p=3"),
    "einsum trace-like": (lambda x: torch.einsum("ij,jk->ik", x, x) + torch.einsum("ij->ji", x),
                          "einsum 'ij->ji' of 1 operands"),
    "column broadcast": (lambda x: x / torch.softmax(x.sum(1, keepdim=True), -1),
                         "kb broadcasts only a vector along the last axis"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    fn, msg = REFUSED[name]
    with pytest.raises(kb.KbImportError) as e:
        kb.import_torch(fn, (N(6, 6),))
    assert msg in str(e.value)
    assert "test_fx_compose.py:" in str(e.value)  # the user's line


def test_instance_norm_affine_refused():
    with pytest.raises(kb.KbImportError, match="affine=True"):
        kb.import_torch(Wrap(lambda s, x: s.n(x), n=nn.InstanceNorm2d(3, affine=True)), (N(2, 3, 4, 5),))


def test_elementwise_on_a_reshaped_result_keeps_it_rows_refused():
    x = N(8, 16)
    check(lambda x: torch.relu(x.sum(1, keepdim=True).reshape(2, 4)) * 2.0, x)
    with pytest.raises(kb.KbImportError, match="reshaped result"):
        kb.import_torch(lambda x: torch.softmax(x.sum(1).reshape(2, 4), -1), (x,))


def test_layer_norm_over_several_dims_of_an_input(kb_opt):
    m = Wrap(lambda s, x: s.ln(x), ln=nn.LayerNorm((3, 4)))
    with torch.no_grad():
        m.ln.weight.uniform_(0.5, 2)
        m.ln.bias.uniform_(-1, 1)
    imp = check(m, N(2, 5, 3, 4))
    assert "tensor<10x12xf32>" in imp.program.mlir()
    parse_with_kb_opt(kb_opt, imp.program.mlir())


def test_column_of_an_input_through_transposes(kb_opt):
    imp = check(lambda a, b: a.unsqueeze(1) * b, N(5), N(5, 7))  # KernelBench level 1, 12
    assert imp.program.mlir().count("kb.transpose") == 2
    check(lambda a, b: a.unsqueeze(1) - b, N(5), N(5, 7))
    parse_with_kb_opt(kb_opt, imp.program.mlir())


def test_computed_column_against_rows(kb_opt):
    x = N(6, 9)
    for fn in (lambda x: x / torch.sum(torch.abs(x), dim=1, keepdim=True),  # level 1, 38
               lambda x: x / torch.norm(x, p=2, dim=1, keepdim=True),  # 39
               lambda x: F.gelu(torch.logsumexp((x * 2.0).mean(1, keepdim=True), 1, keepdim=True)) + x):  # level 2, 51
        text = check(fn, x).program.mlir()
        assert "keepdim" not in text and text.count("kb.transpose") == 2  # the (R, 1) column pruned
        parse_with_kb_opt(kb_opt, text)
