#!/usr/bin/env python3
"""The programs kb-tune is measured on (docs/kb-tune.md, "Results"): 14
matmul shapes across the shape classes (long K, skinny M, batched, odd sizes,
large squares; TF32 on sm_90a, two fp32, one fp32 program whose precision
kb-tune may change under an accuracy budget), 4 softmax widths and 2 fused
elementwise programs; 5 held-out matmul shapes (ho_*), added after the
model changes of 2026-12-02 to test them out of sample; and 3 nn.Linear
programs (lf_*, B^T) under F.linear at kb's defaults, added 2026-12-03
(bench/results/2026-12-03-tune-linear; KB_TUNE_ONLY='^lf_' builds them
alone).

Usage: bench/tune/programs.py OUT_DIR
Writes OUT_DIR/NAME.mlir for each and OUT_DIR/programs.json: a list of
{name, class, file, args} where args are extra kb-tune options."""
import json
import os
import sys


def matmul(name, b, m, n, k, prec="tf32"):
    a = f"tensor<{b}x{m}x{k}xf32>" if b > 1 else f"tensor<{m}x{k}xf32>"
    bt = f"tensor<{b}x{k}x{n}xf32>" if b > 1 else f"tensor<{k}x{n}xf32>"
    c = f"tensor<{b}x{m}x{n}xf32>" if b > 1 else f"tensor<{m}x{n}xf32>"
    return f"""// kb-tune program {name}: matmul b{b} {m}x{n}x{k} precision({prec})
func.func @{name}(%a: {a} {{kb.name = "a"}}, %b: {bt} {{kb.name = "b"}})
    -> ({c} {{kb.name = "c"}}) {{
  %0 = kb.matmul %a, %b precision({prec}) : {a}, {bt} -> {c}
  return %0 : {c}
}}
"""


def linear(name, m, n, k):
    """F.linear's matmul: M x K times the transpose of N x K weights."""
    a, w, c = (f"tensor<{m}x{k}xf32>", f"tensor<{n}x{k}xf32>",
               f"tensor<{m}x{n}xf32>")
    return f"""// kb-tune program {name}: F.linear {m}x{n}x{k} (B^T) precision(tf32)
func.func @{name}(%a: {a} {{kb.name = "a"}}, %b: {w} {{kb.name = "b"}})
    -> ({c} {{kb.name = "c"}}) {{
  %0 = kb.matmul %a, %b precision(tf32) transpose_b : {a}, {w} -> {c}
  return %0 : {c}
}}
"""


def softmax(name, rows, cols):
    t = f"tensor<{rows}x{cols}xf32>"
    return f"""// kb-tune program {name}: softmax {rows}x{cols}
func.func @{name}(%x: {t} {{kb.name = "x"}}) -> ({t} {{kb.name = "y"}}) {{
  %0 = kb.softmax %x : {t}
  return %0 : {t}
}}
"""


def bias_gelu_dropout(name, rows, cols):
    t = f"tensor<{rows}x{cols}xf32>"
    v = f"tensor<{cols}xf32>"
    return f"""// kb-tune program {name}: bias + GELU(tanh) + dropout, fused
func.func @{name}(%x: {t} {{kb.name = "x"}}, %b: {v} {{kb.name = "bias"}})
    -> ({t} {{kb.name = "y"}}) {{
  %0 = kb.bias_add %x, %b : {t}, {v} -> {t}
  %1 = kb.gelu %0 approx(tanh) : {t}
  %2 = kb.dropout %1 p(0.1) seed(7) : {t}
  return %2 : {t}
}}
"""


def add_relu_scale(name, rows, cols):
    t = f"tensor<{rows}x{cols}xf32>"
    return f"""// kb-tune program {name}: (x + y) -> relu -> scale, fused
func.func @{name}(%x: {t} {{kb.name = "x"}}, %y: {t} {{kb.name = "y"}})
    -> ({t} {{kb.name = "z"}}) {{
  %0 = kb.add %x, %y : {t}
  %1 = kb.relu %0 : {t}
  %2 = kb.scale %1 by 0.5 : {t}
  return %2 : {t}
}}
"""


