# Sourced by the scripts that run on the GPU machine: puts the CUDA
# toolkit's libraries and, where PyTorch's wheel brought one, its cuBLAS on
# LD_LIBRARY_PATH, so that kb-run finds cuBLAS/cuBLASLt for its baselines.
pycublas=$(python3 -c "import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__) + '/lib')" 2>/dev/null || true)
export LD_LIBRARY_PATH="/usr/local/cuda/lib64:/usr/local/cuda/lib:${pycublas}:${LD_LIBRARY_PATH:-}"
