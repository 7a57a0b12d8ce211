"""kb.load: a bundle's kernels as a Python callable on torch CUDA tensors.

The callable launches the bundle's kernels, in the manifest's order, on
PyTorch's current CUDA stream, reading its arguments where they are and
writing a new output tensor (allocated with torch, like any PyTorch op);
nothing passes through the host. Intermediate buffers and workspaces are
allocated with torch once, at load. TMA tensor maps are encoded on the host
(128 bytes each) once per input address.

Every buffer has the manifest's dtype: f32, f16 or bf16 tensors
(torch.float32, torch.float16, torch.bfloat16) in and out, i32 workspaces.
A tensor of another dtype is refused, naming the buffer and both dtypes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, List, Optional

from .bundle import Bundle, check_bundle_record
from .cuda import (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                   CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, ArgPack, driver)
from .ir import KbError


def _target_runs_on(target: str, major: int, minor: int) -> Optional[str]:
    """Why a bundle for `target` cannot run on an sm_<major><minor> GPU, or
    None (kb-run's targetCannotRun: sm_90a only on 9.0, sm_XY on X.Y+)."""
    t = target[3:] if target.startswith("sm_") else target
    arch_a = t.endswith("a")
    digits = t[:-1] if arch_a else t
    if not digits.isdigit() or len(digits) < 2:
        return f"unknown target {target!r}"
    tmaj, tmin = int(digits[:-1]), int(digits[-1])
    if arch_a and (major, minor) != (tmaj, tmin):
        return f"the bundle is for {target}, which runs only on sm_{tmaj}{tmin} GPUs; this one is sm_{major}{minor}"
    if (major, minor) < (tmaj, tmin):
        return f"the bundle is for {target}; this GPU is sm_{major}{minor}"
    return None



# The manifest's dtypes (docs/bundle.md) as torch dtype names.
TORCH_DTYPES = {"f32": "float32", "f16": "float16", "bf16": "bfloat16", "i32": "int32"}


def torch_dtype(buffer: dict):
    """The torch dtype of a manifest buffer (its "dtype", f32 when absent)."""
    import torch
    d = buffer.get("dtype", "f32")
    if d not in TORCH_DTYPES:
        raise KbError(f"buffer {buffer.get('name')!r} has dtype {d!r}; kb.load knows "
                      f"{', '.join(TORCH_DTYPES)}")
    return getattr(torch, TORCH_DTYPES[d])


def _source(spec):
    """Where an input comes from: ["arg", i] or ["param", name]. Bundles the
    builder writes (kb.Program) name the argument index alone ("arg")."""
    if "source" in spec:
        return spec["source"]
    return ["arg", spec.get("arg", 0)]

class Calling:
    """A bundle's calling convention, apart from the GPU: the Python
    arguments (and a module's parameters) checked and mapped onto the input
    buffers, outputs allocated (or `out=` checked), all in the manifest's
    dtypes, on `device`. Loaded adds the kernels and the tensor maps."""

    def __init__(self, bundle: Bundle, device, param_tensors: Optional[dict] = None):
        import torch
        self.torch = torch
        self.device = torch.device(device)
        m = bundle.manifest
        self.buffers = {b["name"]: b for b in m["buffers"]}
        self.dtypes = {name: torch_dtype(b) for name, b in self.buffers.items()}
        self.sig = bundle.signature
        self.param_tensors = dict(param_tensors or {})
        self.input_specs = self.sig.get("inputs", [])
        self.output_specs = self.sig.get("outputs", [])
        self.nargs = len(self.sig.get("args", []))
        for spec in self.input_specs + self.output_specs:
            if spec["buffer"] not in self.buffers:
                raise KbError(f"{bundle.path}: the Python signature names buffer {spec['buffer']!r}, "
                              f"which the manifest lacks")

    def check_arg(self, spec, args):
        torch = self.torch
        kind, ident = _source(spec)
        t = args[ident] if kind == "arg" else self.param_tensors[ident]
        what = f"argument {ident} ({self.sig['args'][ident]['name']})" if kind == "arg" else f"parameter {ident}"
        if not isinstance(t, torch.Tensor):
            raise KbError(f"{what} must be a torch tensor, got {type(t).__name__}")
        want = self.dtypes[spec["buffer"]]
        if t.dtype != want:
            raise KbError(f"{what} is {t.dtype}; the bundle's buffer {spec['buffer']!r} is "
                          f"{self.buffers[spec['buffer']].get('dtype', 'f32')} ({want}): convert it "
                          f"with .to({want})")
        if t.device != self.device:
            raise KbError(f"{what} is on {t.device}; the kernels run on {self.device} (move it there first)")
        if not t.is_contiguous():
            raise KbError(f"{what} is not contiguous (the kernels read row-major buffers): call .contiguous()")
        if t.data_ptr() % 16:
            raise KbError(f"{what} starts at an address that is not a multiple of 16 bytes (a view with an "
                          f"offset?); the kernels load 16-byte vectors: pass a .clone()")
        shape = tuple(spec["shape"])
        if t.numel() != math.prod(shape):
            raise KbError(f"{what} has shape {tuple(t.shape)}; the bundle was compiled for {tuple(self.sig['args'][ident]['shape']) if kind == 'arg' else shape} "
                          f"(kb compiles shapes in: compile again for this shape)")
        if kind == "arg" and tuple(t.shape) != tuple(self.sig["args"][ident]["shape"]):
            raise KbError(f"{what} has shape {tuple(t.shape)}; the bundle was compiled for "
                          f"{tuple(self.sig['args'][ident]['shape'])}")
        return t

    def map_args(self, args, out=None, fixed=None):
        """(buffers by name, output tensors) for a call on `args`."""
        torch = self.torch
        if len(args) != self.nargs:
            raise KbError(f"the program takes {self.nargs} tensors, got {len(args)}")
        bufs: Dict[str, "torch.Tensor"] = dict(fixed or {})
        for spec in self.input_specs:
            bufs[spec["buffer"]] = self.check_arg(spec, args)
        if out is not None and not isinstance(out, (tuple, list)):
            out = (out,)
        if out is not None and len(out) != len(self.output_specs):
            raise KbError(f"out= needs {len(self.output_specs)} tensors, got {len(out)}")
        outs = []
        for i, spec in enumerate(self.output_specs):
            kb_shape = spec.get("kb_shape", spec["shape"])
            dt = self.dtypes[spec["buffer"]]
            if out is None:
                o = torch.empty(kb_shape, dtype=dt, device=self.device)
                outs.append(o.view(spec["shape"]))
            else:
                o = out[i]
                if (not isinstance(o, torch.Tensor) or o.dtype != dt or o.device != self.device
                        or not o.is_contiguous() or tuple(o.shape) != tuple(spec["shape"])
                        or o.data_ptr() % 16):
                    got = f"{o.dtype} {tuple(o.shape)} on {o.device}" if isinstance(o, torch.Tensor) \
                        else type(o).__name__
                    raise KbError(f"out[{i}] (buffer {spec['buffer']!r}) must be a contiguous {dt} tensor of "
                                  f"shape {tuple(spec['shape'])} on {self.device}, 16-byte aligned; got {got}")
                outs.append(o)
            bufs[spec["buffer"]] = o
        return bufs, outs


class Loaded:
    """The callable kb.load returns. `loaded(*args)` runs the program;
    `loaded.kernels` lists what was loaded (name, cubin or ptx)."""

    def __init__(self, bundle: Bundle, module=None, params: Optional[dict] = None, device=None,
                 dependent_launch: bool = True):
        import torch
        self.torch = torch
        self.bundle = bundle
        m = bundle.manifest
        sig = bundle.signature
        if not torch.cuda.is_available():
            raise KbError("kb.load needs a CUDA GPU visible to PyTorch (torch.cuda.is_available() is False)")
        self.device = torch.device(device) if device is not None else torch.device("cuda", torch.cuda.current_device())
        ordinal = self.device.index if self.device.index is not None else torch.cuda.current_device()
        major, minor = torch.cuda.get_device_capability(ordinal)
        why = _target_runs_on(m.get("target", ""), major, minor)
        if why:
            raise KbError(why)
        torch.cuda.init()
        torch.empty(1, device=self.device)  # PyTorch's context first
        self.drv = driver()
        self.drv.use_device(ordinal)
        self.ordinal = ordinal
        self.calling = Calling(bundle, self.device)
        self.buffers = self.calling.buffers
        self.sig = sig
        # Parameters: from a module (by qualified name) or a dict.
        self.param_tensors: Dict[str, "torch.Tensor"] = {}
        needed = sorted({_source(s)[1] for s in sig.get("inputs", []) if _source(s)[0] == "param"})
        for name in needed:
            t = None
            if params is not None and name in params:
                t = params[name]
            elif module is not None:
                try:
                    t = module.get_parameter(name)
                except AttributeError:
                    try:
                        t = module.get_buffer(name)
                    except AttributeError:
                        t = None
            if t is None:
                raise KbError(f"the bundle reads the parameter {name!r}: pass kb.load(bundle, module=model) "
                              f"or params={{{name!r}: tensor}}")
            if t.device != self.device or not t.is_contiguous():
                t = t.detach().to(self.device).contiguous()  # once, at load
            self.param_tensors[name] = t.detach()
        self.calling.param_tensors = self.param_tensors
        # Kernels.
        self.kernels = []
        root = bundle.path
        for index, k in enumerate(m["kernels"]):
            cubin = (root / k["cubin"]).read_bytes() if k.get("cubin") and (root / k["cubin"]).is_file() else None
            ptx = (root / k["ptx"]).read_bytes() if k.get("ptx") and (root / k["ptx"]).is_file() else None
            # The launch, buffers and program the kernel was compiled for
            # (the bundle record; kb-run checks the same).
            check_bundle_record(m, index, ptx)
            # A kernel marked dependent_launch is launched while the one
            # before it ends; its griddepcontrol.wait holds its reads until
            # that one's writes are visible (kb-run checks the same).
            dependent = bool(k.get("dependent_launch")) and dependent_launch
            if k.get("dependent_launch") and (ptx is None or b"griddepcontrol.wait" not in ptx):
                raise KbError(f"kernel {k['name']} has dependent_launch but its PTX has no griddepcontrol.wait: "
                              "it would read its inputs before the kernel before it has written them")
            mod, func, source = self.drv.load_module(cubin, ptx, k["name"])
            shared = int(k.get("dynamic_shared_bytes", 0))
            if shared > 48 * 1024:
                self.drv.set_attr(func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared,
                                  f"raising the shared-memory limit of {k['name']}")
            cluster = list(k.get("cluster", [1, 1, 1]))
            if math.prod(cluster) > 8:
                self.drv.set_attr(func, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1,
                                  f"allowing clusters of {math.prod(cluster)} blocks for {k['name']}")
            co = int(k.get("co_resident_blocks", 0))
            if co > 1:
                per_sm = self.drv.occupancy(func, math.prod(k["block"]), shared)
                sms = torch.cuda.get_device_properties(ordinal).multi_processor_count
                if per_sm * sms < co:
                    raise KbError(f"kernel {k['name']} needs {co} blocks resident at once; this GPU holds "
                                  f"{per_sm * sms}: compile with fewer blocks per row (#kb.config cluster)")
            self.kernels.append({"name": k["name"], "module": mod, "func": func, "source": source,
                                 "grid": list(k["grid"]), "block": list(k["block"]),
                                 "cluster": cluster, "shared": shared, "args": list(k["args"]),
                                 "dependent": dependent,
                                 "ex": self.drv.ex_config(k["grid"], k["block"], shared, cluster, dependent),
                                 "pack": ArgPack(len(k["args"]))})
        # Scratch and workspace buffers: allocated once.
        self.fixed: Dict[str, "torch.Tensor"] = {}
        for b in m["buffers"]:
            dt = self.calling.dtypes[b["name"]]
            if b["role"] == "scratch":
                self.fixed[b["name"]] = torch.empty(b["shape"], dtype=dt, device=self.device)
            elif b["role"] == "workspace":
                # kb-run zero-fills it once; the kernel leaves it zero.
                self.fixed[b["name"]] = torch.zeros(b["shape"], dtype=dt, device=self.device)
        self.maps = [b for b in m["buffers"] if b["role"] == "tensor_map"]
        self._map_cache: Dict[tuple, "torch.Tensor"] = {}
        self.output_specs = self.calling.output_specs

    def _tensor_map(self, b, buffers):
        tm = b["tensor_map"]
        of = buffers[tm["of"]]
        key = (b["name"], of.data_ptr())
        t = self._map_cache.get(key)
        if t is None:
            ofb = self.buffers[tm["of"]]
            raw = self.drv.encode_tensor_map(of.data_ptr(), ofb["shape"], tm["dims"], tm["box"],
                                             ofb.get("dtype", "f32"), tm.get("swizzle", "128B"))
            host = self.torch.frombuffer(bytearray(raw), dtype=self.torch.int32)
            t = host.to(self.device)
            if len(self._map_cache) > 64:
                self._map_cache.clear()
            self._map_cache[key] = t
        return t

    def _buffers(self, args, out=None):
        bufs, outs = self.calling.map_args(args, out, self.fixed)
        for b in self.maps:
            bufs[b["name"]] = self._tensor_map(b, bufs)
        return bufs, outs

    def _launch(self, k, bufs, stream):
        try:
            ptrs = [bufs[a].data_ptr() for a in k["args"]]
        except KeyError as e:
            raise KbError(f"kernel {k['name']} reads buffer {e} that the bundle's signature does not provide")
        self.drv.launch(k["func"], k["grid"], k["block"], k["shared"], stream, ptrs, k["cluster"],
                        k["dependent"], k["ex"], k["pack"])

    def __call__(self, *args, out=None):
        """Runs the program on `args`; the result is a new tensor, or
        written into `out` (a tensor, or a tuple for several results)."""
        bufs, outs = self.bind(args, out)
        self.launch_bound(bufs)
        return outs[0] if self.sig.get("single_output", len(outs) == 1) else tuple(outs)

    def bind(self, args, out=None):
        """(every buffer by name, the output tensors) for a call on `args`:
        outputs allocated (or `out` checked), tensor maps encoded and copied
        to the GPU. What a CUDA graph's capture needs made before it begins
        (kb.piece_graphs): launch_bound then only launches."""
        return self._buffers(args, out)

    def launch_bound(self, bufs):
        """Launches every kernel on PyTorch's current stream reading `bufs`
        (bind's); no allocation, no host-to-device copy."""
        stream = self.torch.cuda.current_stream(self.device).cuda_stream
        self.drv.use_device(self.ordinal)
        for k in self.kernels:
            self._launch(k, bufs, stream)

    def launch_one(self, i, args):
        """Launches kernel i alone (for timing it; its inputs from earlier
        kernels are whatever their last run left)."""
        bufs, _ = self._buffers(args)
        stream = self.torch.cuda.current_stream(self.device).cuda_stream
        self._launch(self.kernels[i], bufs, stream)

    def __repr__(self):
        return f"<kb.load {self.bundle.path}: " + ", ".join(f"{k['name']} ({k['source']})" for k in self.kernels) + ">"


def load(bundle, module=None, params=None, device=None, dependent_launch=True) -> Loaded:
    """The bundle (a Bundle or its folder) as a callable on CUDA tensors.
    A program imported from an nn.Module reads the module's parameters:
    pass the module (on the GPU), or a dict of them. kb.compile's bundle
    remembers the module it was compiled from. Kernels the bundle marks
    dependent_launch are launched while the one before them ends
    (programmatic dependent launch, as kb-run does); dependent_launch=False
    launches each only after the one before it has ended."""
    if not isinstance(bundle, Bundle):
        bundle = Bundle.open(bundle)
    if module is None:
        module = getattr(bundle, "module", None)
    return Loaded(bundle, module, params, device, dependent_launch)
