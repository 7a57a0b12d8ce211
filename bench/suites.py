#===- bench/suites.py - The benchmark suites of python3 -m kb.bench -------===#
#
# Data only: the named suites `python3 -m kb.bench --suite NAME` runs
# (docs/bench.md). Each suite names its programs one of two ways:
#   "programs": a list of program names from the catalogue, or
#   "from" + optional "match": every program of one catalogue family whose
#   name matches the regex.
# The catalogue (python/kb/bench/catalog.py) is the programs bench/programs.py
# writes (families matmul, softmax, fusion, activations, linear, gemv, half, norms,
# attention), the 57 shapes of
# bench/shapes.py (family "shapes"), the kb-tune programs of
# bench/tune/programs.py (family "tune") and examples/*.mlir (family
# "examples"). A program's chip is sm_90a when its name ends in -sm90a (as
# scripts/build-bench.sh compiles it), else the suite's "chip" (default
# sm_90). A program with bias_add, gelu, dropout, scale or mish also gets an
# unfused bundle (<name>-unfused) that kb-run times as a baseline.
# "all" is every kb-run suite's programs once.
# A suite with a "kind" runs kb through torch.compile(model, backend="kb")
# instead of kb-run (python/kb/bench/backend_suites.py): kind "models" times
# each of its "models" (a kb.models class, its args and input shape) in each
# of its "dtypes" against eager and Inductor; kind "backend-overhead" times
# the backend's Python launch path for its "model" at each M of "rows"; kind
# "serving" calls each of its "models" x "dtypes" at every M of 1..max_m
# (shuffled by "seed"), served from "buckets" (default kb.backend's), and
# times the "samples" of each bucket (bottom, middle, top; a model's own
# "samples" first) against the model compiled for that exact M.
#
#===----------------------------------------------------------------------===#

