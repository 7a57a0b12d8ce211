#!/usr/bin/env python3
"""PyTorch's time for the program of each kb bundle: the strongest peer a user
could run instead, timed the way kb-run times kb (CUDA events around each run,
a 256 MB buffer written before every run so that none starts with warm L2, the
median of many runs).

For every bundle folder given, the program in its manifest.json is rebuilt in
PyTorch from the same op list (kb.matmul -> torch.matmul, or F.linear for a
transposed B; kb.softmax, kb.log_softmax -> torch.softmax,
torch.log_softmax; kb.layer_norm, kb.rms_norm,
kb.reduce -> F.layer_norm, F.rms_norm, torch.sum/mean/amax/amin;
kb.attention -> F.scaled_dot_product_attention, timed also with the flash and
the efficient backend alone, and torch.compile of the written-out q k^T,
softmax, @ v; the elementwise ops one by one) and
timed eager and under torch.compile. Matmuls run with TF32 allowed when the
program's precision is tf32 (torch.backends.cuda.matmul.allow_tf32), strict
fp32 otherwise. kb's own kb.transpose and kb.pad in front of a wgmma matmul
are kb's choice, not the user's: PyTorch gets the original B and A.

Element types: by default each tensor has its manifest buffer's dtype (f32,
f16, bf16: inputs drawn in f32 and rounded to it, a kb.convert converts, an
op whose output buffer has another type than PyTorch's result is converted
to it). --dtype f32|bf16|f16 runs the whole program in that type instead
(inputs drawn in it, kb.convert a no-op): the peer a user would write for a
half-precision model. 16-bit matmuls have no TF32 switch: they are the
tensor cores with f32 accumulation (precision "native"); one with an f32
output runs as torch.mm(..., out_dtype=torch.float32) where torch has it.

Usage: python3 bench/peers/torch_peer.py [--dtype f32|bf16|f16] OUT.json BUNDLE_DIR...
KB_PEER_WARM_L2=1: no flush, 10 runs back to back a sample (kb-run --warm-l2).
Writes {bundle name: {"eager_ms", "compile_ms", "linear_ms" (transposed B),
"sdpa_flash_ms", "sdpa_efficient_ms" (attention),
"best_ms", "best", "compile_kernels" (the CUDA kernels of one torch.compile
call, by torch.profiler: what Inductor fused)}}, and "dtype" in a row whose peer ran with a 16-bit
tensor (an f32 run's rows are as they were). Needs torch with CUDA; exits
with one line otherwise."""
import json
import os
import re
import sys


def parse_args(argv):
    """(--dtype or None, OUT.json, [BUNDLE_DIR...]); ValueError with the
    reason for a bad command line."""
    argv = list(argv)
    peer_dtype = None  # None: each buffer's own dtype
    for i, a in enumerate(argv):
        if a == "--dtype" or a.startswith("--dtype="):
            val = a.split("=", 1)[1] if "=" in a else (argv[i + 1] if i + 1 < len(argv) else "")
            del argv[i:i + (1 if "=" in a else 2)]
            if val not in ("f32", "bf16", "f16"):
                raise ValueError(f"--dtype must be f32, bf16 or f16, got {val!r}")
            peer_dtype = val
            break
    if len(argv) < 2:
        raise ValueError("usage: torch_peer.py [--dtype f32|bf16|f16] OUT.json BUNDLE_DIR...")
    return peer_dtype, argv[0], argv[1:]


def _activation_peers():
    """The PyTorch call of each activation of issue #45 (kb op -> f(xs, attrs))."""
    import torch
    import torch.nn.functional as F
    return {
        "kb.softplus": lambda xs, a: F.softplus(xs[0], float(a["beta"]), float(a["threshold"])),
        "kb.elu": lambda xs, a: F.elu(xs[0], float(a["alpha"])),
        "kb.selu": lambda xs, a: F.selu(xs[0]),
        "kb.hardtanh": lambda xs, a: F.hardtanh(xs[0], float(a["min_val"]), float(a["max_val"])),
        "kb.hardsigmoid": lambda xs, a: F.hardsigmoid(xs[0]),
        "kb.hardswish": lambda xs, a: F.hardswish(xs[0]),
        "kb.mish": lambda xs, a: F.mish(xs[0]),
        "kb.softsign": lambda xs, a: F.softsign(xs[0]),
        "kb.abs": lambda xs, a: torch.abs(xs[0]),
        "kb.neg": lambda xs, a: torch.neg(xs[0]),
        "kb.sqrt": lambda xs, a: torch.sqrt(xs[0]),
        "kb.rsqrt": lambda xs, a: torch.rsqrt(xs[0]),
        "kb.log": lambda xs, a: torch.log(xs[0]),
        "kb.clamp": lambda xs, a: torch.clamp(xs[0], a.get("min"), a.get("max")),
        "kb.minimum": lambda xs, a: torch.minimum(xs[0], xs[1]),
        "kb.maximum": lambda xs, a: torch.maximum(xs[0], xs[1]),
    }


