"""The few CUDA driver API calls kb.load needs, through ctypes on libcuda.

No CUDA toolkit is needed: only the driver (libcuda.so.1), as for kb-run.
"""

from __future__ import annotations

import ctypes
from typing import Optional

from .ir import KbError

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14
CU_JIT_ERROR_LOG_BUFFER = 5
CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4
CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6
CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6
CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7
CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9
# A tensor map's element type and size for each manifest dtype it may cover.
TENSOR_MAP_TYPES = {"f32": (CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4),
                    "f16": (CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2),
                    "bf16": (CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2)}
CU_TENSOR_MAP_INTERLEAVE_NONE = 0
CU_TENSOR_MAP_SWIZZLE_32B = 1
CU_TENSOR_MAP_SWIZZLE_64B = 2
CU_TENSOR_MAP_SWIZZLE_128B = 3
# The manifest's swizzle names (docs/bundle.md): 128B, or a 16-bit row-major
# B's narrower boxes, 64B or 32B.
TENSOR_MAP_SWIZZLES = {"128B": CU_TENSOR_MAP_SWIZZLE_128B, "64B": CU_TENSOR_MAP_SWIZZLE_64B,
                       "32B": CU_TENSOR_MAP_SWIZZLE_32B}
CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2
CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0


class CUlaunchAttribute(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4),
                ("value", ctypes.c_char * 64)]


class CUlaunchConfig(ctypes.Structure):
    _fields_ = [("gridDimX", ctypes.c_uint), ("gridDimY", ctypes.c_uint),
                ("gridDimZ", ctypes.c_uint), ("blockDimX", ctypes.c_uint),
                ("blockDimY", ctypes.c_uint), ("blockDimZ", ctypes.c_uint),
                ("sharedMemBytes", ctypes.c_uint), ("hStream", ctypes.c_void_p),
                ("attrs", ctypes.POINTER(CUlaunchAttribute)),
                ("numAttrs", ctypes.c_uint)]


def cluster_attribute(cluster) -> CUlaunchAttribute:
    """CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION with value.clusterDim = cluster."""
    attr = CUlaunchAttribute()
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    dims = (ctypes.c_uint * 3)(*[int(c) for c in cluster])
    # (attr.value reads as a bytes copy: write through the struct's address.)
    ctypes.memmove(ctypes.addressof(attr) + CUlaunchAttribute.value.offset, dims, ctypes.sizeof(dims))
    return attr


def dependent_attribute() -> CUlaunchAttribute:
    """CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION with
    value.programmaticStreamSerializationAllowed = 1: the kernel may be
    scheduled while the one before it on the stream ends (programmatic
    dependent launch; the kernel's griddepcontrol.wait holds its reads)."""
    attr = CUlaunchAttribute()
    attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    one = ctypes.c_int(1)
    ctypes.memmove(ctypes.addressof(attr) + CUlaunchAttribute.value.offset, ctypes.byref(one), ctypes.sizeof(one))
    return attr


def launch_config(grid, block, shared, stream, attrs) -> CUlaunchConfig:
    """A CUlaunchConfig with `attrs` (one CUlaunchAttribute or a list)."""
    if isinstance(attrs, CUlaunchAttribute):
        attrs = [attrs]
    arr = (CUlaunchAttribute * len(attrs))(*attrs)
    cfg = CUlaunchConfig()
    cfg.gridDimX, cfg.gridDimY, cfg.gridDimZ = (int(g) for g in grid)
    cfg.blockDimX, cfg.blockDimY, cfg.blockDimZ = (int(b) for b in block)
    cfg.sharedMemBytes = int(shared)
    cfg.hStream = stream or None
    cfg.attrs = ctypes.cast(arr, ctypes.POINTER(CUlaunchAttribute))
    cfg.numAttrs = len(attrs)
    cfg._keep = arr  # the attributes must outlive the launch
    return cfg