SUITES = {
    "squares": {
        "about": "large square matmuls: TF32 on wgmma (sm_90a) and mma.sync (sm_90), "
                 "fp32 and tf32x3, against every cuBLAS route and torch.matmul",
        "programs": ["matmul-tf32-4096-sm90a", "matmul-tf32-8192-sm90a", "matmul-tf32-4096",
                     "matmul-ieee-2048", "matmul-ieee-4096", "matmul-ieee-8192",
                     "matmul-tf32x3-2048"],
    },
    "shapes": {
        "about": "the 57 matmul shapes of docs/shapes.md (long K, skinny, matvec, small K, "
                 "batched, odd, medium, squares) against cuBLAS and torch.matmul / F.linear",
        "from": "shapes",
    },
    "shapes-bf16": {
        "about": "the same 57 matmul shapes in bf16 (wgmma m64nNk16, 16-bit split-K and gemv) "
                 "against cuBLAS's bf16 routes and torch.matmul / F.linear on bf16 tensors",
        "from": "shapes-bf16",
    },
    "linear": {
        "about": "nn.Linear (B^T) with and without epilogues at LLM sizes, against cuBLAS "
                 "and F.linear",
        "from": "linear", "match": "^linear-",
    },
    "memory-bound": {
        "about": "elementwise, transpose and gemv-class matmuls, where the copy bandwidth is "
                 "the roof, against PyTorch",
        "programs": ["relu-4096x4096", "relu-16384x16384", "transpose-4096x4096",
                     "shape-skinny-1x4096x4096-bt-sm90a", "shape-skinny-16x11008x4096-bt-sm90a",
                     "shape-matvec-4096x1x4096-bt-sm90a", "shape-smallk-16384x16384x32-sm90a"],
    },
    "softmax": {
        "about": "row softmax at kb's defaults, from 3 rows to 400000 columns, against "
                 "torch.softmax and torch.compile",
        "programs": ["softmax-8192x32768", "softmax-4096x4096", "softmax-32768x1024",
                     "softmax-1024x400000", "softmax-2048x65536", "softmax-16384x40000",
                     "softmax-1000x4099", "softmax-3x4099"],
    },
    "fusion": {
        "about": "fused elementwise chains, softmax prologues and matmul epilogues, against "
                 "PyTorch and kb's own unfused bundle",
        "programs": ["bgd-16384x8192", "bgd-4096x1024", "bgd-1000x1001", "attn-probs-8192x4096",
                     "attn-probs-1000x1001", "attn-probs-256x200000",
                     "mm-bias-gelu-tf32-4096-sm90a", "mm-bias-gelu-tf32-1000x700x1500-sm90a",
                     "bias_gelu_dropout", "acts-16384x8192", "acts-bf16-16384x8192"],
    },
    "llama": {
        "about": "the Llama block's bf16 linears as the kb backend cuts them (B 1 x T 2048: "
                 "q/k/v/o, w1, w3 + SiLU-mul, w2 + residual), kb's defaults and tile "
                 "variants, against the bf16 cuBLAS routes and F.linear",
        "from": "llama",
    },
    "half": {
        "about": "16-bit tensors: bf16 and f16 matmuls on wgmma (both forms of B, edges, "
                 "an epilogue), softmax and bias + GELU + dropout in bf16, against the "
                 "16-bit cuBLAS routes and PyTorch in the same dtype",
        "from": "half",
    },
    "norms": {
        "about": "LayerNorm (with the residual add fused in front) and RMSNorm in f32 and "
                 "bf16, sum / max over the last axis, log_softmax, one block a row, "
                 "against PyTorch and torch.compile",
        "from": "norms",
    },
    "reductions": {
        "about": "sum / mean / max over the last, first and a middle axis of 8192 x 8192 "
                 "and 64 x 4096 x 4096, whole-tensor sum and max of 2^28 floats, odd "
                 "shapes, against PyTorch and torch.compile",
        "from": "reductions",
    },
    "attention": {
        "about": "kb.attention (FlashAttention-style) in f32 and bf16, 16 x 32 heads of "
                 "S 1024, 4096 and 8192, D 64 and 128, causal and not, against "
                 "F.scaled_dot_product_attention (flash, efficient) and torch.compile",
        "from": "attention", "chip": "sm_90a",
    },
    "tune": {
        "about": "the programs kb-tune is measured on (docs/kb-tune.md), at kb's defaults; "
                 "kb-tune's own runs: scripts/gpu-tune.sh",
        "from": "tune", "chip": "sm_90a",
    },
    "models": {
        "about": "torch.compile(model, backend=\"kb\") at the sizes of issue #47: GPT-2 blocks "
                 "(hidden 768 and 1600, sequence 1024, batch 8) and a Llama block (hidden 4096, "
                 "sequence 2048, batch 1) in f32 (TF32 matmuls) and bf16, checked against eager, then "
                 "timed against eager and Inductor (max-autotune-no-cudagraphs, default)",
        "kind": "models",
        "models": {
            "gpt2-768": {"model": "GPT2Block", "args": [768, 12], "input": [8, 1024, 768]},
            "gpt2-1600": {"model": "GPT2Block", "args": [1600, 25], "input": [8, 1024, 1600]},
            "llama-4096": {"model": "LlamaBlock", "args": [4096, 32], "kwargs": {"max_seq": 2048},
                           "input": [1, 2048, 4096]},
        },
        "dtypes": ["f32", "bf16"],
    },
    "models-tiny": {
        "about": "the models suite's machinery on small blocks (a host dry run, a quick GPU check)",
        "kind": "models",
        "models": {
            "gpt2-64": {"model": "GPT2Block", "args": [64, 2], "input": [2, 16, 64]},
            "llama-64": {"model": "LlamaBlock", "args": [64, 2], "kwargs": {"max_seq": 64},
                         "input": [1, 16, 64]},
        },
        "dtypes": ["f32", "bf16"],
    },
    "backend-overhead": {
        "about": "the kb backend's Python launch path per kernel over a CUDA-graph replay "
                 "(issue #47: at most 10 us), the kb.models MLP at M 64 and 50 (bucket 64), and a GPT-2 and a "
                 "Llama block (bf16, 64 tokens) captured whole",
        "kind": "backend-overhead",
        "name": "mlp-256",
        "model": {"model": "MLP", "args": [256, 512, 128], "input": [64, 256]},
        "rows": [64, 50],
        "buckets": [64],
        # Whole models at a launch-bound shape, captured whole: the call over a
        # bare replay of its CUDA graph, per kernel of that graph (the MLP's
        # one piece of 2 kernels carries Dynamo's whole per-call cost).
        "blocks": {
            "gpt2-768-t64": {"model": "GPT2Block", "args": [768, 12], "input": [1, 64, 768], "dtype": "bf16"},
            "llama-512-t64": {"model": "LlamaBlock", "args": [512, 8], "input": [1, 64, 512], "dtype": "bf16"},
        },
    },
    "serving": {
        "about": "issue #47's serving loop: torch.compile(model, backend=\"kb\") called at every M of "
                 "1..512 in a shuffled order (compiles counted, target <= 8, each output against eager), "
                 "then each bucket's bottom, middle and top M (GPT-2: bottom and top) timed against the "
                 "model compiled for that exact M (target: within 5%); the MLP at hidden 4096 (rows M) "
                 "and a GPT-2 block (batch M of 64 tokens), f32 (TF32) and bf16",
        "kind": "serving",
        "models": {
            "mlp-1024": {"model": "MLP", "args": [1024, 4096, 1024], "input": [1, 1024]},
            # Three pieces a shape: the bottom (the most padding) and the top of
            # each bucket only, to keep the cache small (docs/bench.md).
            "gpt2-768": {"model": "GPT2Block", "args": [768, 12], "input": [1, 64, 768],
                         "samples": ["bottom", "top"]},
        },
        "dtypes": ["f32", "bf16"],
        "max_m": 512, "seed": 0,
    },
    "serving-tiny": {
        "about": "the serving suite's machinery on a small MLP over M 1..24 (a host dry run, a quick "
                 "GPU check)",
        "kind": "serving",
        "models": {"mlp-64": {"model": "MLP", "args": [64, 128, 32], "input": [1, 64]}},
        "dtypes": ["f32"],
        "max_m": 24, "seed": 0, "samples": ["bottom", "top"],
    },
}