def attention_peer(q, k, v, mask, a, explicit=False):
    """kb.attention's peer: F.scaled_dot_product_attention (whichever
    backend the caller's sdpa_kernel context allows), or with `explicit` the
    written-out form (q k^T, scale, mask, softmax, @ v) for torch.compile."""
    import torch
    import torch.nn.functional as F
    scale, causal = float(a.get("scale", 1.0)), bool(a.get("causal", False))
    if a.get("bthd"):
        # [B, S, H, D] operands (kb.attention bthd): SDPA on their
        # transpose(1, 2) views (FlashAttention takes the strides as they
        # are), the result transposed back and made row-major as kb's is.
        y = attention_peer(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), mask,
                           {**a, "bthd": False}, explicit)
        return y.transpose(1, 2).contiguous()
    if not explicit:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, scale=scale)
    s = (q @ k.transpose(-2, -1)) * scale
    if mask is not None:
        s = s + mask
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    return torch.softmax(s, dim=-1) @ v


def build(manifest, peer_dtype=None, device="cuda", explicit_attention=False):
    """The program as a function of its input tensors, the inputs, the
    matmuls' precision, and the peer's 16-bit dtype ("bf16", "f16") or None
    when every tensor is f32. `peer_dtype`: --dtype (None: each buffer's).
    `explicit_attention`: kb.attention written out (attention_peer)."""
    import torch
    import torch.nn.functional as F
    TORCH = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
    activations = _activation_peers()
    bufs = {b["name"]: b for b in manifest["buffers"]}
    # The dtype of each buffer in the peer: its own, or --dtype's.
    dt = {n: TORCH[peer_dtype or b.get("dtype", "f32")] for n, b in bufs.items()
          if (peer_dtype or b.get("dtype", "f32")) in TORCH}
    typed = any(d != torch.float32 for d in dt.values())
    inputs = {}
    for b in manifest["buffers"]:
        if b["role"] == "input":
            inputs[b["name"]] = torch.randn(*b["shape"], device=device)
            if typed and dt[b["name"]] != torch.float32:
                inputs[b["name"]] = inputs[b["name"]].to(dt[b["name"]])
    prog = manifest["program"]
    half = next((d for d in dt.values() if d != torch.float32), torch.float32)
    precision = "ieee"
    for op in prog:
        if op["op"] in ("kb.matmul", "kb.attention"):
            precision = op.get("attrs", {}).get("precision", "ieee")
    if typed and any(t.dtype != torch.float32 for t in inputs.values()) and \
            any(op["op"] in ("kb.matmul", "kb.attention") for op in prog):
        precision = "native"  # 16-bit matmuls: tensor cores, f32 accumulation
    # A 16-bit matmul with an f32 output buffer: torch.mm/bmm(out_dtype=)
    # where this torch has it (one cuBLAS call), else the matmul and a .to().
    out_dtype_mm = False
    if typed and peer_dtype is None and any(
            op["op"] == "kb.matmul" and dt.get(op["output"]) == torch.float32 and
            dt.get(op["inputs"][0]) != torch.float32 for op in prog):
        try:
            z = torch.zeros(2, 2, dtype=half, device=device)
            out_dtype_mm = torch.mm(z, z, out_dtype=torch.float32).dtype == torch.float32
        except (TypeError, RuntimeError):
            out_dtype_mm = False
    outputs = [b["name"] for b in manifest["buffers"] if b["role"] == "output"]

    def fn(**env):
        env = dict(env)
        for op in prog:
            a = op.get("attrs", {})
            xs = [env[i] for i in op["inputs"]]
            name = op["op"]
            if name == "kb.transpose":
                y = xs[0].transpose(-1, -2)
            elif name == "kb.pad":
                # kb's padded rows (K % 4 != 0): PyTorch gets the original.
                y = xs[0]
            elif name == "kb.matmul":
                bm = xs[1]
                if a.get("transpose_b"):
                    bm = bm.transpose(-1, -2)
                if out_dtype_mm and dt.get(op["output"]) == torch.float32 and xs[0].dtype != torch.float32:
                    y = (torch.mm if xs[0].dim() == 2 else torch.bmm)(xs[0], bm, out_dtype=torch.float32)
                else:
                    y = torch.matmul(xs[0], bm)
            elif name == "kb.split_sum":
                # kb's split-K: PyTorch gets the whole matmul (above).
                y = xs[0]
            elif name == "kb.softmax":
                y = torch.softmax(xs[0], dim=-1)
            elif name == "kb.log_softmax":
                y = torch.log_softmax(xs[0], dim=-1)
            elif name == "kb.attention":
                y = attention_peer(xs[0], xs[1], xs[2], xs[3] if len(xs) > 3 else None, a,
                                   explicit=explicit_attention)
            elif name == "kb.bias_add" or name == "kb.add":
                y = xs[0] + xs[1]
            elif name == "kb.sub":
                y = xs[0] - xs[1]
            elif name == "kb.mul":
                y = xs[0] * xs[1]
            elif name == "kb.div":
                y = xs[0] / xs[1]
            elif name == "kb.scale":
                y = xs[0] * float(a.get("factor", 1.0))
            elif name == "kb.gelu":
                y = F.gelu(xs[0], approximate="tanh" if a.get("approx") == "tanh" else "none")
            elif name == "kb.relu":
                y = torch.relu(xs[0])
            elif name == "kb.tanh":
                y = torch.tanh(xs[0])
            elif name == "kb.sigmoid":
                y = torch.sigmoid(xs[0])
            elif name == "kb.exp":
                y = torch.exp(xs[0])
            elif name == "kb.dropout":
                y = F.dropout(xs[0], p=float(a.get("p", 0.0)), training=True)
            elif name == "kb.layer_norm":
                n = xs[0].shape[-1]
                y = F.layer_norm(xs[0], (n,), *(xs[1:] + [None] * (3 - len(xs))),
                                 eps=float(a.get("eps", 1e-5)))
            elif name == "kb.rms_norm":
                w = xs[1] if len(xs) > 1 else None
                eps = float(a.get("eps", 1e-6))
                if hasattr(F, "rms_norm"):
                    y = F.rms_norm(xs[0], (xs[0].shape[-1],), w, eps)
                else:  # torch < 2.4
                    y = xs[0] * torch.rsqrt(xs[0].pow(2).mean(-1, keepdim=True) + eps)
                    y = y * w if w is not None else y
            elif name == "kb.reduce":
                fn_ = {"sum": torch.sum, "mean": torch.mean, "max": torch.amax,
                       "min": torch.amin}[a["kind"]]
                keep = bool(a.get("keepdim", False))
                if a.get("all"):  # every element: kb's (1,) or all-ones shape
                    y = fn_(xs[0]).reshape((1,) * (xs[0].dim() if keep else 1))
                else:
                    y = fn_(xs[0], dim=int(a.get("axis", -1)), keepdim=keep)
            elif name == "kb.convert":
                if peer_dtype is not None:  # the whole program in one type
                    y = xs[0]
                elif op["output"] in dt:
                    y = xs[0].to(dt[op["output"]])
                else:  # a value in a fused kernel's registers: f32 <-> 16-bit
                    y = xs[0].to(half if xs[0].dtype == torch.float32 else torch.float32)
            elif name in activations:
                y = activations[name](xs, a)
            else:
                raise ValueError(f"op {name} has no PyTorch equivalent here")
            if typed and peer_dtype is None and op["output"] in dt and y.dtype != dt[op["output"]]:
                y = y.to(dt[op["output"]])
            env[op["output"]] = y
        return [env[o] for o in outputs]

    return fn, inputs, precision, (None if not typed else
                                   {torch.bfloat16: "bf16", torch.float16: "f16"}.get(half, "f32"))