class ArgPack:
    """A kernel's parameter block, made once: `n` 64-bit device pointers and
    the array of their addresses that cuLaunchKernel reads. fill() writes
    one call's pointers in place (building the ctypes values and their
    address array on every launch cost about 6 us a kernel of six
    pointers on the host CPU; filling these, 0.4). The driver copies the
    parameters at launch, so the next fill may follow at once; one pack a
    kernel, not shared between threads (as the launch config)."""

    def __init__(self, n: int):
        self.values = (ctypes.c_uint64 * max(n, 1))()
        base = ctypes.addressof(self.values)
        self.ptrs = (ctypes.c_void_p * max(n, 1))(*[base + 8 * i for i in range(max(n, 1))])
        self.n = n

    def fill(self, args):
        if len(args) != self.n:
            raise KbError(f"the kernel takes {self.n} pointers, got {len(args)}")
        v = self.values
        for i, a in enumerate(args):
            v[i] = a
        return self.ptrs


class Driver:
    """libcuda.so.1, loaded once."""

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError:
            raise KbError("no NVIDIA driver on this machine (libcuda.so.1 not found): "
                          "kb.load needs a GPU; compiling does not")
        self._ctx_done = set()

    def fn(self, name):
        for n in (name + "_v2", name):
            f = getattr(self.lib, n, None)
            if f is not None:
                f.restype = ctypes.c_int
                return f
        raise KbError(f"the NVIDIA driver lacks {name}")

    def check(self, r, what):
        if r == 0:
            return
        s = ctypes.c_char_p()
        self.lib.cuGetErrorName(r, ctypes.byref(s))
        d = ctypes.c_char_p()
        self.lib.cuGetErrorString(r, ctypes.byref(d))
        raise KbError(f"{what} failed: {(s.value or b'?').decode()} ({(d.value or b'').decode()})")

    def use_device(self, ordinal: int):
        """Makes the device's primary context (PyTorch's) current."""
        self.check(self.fn("cuInit")(0), "cuInit")
        dev = ctypes.c_int()
        self.check(self.lib.cuDeviceGet(ctypes.byref(dev), ordinal), "cuDeviceGet")
        ctx = ctypes.c_void_p()
        if ordinal not in self._ctx_done:
            self.check(self.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                       "cuDevicePrimaryCtxRetain")
            self._ctx_done.add(ordinal)
            self._ctx = getattr(self, "_ctx", {})
            self._ctx[ordinal] = ctx
        self.check(self.lib.cuCtxSetCurrent(self._ctx[ordinal]), "cuCtxSetCurrent")

    def load_module(self, cubin: Optional[bytes], ptx: Optional[bytes], name: str):
        mod = ctypes.c_void_p()
        source = None
        if cubin is not None:
            r = self.lib.cuModuleLoadData(ctypes.byref(mod), ctypes.c_char_p(cubin))
            if r == 0:
                source = "cubin"
        if source is None:
            if ptx is None:
                raise KbError(f"kernel {name}: the driver refused its cubin and there is no PTX")
            log = ctypes.create_string_buffer(8192)
            opts = (ctypes.c_int * 2)(CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES)
            vals = (ctypes.c_void_p * 2)(ctypes.cast(log, ctypes.c_void_p).value, 8192)
            r = self.lib.cuModuleLoadDataEx(ctypes.byref(mod), ctypes.c_char_p(ptx + b"\0"), 2, opts, vals)
            if r != 0:
                raise KbError(f"the driver rejected the PTX of {name}: {log.value.decode(errors='replace')}")
            source = "ptx"
        func = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(ctypes.byref(func), mod, name.encode()),
                   f"cuModuleGetFunction({name})")
        return mod, func, source

    def set_attr(self, func, attr, value, what):
        self.check(self.lib.cuFuncSetAttribute(func, attr, value), what)

    @staticmethod
    def ex_config(grid, block, shared, cluster=None, dependent=False):
        """The CUlaunchConfig a launch of these dimensions needs for
        cuLaunchKernelEx (a cluster other than 1 x 1 x 1, or `dependent`:
        programmatic dependent launch), or None for a plain launch. Built
        once a kernel; launch() sets its stream."""
        attrs = []
        if cluster and cluster[0] * cluster[1] * cluster[2] > 1:
            attrs.append(cluster_attribute(cluster))
        if dependent:
            attrs.append(dependent_attribute())
        if not attrs:
            return None
        cfg = launch_config(grid, block, shared, 0, attrs)
        cfg._what = "programmatic dependent launch" if dependent else "cluster launch"
        return cfg

    def launch(self, func, grid, block, shared, stream, args, cluster=None, dependent=False, ex=None,
               pack=None):
        """Launches `func`; a cluster other than 1 x 1 x 1 and `dependent`
        (programmatic dependent launch) go through cuLaunchKernelEx (`ex`:
        the config ex_config made for them, reused: its stream is set here,
        so one kernel is not launched from two threads at once). `pack`:
        the kernel's ArgPack, filled with `args` (else one built here)."""
        if pack is not None:
            ptrs = pack.fill(args)
        else:
            vals = [ctypes.c_uint64(a) for a in args]
            ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.byref(v), ctypes.c_void_p) for v in vals])
        if ex is None and ((cluster and cluster[0] * cluster[1] * cluster[2] > 1) or dependent):
            ex = self.ex_config(grid, block, shared, cluster, dependent)
        if ex is not None:
            ex.hStream = stream or None
            self.check(self.lib.cuLaunchKernelEx(ctypes.byref(ex), func, ptrs, None),
                       f"cuLaunchKernelEx ({ex._what})")
            return
        self.check(self.lib.cuLaunchKernel(func, grid[0], grid[1], grid[2], block[0], block[1],
                                           block[2], shared, ctypes.c_void_p(stream), ptrs, None),
                   "cuLaunchKernel")

    def occupancy(self, func, threads, shared):
        n = ctypes.c_int()
        self.check(self.lib.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(n), func, threads, ctypes.c_size_t(shared)),
            "cuOccupancyMaxActiveBlocksPerMultiprocessor")
        return n.value

    def encode_tensor_map(self, base: int, shape, dims, box, dtype: str = "f32",
                          swizzle: str = "128B") -> bytes:
        """cuTensorMapEncodeTiled as kb-run does (tools/kb-run/Device.cpp),
        for a buffer of `dtype` (f32, f16 or bf16), swizzled as the
        manifest's `swizzle` says (128B, 64B or 32B)."""
        if swizzle not in TENSOR_MAP_SWIZZLES:
            raise KbError(f"a tensor map swizzled {swizzle!r} (kb's maps are 128B, 64B or 32B)")
        f = getattr(self.lib, "cuTensorMapEncodeTiled", None)
        if f is None:
            raise KbError("the NVIDIA driver lacks cuTensorMapEncodeTiled (TMA needs a CUDA 12 driver)")
        data_type, gdim, gstr, bdim, estr, rank = tensor_map_arrays(shape, dims, box, dtype)
        # CUtensorMap is 128 bytes aligned to 64.
        raw = ctypes.create_string_buffer(128 + 64)
        addr = (ctypes.addressof(raw) + 63) // 64 * 64
        out = (ctypes.c_uint8 * 128).from_address(addr)
        f.restype = ctypes.c_int
        self.check(f(out, data_type, ctypes.c_uint32(rank), ctypes.c_void_p(base),
                     gdim, gstr, bdim, estr, CU_TENSOR_MAP_INTERLEAVE_NONE, TENSOR_MAP_SWIZZLES[swizzle],
                     CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                   "cuTensorMapEncodeTiled")
        return bytes(out)


def tensor_map_arrays(shape, dims, box, dtype="f32"):
    """cuTensorMapEncodeTiled's element type and arrays (innermost axis
    first) for a row-major buffer of `shape` and `dtype`: global dims, byte
    strides of the outer axes, box, element strides, and the rank."""
    if dtype not in TENSOR_MAP_TYPES:
        raise KbError(f"a tensor map over a {dtype} buffer (kb's maps cover f32, f16 or bf16)")
    data_type, size = TENSOR_MAP_TYPES[dtype]
    rank = len(dims)
    gdim = (ctypes.c_uint64 * 5)()
    gstr = (ctypes.c_uint64 * 4)()
    bdim = (ctypes.c_uint32 * 5)()
    estr = (ctypes.c_uint32 * 5)()
    stride = size
    for d in range(rank):
        axis = rank - 1 - d
        gdim[d] = int(dims[axis])
        bdim[d] = int(box[axis])
        estr[d] = 1
        if d > 0:
            gstr[d - 1] = stride
        stride *= int(shape[axis])
    return data_type, gdim, gstr, bdim, estr, rank


_driver: Optional[Driver] = None


def driver() -> Driver:
    global _driver
    if _driver is None:
        _driver = Driver()
    return _driver