PROGRAMS = [
    # name, class, text, extra kb-tune args
    ("mm_longk_256x256x16384", "long K", matmul("mm_longk_256x256x16384", 1, 256, 256, 16384), []),
    ("mm_longk_512x768x8192", "long K", matmul("mm_longk_512x768x8192", 1, 512, 768, 8192), []),
    ("mm_skinny_16x4096x4096", "skinny M", matmul("mm_skinny_16x4096x4096", 1, 16, 4096, 4096), []),
    ("mm_skinny_64x8192x2048", "skinny M", matmul("mm_skinny_64x8192x2048", 1, 64, 8192, 2048), []),
    ("mm_batched_8x512x512x512", "batched", matmul("mm_batched_8x512x512x512", 8, 512, 512, 512), []),
    ("mm_batched_32x256x256x1024", "batched", matmul("mm_batched_32x256x256x1024", 32, 256, 256, 1024), []),
    ("mm_odd_1000x700x1500", "odd", matmul("mm_odd_1000x700x1500", 1, 1000, 700, 1500), []),
    ("mm_odd_1023x1025x1027", "odd", matmul("mm_odd_1023x1025x1027", 1, 1023, 1025, 1027), []),
    ("mm_odd_3000x2000x500", "odd", matmul("mm_odd_3000x2000x500", 1, 3000, 2000, 500), []),
    ("mm_square_2048", "large square", matmul("mm_square_2048", 1, 2048, 2048, 2048), []),
    ("mm_square_4096", "large square", matmul("mm_square_4096", 1, 4096, 4096, 4096), []),
    ("mm_wide_4096x4096x1024", "large square", matmul("mm_wide_4096x4096x1024", 1, 4096, 4096, 1024), []),
    ("mm_fp32_2048", "large square (fp32)", matmul("mm_fp32_2048", 1, 2048, 2048, 2048, "ieee"), []),
    ("mm_fp32_budget_1024", "precision (fp32, budget 1e-3)",
     matmul("mm_fp32_budget_1024", 1, 1024, 1024, 1024, "ieee"), ["--max-rel-error", "1e-3"]),
    ("softmax_4096x1024", "softmax", softmax("softmax_4096x1024", 4096, 1024), []),
    ("softmax_4096x8192", "softmax", softmax("softmax_4096x8192", 4096, 8192), []),
    ("softmax_1024x32768", "softmax", softmax("softmax_1024x32768", 1024, 32768), []),
    ("softmax_256x131072", "softmax", softmax("softmax_256x131072", 256, 131072), []),
    ("ew_bias_gelu_dropout_4096x4096", "fused elementwise",
     bias_gelu_dropout("ew_bias_gelu_dropout_4096x4096", 4096, 4096), []),
    ("ew_add_relu_scale_8192x2048", "fused elementwise",
     add_relu_scale("ew_add_relu_scale_8192x2048", 8192, 2048), []),
    # Held out (2026-12-02): shapes no model change looked at, measured after
    # the model of that day was fixed, to test it out of sample
    # (docs/kb-tune.md, "The held-out run").
    ("ho_odd_1537x769x2051", "odd (held out)", matmul("ho_odd_1537x769x2051", 1, 1537, 769, 2051), []),
    ("ho_batched_16x384x384x768", "batched (held out)",
     matmul("ho_batched_16x384x384x768", 16, 384, 384, 768), []),
    ("ho_square_3072", "large square (held out)", matmul("ho_square_3072", 1, 3072, 3072, 3072), []),
    ("ho_skinny_32x4096x8192", "skinny M (held out)", matmul("ho_skinny_32x4096x8192", 1, 32, 4096, 8192), []),
    ("ho_longk_384x384x32768", "long K (held out)", matmul("ho_longk_384x384x32768", 1, 384, 384, 32768), []),
    # nn.Linear (B^T) at M 2048-8192 where kb's default was under F.linear
    # (2026-12-03-width call 6: 0.950x, 0.956x, 0.965x); added 2026-12-03.
    ("lf_2048x4096x4096", "nn.Linear", linear("lf_2048x4096x4096", 2048, 4096, 4096), []),
    ("lf_4096x8192x8192", "nn.Linear", linear("lf_4096x8192x8192", 4096, 8192, 8192), []),
    ("lf_2048x8192x28672", "nn.Linear", linear("lf_2048x8192x28672", 2048, 8192, 28672), []),
]


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    listing = []
    for name, cls, text, args in PROGRAMS:
        path = os.path.join(out, name + ".mlir")
        with open(path, "w") as f:
            f.write(text)
        listing.append({"name": name, "class": cls, "file": path, "args": args})
    with open(os.path.join(out, "programs.json"), "w") as f:
        json.dump(listing, f, indent=1)
    print(f"tune_programs: {len(listing)} programs in {out}")


if __name__ == "__main__":
    main()