def main():
    try:
        import torch
        import torch.nn.functional as F
    except ImportError:
        print("torch_peer.py: PyTorch is not installed here; nothing timed")
        return 2
    if not torch.cuda.is_available():
        print("torch_peer.py: no CUDA device; nothing timed")
        return 2
    try:
        peer_dtype, out, dirs = parse_args(sys.argv[1:])
    except ValueError as e:
        print(f"torch_peer.py: {e}")
        return 2
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    # KB_PEER_WARM_L2=1: no flush, as kb-run --warm-l2.
    warm = os.environ.get("KB_PEER_WARM_L2") == "1"

    def timed(fn, min_runs=30, min_ms=300.0, max_runs=2000):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        times, total = [], 0.0
        while len(times) < min_runs or (total < min_ms and len(times) < max_runs):
            if not warm:
                flush.fill_(len(times) & 0xFF)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            # Warm: 10 runs back to back a sample (kb-run's protocol without
            # a flush), so that the host's dispatch is not inside the events.
            batch = 10 if warm else 1
            s.record()
            for _ in range(batch):
                fn()
            e.record()
            e.synchronize()
            t = s.elapsed_time(e) / batch
            times.append(t)
            total += t * batch
        times.sort()
        return times[len(times) // 2]

    def kernels_of(fn):
        """The CUDA kernels of one call of fn (torch.profiler), in launch
        order, names cut to 80 characters; [] where the profiler fails."""
        try:
            from torch.profiler import ProfilerActivity, profile
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                fn()
                torch.cuda.synchronize()
            cuda = torch.autograd.DeviceType.CUDA
            return [ev.name[:80] for ev in prof.events() if ev.device_type == cuda]
        except Exception:  # noqa: BLE001 - a record aid, never the measurement
            return []

    results = {}
    for d in dirs:
        name = os.path.basename(os.path.normpath(d))
        try:
            manifest = json.load(open(os.path.join(d, "manifest.json")))
            fn, inputs, precision, dtype = build(manifest, peer_dtype)
            torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
            torch.backends.cudnn.allow_tf32 = precision == "tf32"
            row = {"precision": precision}
            if dtype is not None:
                row["dtype"] = dtype
            row["eager_ms"] = timed(lambda: fn(**inputs))
            prog = manifest["program"]
            attention = any(op["op"] == "kb.attention" for op in prog)
            if attention:
                # Each SDPA backend alone (the fastest counts); one that
                # cannot run the program (flash has no f32) says why.
                from torch.nn.attention import SDPBackend, sdpa_kernel
                for key, backend in (("flash", SDPBackend.FLASH_ATTENTION),
                                     ("efficient", SDPBackend.EFFICIENT_ATTENTION)):
                    try:
                        with sdpa_kernel(backend):
                            row[f"sdpa_{key}_ms"] = timed(lambda: fn(**inputs))
                    except RuntimeError as e:
                        row[f"sdpa_{key}_error"] = str(e).splitlines()[0][:200]
            mm = [op for op in prog if op["op"] == "kb.matmul"]
            # A lone matmul with a transposed B is nn.Linear's shape: F.linear
            # (on the unpadded operands where kb padded them).
            unpadded = {op["output"]: op["inputs"][0] for op in prog if op["op"] == "kb.pad"}
            mm_ins = [unpadded.get(i, i) for i in mm[0]["inputs"]] if len(mm) == 1 else []
            if len(mm) == 1 and mm[0].get("attrs", {}).get("transpose_b") and \
                    all(i in inputs for i in mm_ins) and inputs[mm_ins[0]].dim() == 2 and \
                    all(op["op"] in ("kb.matmul", "kb.split_sum", "kb.pad") for op in prog):
                a, w = (inputs[i] for i in mm_ins)
                row["linear_ms"] = timed(lambda: F.linear(a, w))
            # KB_TORCH_NO_COMPILE: a regex of bundles whose program is a lone
            # matmul, for which torch.compile runs the same cuBLAS call as
            # eager (it only costs the compile time).
            skip = os.environ.get("KB_TORCH_NO_COMPILE")
            if skip and re.search(skip, name):
                row["compile_skipped"] = True
            else:
                try:
                    # Attention: torch.compile of the written-out form (what
                    # Inductor fuses by itself), besides SDPA eager above.
                    cfn = torch.compile(build(manifest, peer_dtype, explicit_attention=True)[0]
                                        if attention else fn)
                    row["compile_ms"] = timed(lambda: cfn(**inputs))
                    # What Inductor made of it (one kernel or several): the
                    # reason a peer's time moves between calls shows here.
                    row["compile_kernels"] = kernels_of(lambda: cfn(**inputs))
                except Exception as e:  # torch.compile can fail where eager runs
                    row["compile_error"] = str(e).splitlines()[0][:200]
            cands = {k[:-3]: v for k, v in row.items() if k.endswith("_ms")}
            row["best"] = min(cands, key=cands.get)
            row["best_ms"] = cands[row["best"]]
            results[name] = row
            print(f"{name:44s} " + "  ".join(f"{k} {v:.4f}" for k, v in cands.items()) +
                  f"  best {row['best']}" + (f"  dtype {dtype}" if dtype else ""), flush=True)
        except Exception as e:
            results[name] = {"error": str(e).splitlines()[0][:300] if str(e) else repr(e)}
            print(f"{name:44s} error: {results[name]['error']}", flush=True)
        finally:
            torch.cuda.empty_cache()
    json.dump(results, open(out, "w"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
