"""kb from Python: write kb programs, import PyTorch code, compile it with
kb-opt, call the kernels on torch CUDA tensors, benchmark and plot.

    import kb
    bundle = kb.compile(model, (x,), chip="sm_90a")   # needs kb-opt
    fast = kb.load(bundle)                            # needs the GPU only
    y = fast(x)                                       # x: a CUDA tensor
    fast = torch.compile(model, backend="kb")         # whole models (kb.backend)
    kb.explain(model, x)                              # what kb compiles, what not

See docs/tutorial.md.
"""

from .ir import Config, KbError, KbTypeError, Program, Value
from .bundle import Bundle, compile_program, find_kb_opt
from .fx import KbImportError, import_torch
from .loader import load
from .runner import run

__all__ = ["Config", "KbError", "KbTypeError", "KbImportError", "Program", "Value", "Bundle",
           "compile", "compile_program", "import_torch", "load", "run", "find_kb_opt", "explain"]


def explain(model, *inputs, print_=True):
    """The partition torch.compile(model, backend="kb") makes of
    model(*inputs), printed and returned (kb.backend.explain)."""
    from .backend import explain as _explain
    return _explain(model, *inputs, print_=print_)


def _register_backend():
    """Registers the Dynamo backend "kb" where torch >= 2 is already
    imported (kb itself does not import torch; kb.backend registers too)."""
    import sys
    t = sys.modules.get("torch")
    if t is not None and int(getattr(t, "__version__", "1").split(".")[0]) >= 2:
        try:
            from .backend import register
            register()
        except Exception as e:  # a torch whose Dynamo does not import: kb works without it
            import warnings
            warnings.warn(f"kb: the torch.compile backend is not registered ({type(e).__name__}: {e})")


_register_backend()


def compile(fn_or_program, example_inputs=None, chip="sm_90a", precision=None,
            output=None, fuse=True, seed=0, name=None, ptxas="auto", tuning_db=None):
    """Compiles a kb.Program, or a PyTorch module or function traced on
    `example_inputs`, to a bundle (kb-opt --kb-compile). Returns a Bundle;
    kb.load(bundle) makes it callable. `precision` is the f32 matmuls'
    ("ieee", "tf32", "tf32x3"; default: PyTorch's fp32 matmul setting);
    a bf16/f16 matmul is the tensor cores with f32 accumulation ("native").
    `output` is the bundle folder (default: a new temporary one; an earlier
    bundle there is replaced, a folder holding other files refused).
    `tuning_db` is a kb-tune database whose entries give kernels their
    #kb.config (docs/kb-tune.md)."""
    if isinstance(fn_or_program, Program):
        return compile_program(fn_or_program, output, chip, fuse, ptxas, tuning_db=tuning_db)
    if example_inputs is None:
        raise KbError("kb.compile of PyTorch code needs example_inputs (kb compiles shapes in)")
    imp = import_torch(fn_or_program, example_inputs, precision=precision, name=name, seed=seed)
    bundle = compile_program(imp.program, output, chip, fuse, ptxas, signature=imp.signature,
                             tuning_db=tuning_db)
    bundle.imported = imp
    import torch
    bundle.module = fn_or_program if isinstance(fn_or_program, torch.nn.Module) else None
    return bundle
