"""The ctypes mirrors of cuda.h's launch structures (kb.load's cluster
launches): their layout as the CUDA 13 header defines it, checked without
a GPU (a wrong offset would launch with garbage cluster dimensions)."""
import ctypes
from pathlib import Path

import pytest

from kb import cuda
from kb.cuda import CUlaunchAttribute, CUlaunchConfig, cluster_attribute, launch_config

HEADER = Path("/usr/local/cuda/include/cuda.h")


def test_layout_matches_cuda_h():
    # CUlaunchAttribute: an enum, pad to 8, a 64-byte union.
    assert ctypes.sizeof(CUlaunchAttribute) == 72
    assert CUlaunchAttribute.value.offset == 8
    # CUlaunchConfig: 7 unsigned, a stream, the attribute pointer, a count.
    assert CUlaunchConfig.hStream.offset == 32
    assert CUlaunchConfig.attrs.offset == 40
    assert CUlaunchConfig.numAttrs.offset == 48
    assert ctypes.sizeof(CUlaunchConfig) == 56


def _bytes(attr) -> bytes:
    """The bytes of one CUlaunchAttribute as the driver reads them."""
    return ctypes.string_at(ctypes.addressof(attr), ctypes.sizeof(CUlaunchAttribute))


def test_cluster_attribute_bytes():
    a = cluster_attribute([4, 1, 1])
    raw = _bytes(a)
    assert int.from_bytes(raw[0:4], "little") == 4  # CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
    assert [int.from_bytes(raw[8 + 4 * i:12 + 4 * i], "little") for i in range(3)] == [4, 1, 1]
    cfg = launch_config([8, 2, 1], [256, 1, 1], 1024, 0, a)
    assert (cfg.gridDimX, cfg.gridDimY, cfg.blockDimX, cfg.sharedMemBytes, cfg.numAttrs) == (8, 2, 256, 1024, 1)
    # The config points at a copy of the attribute it keeps alive.
    assert _bytes(cfg.attrs.contents) == raw


def test_enums_match_the_header():
    if not HEADER.is_file():
        pytest.skip("no CUDA toolkit header here")
    text = HEADER.read_text(errors="replace")
    assert "CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION                    = 4" in text
    assert "CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION    = 6" in text
    # The union's member for that attribute is an int.
    assert "int programmaticStreamSerializationAllowed;" in text
    assert "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8" in text
    assert "CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14" in text
    # CU_TENSOR_MAP_DATA_TYPE_FLOAT32 is the 8th enumerator (7), SWIZZLE_128B the 4th (3).
    dt = text.split("typedef enum CUtensorMapDataType_enum {")[1].split("}")[0]
    assert [l.strip().rstrip(",").split(" ")[0] for l in dt.strip().splitlines()].index(
        "CU_TENSOR_MAP_DATA_TYPE_FLOAT32") == 7
    sw = text.split("typedef enum CUtensorMapSwizzle_enum {")[1].split("}")[0]
    names = [l.strip().rstrip(",").split(" ")[0] for l in sw.strip().splitlines()]
    assert names.index("CU_TENSOR_MAP_SWIZZLE_128B") == 3
    # 64B and 32B (a 16-bit row-major B's narrower boxes): 2 and 1.
    assert names.index("CU_TENSOR_MAP_SWIZZLE_64B") == cuda.CU_TENSOR_MAP_SWIZZLE_64B == 2
    assert names.index("CU_TENSOR_MAP_SWIZZLE_32B") == cuda.CU_TENSOR_MAP_SWIZZLE_32B == 1


def test_dependent_attribute_bytes():
    from kb.cuda import dependent_attribute
    a = dependent_attribute()
    raw = _bytes(a)
    assert int.from_bytes(raw[0:4], "little") == 6  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    assert int.from_bytes(raw[8:12], "little") == 1  # programmaticStreamSerializationAllowed
    # With a cluster: both attributes, in one array the config points at.
    c = cluster_attribute([2, 1, 1])
    cfg = launch_config([4, 1, 1], [128, 1, 1], 0, 0, [c, a])
    assert cfg.numAttrs == 2
    assert cfg.attrs[0].id == 4 and cfg.attrs[1].id == 6
    assert _bytes(cfg.attrs[1]) == raw


def test_16_bit_tensor_map_types_match_the_header():
    if not HEADER.is_file():
        pytest.skip("no CUDA toolkit header here")
    from kb.cuda import CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    text = HEADER.read_text(errors="replace")
    dt = text.split("typedef enum CUtensorMapDataType_enum {")[1].split("}")[0]
    names = [l.strip().rstrip(",").split(" ")[0] for l in dt.strip().splitlines()]
    assert names.index("CU_TENSOR_MAP_DATA_TYPE_FLOAT16") == CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    assert names.index("CU_TENSOR_MAP_DATA_TYPE_BFLOAT16") == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16


def test_arg_pack_holds_each_calls_pointers():
    """A kernel's ArgPack: the address array cuLaunchKernel reads points at
    the pointers of the latest fill, made once and filled in place."""
    import kb.cuda as C
    pack = C.ArgPack(3)
    first = pack.fill([0x7f0000001000, 0x7f0000002000, 16])
    read = lambda p: [ctypes.cast(p[i], ctypes.POINTER(ctypes.c_uint64)).contents.value for i in range(3)]
    assert read(first) == [0x7f0000001000, 0x7f0000002000, 16]
    second = pack.fill([1, 2, 2**64 - 1])
    assert second is first and read(second) == [1, 2, 2**64 - 1]
    with pytest.raises(C.KbError, match="takes 3 pointers, got 2"):
        pack.fill([1, 2])
