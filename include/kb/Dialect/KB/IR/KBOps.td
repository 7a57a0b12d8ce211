//===- KBOps.td - kb operations ---------------------------*- tablegen -*-===//
//
// The ops of the kb dialect: matmul, softmax, the layout ops (transpose, pad),
// the elementwise family and the fusion region that kb-fuse-elementwise
// builds.
//
//===----------------------------------------------------------------------===//

#ifndef KB_OPS_TD
#define KB_OPS_TD

include "kb/Dialect/KB/IR/KBDialect.td"
include "kb/Dialect/KB/IR/KBAttrs.td"
include "kb/Dialect/KB/IR/KBInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def KB_F32Tensor : RankedTensorOf<[F32]>;
// f32, or a 16-bit type (loads and stores in 16 bits, arithmetic in f32).
def KB_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;

// The per-op decisions. Its fields are described once, in the attribute's own
// documentation (docs/generated/KBAttrs.md), not in every op's table.
def KB_OptionalConfigAttr : OptionalAttr<KB_ConfigAttr> {
  let description = "The kernel's decisions: see `#kb.config` (docs/generated/KBAttrs.md).";
}

class KB_Op<string mnemonic, list<Trait> traits = []>
    : Op<KB_Dialect, mnemonic, !listconcat(traits, [Pure])>;

//===----------------------------------------------------------------------===//
// Matmul and softmax
//===----------------------------------------------------------------------===//

def KB_MatmulOp : KB_Op<"matmul"> {
  let summary = "matrix product C = A x B (optionally batched, B transposed)";
  let description = [{
    `lhs` is MxK (or BxMxK), `rhs` is KxN (or BxKxN; NxK / BxNxK with
    `transpose_b`). With `padded_b` (only with `transpose_b`) the rows of
    `rhs` may be longer than K (NxK' with K' >= K, a padded leading
    dimension, as BLAS's ldb): the matmul reads the first K of each row.
    kb-select-mma makes one from a `kb.transpose ... pad(32)` so that every
    row of B^T starts on a 128-byte line. `precision` picks the arithmetic: `ieee` (fp32 FFMA),
    `tf32` (tensor cores, about 1e-3 relative error) or `tf32x3` (three
    tf32 products for near-fp32 accuracy on tensor cores), for f32
    operands. f16 and bf16 operands (both of one type) have one arithmetic,
    the tensor cores in their type with f32 accumulation (precision
    `native`), and are written without the precision keyword; their result
    is f32 or the operands' type (the epilogue runs in f32 and is rounded
    once at the store).

    With `split_chunk = C` (made by kb-split-k from `#kb.config<split = S>`;
    not batched) the result is SxMxN: slice s holds the partial product over
    K indices [s*C, min((s+1)*C, K)), and a `kb.split_sum` adds the slices.

    Example:
    ```mlir
    %c = kb.matmul %a, %b precision(tf32) : tensor<2048x1024xf32>, tensor<1024x512xf32> -> tensor<2048x512xf32>
    %d = kb.matmul %x, %w transpose_b : tensor<2048x1024xbf16>, tensor<512x1024xbf16> -> tensor<2048x512xbf16>
    ```
  }];
  let arguments = (ins KB_FloatTensor:$lhs, KB_FloatTensor:$rhs,
                   KB_PrecisionAttr:$precision, UnitAttr:$transpose_b,
                   UnitAttr:$padded_b, OptionalAttr<I64Attr>:$split_chunk,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs``custom<Precision>($precision)
    (`transpose_b` $transpose_b^)?
    (`padded_b` $padded_b^)?
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def KB_GatedMatmulOp : KB_Op<"gated_matmul"> {
  let summary = "gate(A x B1^T) * (A x B2^T): SwiGLU's and GeGLU's two linears";
  let description = [{
    `result = gate(lhs x rhs1^T) * (lhs x rhs2^T)`, elementwise over the MxN
    result: Llama's `F.silu(w1(h)) * w3(h)` (gate `silu`) and GeGLU's
    `F.gelu(w1(h)) * w3(h)` (gates `gelu_tanh`, `gelu_erf`). `lhs` is MxK;
    `rhs1` and `rhs2` are both NxK (as F.linear's weights are: B given as
    B^T, so `transpose_b` is the only layout), of one type. The two products
    accumulate in f32 and the gate and product run in f32 on them, rounded
    once at the store; the result is f32 or the operands' type. Operand
    types and `precision` follow kb.matmul.

    kb-fuse-gated-matmul makes one from `kb.mul(kb.silu(kb.matmul(A, B1)),
    kb.matmul(A, B2))` where the two matmuls share A and nothing else reads
    their results. Its kernel (planned, docs/design.md "Gated matmul")
    computes both products for one output tile from one A tile, so neither
    MxN product goes to memory.

    Example:
    ```mlir
    %y = kb.gated_matmul %h, %w1, %w3 gate(silu) transpose_b : tensor<2048x4096xbf16>, tensor<10880x4096xbf16>, tensor<10880x4096xbf16> -> tensor<2048x10880xbf16>
    ```
  }];
  let arguments = (ins KB_FloatTensor:$lhs, KB_FloatTensor:$rhs1,
                   KB_FloatTensor:$rhs2, KB_GateAttr:$gate,
                   KB_PrecisionAttr:$precision, UnitAttr:$transpose_b);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs1 `,` $rhs2``custom<Precision>($precision)
    `gate` `(` custom<EnumKeyword>($gate) `)` (`transpose_b` $transpose_b^)?
    attr-dict `:` type($lhs) `,` type($rhs1) `,` type($rhs2) `->` type($result)
  }];
  let hasVerifier = 1;
}

def KB_SoftmaxOp : KB_Op<"softmax", [SameOperandsAndResultType]> {
  let summary = "softmax over the last axis";
  let description = [{
    `result[..., j] = exp(x[..., j] - max) / sum_k exp(x[..., k] - max)`.
    The strategy (`registers`, `split`, `split_shared`, `split_global` or
    `online`, see
    `#kb.config`) and, for the split ones, the cluster size are chosen by
    kb-select-config and recorded in `config`.

    Example: `%y = kb.softmax %x : tensor<8192x32768xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def KB_TransposeOp : KB_Op<"transpose"> {
  let summary = "swaps the last two axes";
  let description = [{
    `result[..., j, i] = input[..., i, j]` for a rank-2 (RxC) or batched
    rank-3 (BxRxC) tensor. kb-select-mma puts one in front of a matmul whose
    arithmetic unit reads B K-major (wgmma TF32) when B is row-major, and
    sets the matmul's `transpose_b`. With `pad(P)` the result's last axis is
    the input's row count rounded up to a multiple of P, and the extra
    entries are zero (a padded leading dimension; see kb.matmul's
    `padded_b`).

    Example: `%bt = kb.transpose %b : tensor<1024x512xf32> -> tensor<512x1024xf32>`,
    `%bt = kb.transpose %b pad(32) : tensor<1500x700xf32> -> tensor<700x1504xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, OptionalAttr<I64Attr>:$pad,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`pad` `(` $pad^ `)`)? attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def KB_PadOp : KB_Op<"pad"> {
  let summary = "pads the last axis with zeros to a multiple";
  let description = [{
    `result[..., j] = input[..., j]` for `j` below the input's last
    dimension, and `0.0` up to the result's, which is the input's rounded up
    to a multiple of `multiple` (rank 2 or 3). kb-select-mma puts one in
    front of a wgmma matmul whose K is not a multiple of 4: TMA reads rows
    whose pitch is a multiple of 16 bytes only, so A (and a B given as
    B^T) gets rows of K rounded up to 32 floats, and the matmul's k loop
    runs over the padded K (the zero columns add exact zeros).

    Example: `%ap = kb.pad %a multiple(32) : tensor<2048x2050xf32> -> tensor<2048x2080xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, I64Attr:$multiple,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input `multiple` `(` $multiple `)` attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise ops
//===----------------------------------------------------------------------===//

class KB_ElementwiseOp<string mnemonic, list<Trait> traits = []>
    : KB_Op<mnemonic, !listconcat(traits,
        [DeclareOpInterfaceMethods<KB_ElementwiseOpInterface>])> {
  let hasVerifier = 1;
}

class KB_BinaryOp<string mnemonic, string expr>
    : KB_ElementwiseOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = "elementwise " # expr;
  let description = "Elementwise `" # expr # "` of two tensors of one shape.\n\n"
      # "Example: `%z = kb." # mnemonic # " %x, %y : tensor<4096x1024xf32>`";
  let arguments = (ins KB_FloatTensor:$lhs, KB_FloatTensor:$rhs,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def KB_AddOp : KB_BinaryOp<"add", "lhs + rhs">;
def KB_SubOp : KB_BinaryOp<"sub", "lhs - rhs">;
def KB_MulOp : KB_BinaryOp<"mul", "lhs * rhs">;
def KB_DivOp : KB_BinaryOp<"div", "lhs / rhs">;

class KB_UnaryOp<string mnemonic, string expr>
    : KB_ElementwiseOp<mnemonic, [SameOperandsAndResultType]> {
  let summary = "elementwise " # expr;
  let description = "Elementwise `" # expr # "`.\n\n"
      # "Example: `%y = kb." # mnemonic # " %x : tensor<4096x1024xf32>`";
  let arguments = (ins KB_FloatTensor:$input, KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def KB_ReluOp : KB_UnaryOp<"relu", "max(x, 0)">;
def KB_TanhOp : KB_UnaryOp<"tanh", "tanh(x)">;
def KB_SigmoidOp : KB_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def KB_ExpOp : KB_UnaryOp<"exp", "exp(x)">;
def KB_SiluOp : KB_UnaryOp<"silu", "x / (1 + exp(-x))">;

def KB_AddScalarOp : KB_ElementwiseOp<"add_scalar", [SameOperandsAndResultType]> {
  let summary = "adds a constant";
  let description = [{
    `result = input + value` (PyTorch's `x + c`; `x - c` is `value(-c)`).
    The value must be finite.

    Example: `%y = kb.add_scalar %x value(1.0) : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, F32Attr:$value,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input `value` `(` $value `)` attr-dict `:` type($result)";
}

def KB_PowOp : KB_ElementwiseOp<"pow", [SameOperandsAndResultType]> {
  let summary = "raises to a constant power";
  let description = [{
    `result = input ^ exponent` (PyTorch's `x ** c`, `torch.pow(x, c)`). An
    integer exponent of magnitude at most 32 is computed by multiplications
    (square and multiply; a negative one then divides 1 by the product), so
    a negative base is fine; exponent 0 gives 1. Any other exponent is
    `powf` (libdevice), which is NaN for a negative base, as in PyTorch.
    The exponent must be finite.

    Example: `%y = kb.pow %x exponent(3.0) : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, F32Attr:$exponent,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input `exponent` `(` $exponent `)` attr-dict `:` type($result)";
}

def KB_LeakyReluOp : KB_ElementwiseOp<"leaky_relu", [SameOperandsAndResultType]> {
  let summary = "leaky ReLU with a constant negative slope";
  let description = [{
    `result = x` where `x >= 0`, `slope * x` elsewhere (PyTorch's
    `F.leaky_relu(x, negative_slope)`; a NaN stays NaN). The slope must be
    finite.

    Example: `%y = kb.leaky_relu %x slope(0.01) : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, F32Attr:$slope,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input `slope` `(` $slope `)` attr-dict `:` type($result)";
}

def KB_ConvertOp : KB_ElementwiseOp<"convert"> {
  let summary = "converts between f32, f16 and bf16";
  let description = [{
    `result = x` in the result's element type, rounded to nearest even
    (`x.to(torch.bfloat16)`, `.half()`, `.float()` in PyTorch). Inside a
    fused kernel the value stays in f32 registers, rounded where the convert
    is, and is stored in the type of the kernel's output.

    Example: `%y = kb.convert %x : tensor<4096x1024xf32> -> tensor<4096x1024xbf16>`
  }];
  let arguments = (ins KB_FloatTensor:$input, KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def KB_SplitSumOp : KB_ElementwiseOp<"split_sum"> {
  let summary = "sum of a split-K matmul's partial products";
  let description = [{
    `input` is SxD0x...: the result is D0x..., the sum over the leading axis
    taken in order s = 0, 1, ..., S-1 (so the same bits every run). kb-split-k
    puts one after a `kb.matmul` with `split_chunk`; the matmul's epilogue
    fuses after it.

    Example: `%c = kb.split_sum %p : tensor<4x256x256xf32> -> tensor<256x256xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def KB_BiasAddOp : KB_ElementwiseOp<"bias_add"> {
  let summary = "adds a vector broadcast along the last axis";
  let description = [{
    `result[..., j] = input[..., j] + bias[j]`; the bias length must equal
    the input's last dimension.

    Example: `%y = kb.bias_add %x, %b : tensor<4096x1024xf32>, tensor<1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, KB_FloatTensor:$bias,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $bias attr-dict `:` type($input) `,` type($bias) `->` type($result)
  }];
}

def KB_ScaleOp : KB_ElementwiseOp<"scale", [SameOperandsAndResultType]> {
  let summary = "multiplies by a constant";
  let description = [{
    `result = input * factor`.

    Example: `%y = kb.scale %x by 0.125 : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, F32Attr:$factor,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input `by` $factor attr-dict `:` type($result)";
  let hasFolder = 1;
}

def KB_GeluOp : KB_ElementwiseOp<"gelu", [SameOperandsAndResultType]> {
  let summary = "GELU, tanh or erf form";
  let description = [{
    `erf`: `0.5 x (1 + erf(x / sqrt(2)))`.
    `tanh`: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`, emitted through
    exp as `x / (1 + exp(-2 z))`.

    Example: `%y = kb.gelu %x approx(tanh) : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, KB_GeluApproxAttr:$approx,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input `approx` `(` custom<EnumKeyword>($approx) `)` attr-dict `:` type($result)
  }];
}

def KB_DropoutOp : KB_ElementwiseOp<"dropout", [SameOperandsAndResultType]> {
  let summary = "inverted dropout with a counter-based mask";
  let description = [{
    Element i is kept when the Philox4x32-10 draw for (seed, i) is at least
    `p`, and then scaled by 1 / (1 - p); otherwise it is zero. The draw
    depends only on the seed and the logical (row-major) element index, so
    the mask does not change with tiling or fusion, and kb-run recomputes it
    exactly. `p` must lie in [0, 1).

    Example: `%y = kb.dropout %x p(0.3) seed(42) : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, F32Attr:$p, I64Attr:$seed,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input `p` `(` $p `)` `seed` `(` $seed `)` attr-dict `:` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Rotary position embedding (issue #47's Llama block)
//===----------------------------------------------------------------------===//

def KB_RotaryOp : KB_Op<"rotary"> {
  let summary = "rotary position embedding of interleaved pairs";
  let description = [{
    `input` is [..., C]: its rows (every index of the leading axes,
    row-major, r = 0, 1, ...) hold C = heads x head_dim values, the heads
    side by side. `cos` and `sin` are P x head_dim / 2 tables: row r is
    position r mod P. With c = j mod head_dim, i = c / 2 (pairs of adjacent
    columns, j even):

        out[r, j]     = x[r, j] cos[r mod P, i] - x[r, j + 1] sin[r mod P, i]
        out[r, j + 1] = x[r, j] sin[r mod P, i] + x[r, j + 1] cos[r mod P, i]

    (kb.models.rotary: `x1, x2 = x[..., ::2], x[..., 1::2]`, then
    `stack((x1 cos - x2 sin, x1 sin + x2 cos), -1).flatten(-2)`). A linear's
    output (B*T, heads*head_dim) is the op with P = T; a contiguous
    (B, heads, T, head_dim) tensor is the op with C = head_dim (one head a
    row, rows b*heads*T + h*T + t, position t = r mod T). P and head_dim are
    the tables' shape, so they are not repeated as attributes. The math is
    f32 (16-bit values and tables widened exactly), rounded once to the
    result's type, the input's. The tables are f32 or the input's type.

    kb.rotary is not an elementwise op (an output reads its pair's other
    element and the tables at the row's position): kb-fuse-elementwise
    puts it only into a matmul's epilogue, where each thread holds whole
    column pairs of the accumulators, or into an elementwise kernel (a
    kernel of its own, or a split-K sum), whose vectors hold whole pairs.

    Example:
    `%y = kb.rotary %x, %cos, %sin : tensor<2048x4096xbf16>, tensor<2048x64xbf16>, tensor<2048x64xbf16> -> tensor<2048x4096xbf16>`
  }];
  let arguments = (ins KB_FloatTensor:$input, KB_FloatTensor:$cos,
                   KB_FloatTensor:$sin, KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $cos `,` $sin attr-dict `:` type($input) `,` type($cos) `,`
    type($sin) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// P: the tables' rows (positions).
    int64_t getPeriod() { return getCos().getType().getShape()[0]; }
    /// head_dim: twice the tables' columns.
    int64_t getHeadDim() { return 2 * getCos().getType().getShape()[1]; }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fusion
//===----------------------------------------------------------------------===//

def KB_FusionOp : KB_Op<"fusion", [IsolatedFromAbove,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "a group of ops that becomes one kernel";
  let description = [{
    The region's block arguments stand for `inputs`, in order; `kb.yield`
    returns the results. Built by kb-fuse-elementwise, or written by hand.
    The body holds kb elementwise ops, optionally preceded by one
    `kb.matmul` (the elementwise chain becomes its epilogue) or around one
    `kb.softmax`.

    Example:
    ```mlir
    %y = kb.fusion ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) {
    ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
      %0 = kb.bias_add %a, %c : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
      %1 = kb.relu %0 : tensor<4x8xf32>
      kb.yield %1 : tensor<4x8xf32>
    } -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Variadic<KB_FloatTensor>:$inputs,
                   KB_OptionalConfigAttr:$config);
  let results = (outs Variadic<KB_FloatTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    (`ins` `(` $inputs^ `:` type($inputs) `)`)? attr-dict-with-keyword $body
    `->` type($results)
  }];
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                                 "::mlir::ValueRange":$inputs)>];
}

def KB_YieldOp : KB_Op<"yield", [Terminator, ReturnLike, HasParent<"FusionOp">]> {
  let summary = "returns the results of a kb.fusion";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "($values^ `:` type($values))? attr-dict";
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
}

//===----------------------------------------------------------------------===//
// Activations and simple math (issue #45): PyTorch's definitions, f32
// arithmetic (16-bit tensors load and store in 16 bits)
//===----------------------------------------------------------------------===//

def KB_SeluOp : KB_UnaryOp<"selu",
    "scale * (x > 0 ? x : alpha * (exp(x) - 1)), alpha = 1.6732632, scale = 1.0507010">;
def KB_HardsigmoidOp : KB_UnaryOp<"hardsigmoid", "min(max(x + 3, 0), 6) / 6">;
def KB_HardswishOp : KB_UnaryOp<"hardswish", "x * min(max(x + 3, 0), 6) / 6">;
def KB_MishOp : KB_UnaryOp<"mish", "x * tanh(log(1 + exp(x)))">;
def KB_SoftsignOp : KB_UnaryOp<"softsign", "x / (1 + |x|)">;
def KB_AbsOp : KB_UnaryOp<"abs", "|x|">;
def KB_NegOp : KB_UnaryOp<"neg", "-x">;
def KB_SqrtOp : KB_UnaryOp<"sqrt", "sqrt(x)">;
def KB_RsqrtOp : KB_UnaryOp<"rsqrt", "1 / sqrt(x)">;
def KB_LogOp : KB_UnaryOp<"log", "log(x) (natural)">;

// A NaN operand gives NaN (torch.minimum / torch.maximum).
def KB_MinimumOp : KB_BinaryOp<"minimum", "min(lhs, rhs), NaN if either is NaN">;
def KB_MaximumOp : KB_BinaryOp<"maximum", "max(lhs, rhs), NaN if either is NaN">;

def KB_SoftplusOp : KB_ElementwiseOp<"softplus", [SameOperandsAndResultType]> {
  let summary = "softplus with PyTorch's beta and threshold";
  let description = [{
    `result = log(1 + exp(beta * x)) / beta`, and `x` where
    `beta * x > threshold` (PyTorch's `F.softplus(x, beta, threshold)`,
    defaults 1 and 20). `beta` must be finite and positive, `threshold`
    finite.

    Example: `%y = kb.softplus %x beta(1.0) threshold(20.0) : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, F32Attr:$beta, F32Attr:$threshold,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input `beta` `(` $beta `)` `threshold` `(` $threshold `)` attr-dict `:` type($result)
  }];
}

def KB_EluOp : KB_ElementwiseOp<"elu", [SameOperandsAndResultType]> {
  let summary = "ELU with a constant alpha";
  let description = [{
    `result = x` where `x > 0`, `alpha * (exp(x) - 1)` elsewhere (PyTorch's
    `F.elu(x, alpha)`; a NaN stays NaN). `alpha` must be finite.

    Example: `%y = kb.elu %x alpha(1.0) : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, F32Attr:$alpha,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input `alpha` `(` $alpha `)` attr-dict `:` type($result)";
}

def KB_HardtanhOp : KB_ElementwiseOp<"hardtanh", [SameOperandsAndResultType]> {
  let summary = "hardtanh: x clamped to [min_val, max_val]";
  let description = [{
    `result = min(max(x, min_val), max_val)` (PyTorch's
    `F.hardtanh(x, min_val, max_val)`, defaults -1 and 1; a NaN stays NaN).
    Both bounds must be finite, `min_val <= max_val`.

    Example: `%y = kb.hardtanh %x min_val(-1.0) max_val(1.0) : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, F32Attr:$min_val,
                   F32Attr:$max_val, KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input `min_val` `(` $min_val `)` `max_val` `(` $max_val `)` attr-dict `:` type($result)
  }];
}

def KB_ClampOp : KB_ElementwiseOp<"clamp", [SameOperandsAndResultType]> {
  let summary = "clamps to constant bounds, either optional";
  let description = [{
    `result = min(max(x, min), max)`, a missing bound not applied
    (PyTorch's `torch.clamp(x, min, max)` with numbers; a NaN stays NaN).
    At least one bound is given; each is finite, and `min <= max`.

    Example: `%y = kb.clamp %x min(0.0) max(6.0) : tensor<4096x1024xf32>`,
    `%z = kb.clamp %x max(1.0) : tensor<4096x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, OptionalAttr<F32Attr>:$min,
                   OptionalAttr<F32Attr>:$max, KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`min` `(` $min^ `)`)? (`max` `(` $max^ `)`)? attr-dict `:` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Row reductions and normalizations (one block per row, RowNorm.cpp)
//===----------------------------------------------------------------------===//

class KB_RowNormOp<string mnemonic> : KB_Op<mnemonic> {
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`,` $params^)? `eps` `(` $eps `)` attr-dict `:` type($input)
    (`,` type($params)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def KB_LayerNormOp : KB_RowNormOp<"layer_norm"> {
  let summary = "layer normalization over the last axis";
  let description = [{
    `result[..., j] = (x[..., j] - mean) * rsqrt(var + eps) * weight[j] + bias[j]`,
    mean and (biased) variance over the last axis, as PyTorch's
    `F.layer_norm(x, (n,), weight, bias, eps)`. `params` is empty (no
    affine part), the weight alone, or the weight then the bias: 1-D of
    the last axis' length, of the input's element type. The result has the
    input's type. 16-bit tensors are loaded and stored in 16 bits; the
    arithmetic is f32.

    Example:
    `%y = kb.layer_norm %x, %w, %b eps(1.0e-05) : tensor<16384x1024xf32>, tensor<1024xf32>, tensor<1024xf32> -> tensor<16384x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, Variadic<KB_FloatTensor>:$params,
                   F32Attr:$eps, KB_OptionalConfigAttr:$config);
  let extraClassDeclaration = [{
    ::mlir::Value getWeight() { return getParams().empty() ? ::mlir::Value() : getParams()[0]; }
    ::mlir::Value getBias() { return getParams().size() < 2 ? ::mlir::Value() : getParams()[1]; }
  }];
}

def KB_RmsNormOp : KB_RowNormOp<"rms_norm"> {
  let summary = "RMS normalization over the last axis";
  let description = [{
    `result[..., j] = x[..., j] * rsqrt(mean_k x[..., k]^2 + eps) * weight[j]`
    (PyTorch's `F.rms_norm(x, (n,), weight, eps)`). `params` is empty or the
    weight, 1-D of the last axis' length, of the input's element type.

    Example:
    `%y = kb.rms_norm %x, %w eps(1.0e-06) : tensor<4096x8192xbf16>, tensor<8192xbf16> -> tensor<4096x8192xbf16>`
  }];
  let arguments = (ins KB_FloatTensor:$input, Variadic<KB_FloatTensor>:$params,
                   F32Attr:$eps, KB_OptionalConfigAttr:$config);
  let extraClassDeclaration = [{
    ::mlir::Value getWeight() { return getParams().empty() ? ::mlir::Value() : getParams()[0]; }
  }];
}

def KB_ReduceOp : KB_Op<"reduce"> {
  let summary = "sum, max, min or mean over one axis, or over all of them";
  let description = [{
    `result[...] = reduce_j x[..., j]` over the last axis (PyTorch's
    `x.sum(-1)`, `x.amax(-1)`, `x.amin(-1)`, `x.mean(-1)`); with
    `axis(a)` over axis a (`x.sum(a)`: a column reduction where a is not
    the last); with `all` over every element (`x.sum()`). With `keepdim`
    the reduced axis stays 1 long (`all`: every axis), else it is dropped
    (a rank-1 input needs `keepdim`: kb has no rank-0 tensors; `all`
    without `keepdim` gives `tensor<1x...>`). Accumulates in f32; a 16-bit
    result is rounded once at the store.

    Examples: `%s = kb.reduce %x sum keepdim : tensor<8192x8192xf32> -> tensor<8192x1xf32>`,
    `%c = kb.reduce %x max axis(0) : tensor<8192x8192xf32> -> tensor<8192xf32>`,
    `%t = kb.reduce %x sum all : tensor<16384x16384xf32> -> tensor<1xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, KB_ReductionKindAttr:$kind,
                   OptionalAttr<I64Attr>:$axis, UnitAttr:$all,
                   UnitAttr:$keepdim, KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = [{
    $input custom<EnumKeyword>($kind) (`axis` `(` $axis^ `)`)? (`all` $all^)?
    (`keepdim` $keepdim^)? attr-dict `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// The reduced axis: `axis`, else the last (meaningless with `all`).
    int64_t getReducedAxis() {
      return getAxisAttr() ? getAxisAttr().getInt()
                           : getInput().getType().getRank() - 1;
    }
    /// Over one axis that is not the last (ColumnReduce.cpp).
    bool isColumnReduction() {
      return !getAll() &&
             getReducedAxis() != getInput().getType().getRank() - 1;
    }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Attention (issue #46; verifier, parser and printer in KBAttention.cpp)
//===----------------------------------------------------------------------===//

def KB_AttentionOp : KB_Op<"attention"> {
  let summary = "scaled dot-product attention, softmax(scale q k^T + mask) v";
  let description = [{
    `q` is [..., Sq, D], `k` [..., Sk, D], `v` [..., Sk, Dv], rank 3
    ([BH, S, D]) or 4 ([B, H, S, D]) with equal leading dimensions; the
    result is [..., Sq, Dv]. q, k, v and the result have one element type
    (f32, f16 or bf16):

        out = softmax(scale * q @ k^T + mask (+ -inf above the diagonal
              when `causal`), dim=-1) @ v

    computed in f32 (f32 accumulators), a 16-bit result rounded once at the
    store. `causal` is PyTorch's `is_causal`: key j is visible to query i
    iff j <= i (top-left aligned). `mask(%m)` is an additive mask of the
    operands' element type, [Sq, Sk] (broadcast over the leading
    dimensions) or the full [..., Sq, Sk]. A row whose keys are all masked
    (only possible with a -inf in the mask) gives 0 (PyTorch gives NaN).
    `precision` is the arithmetic of both products: `tf32` (the default
    for f32, always printed) or `ieee` for f32; 16-bit operands have only
    `native` (tensor cores in their type, f32 accumulation), written by
    leaving the keyword out. With `lse` the op has a second result, the
    natural log-sum-exp of each query row of the scaled and masked scores,
    [..., Sq] in f32. `config` may carry `block = [BQ, BKV]` (query rows a
    block, keys a step), `stages` (K/V ring depth), `threads` and `mma`.

    `bthd` (rank 4 only; issue #47) puts the sequence before the heads:
    q is [B, Sq, H, D], k [B, Sk, H, D], v [B, Sk, H, Dv] and the result
    [B, Sq, H, Dv] - a linear's [B, T, H * D] output seen as heads, with
    no transpose(1, 2) in front of the op or behind it. The mask ([Sq, Sk]
    or [B, H, Sq, Sk]) and lse ([B, H, Sq]) keep their layout.

    Example:
    ```mlir
    %o = kb.attention %q, %k, %v scale(1.250000e-01) causal precision(tf32) : tensor<32x1024x64xf32>, tensor<32x1024x64xf32>, tensor<32x1024x64xf32> -> tensor<32x1024x64xf32>
    %o2, %lse = kb.attention %q, %k, %v mask(%m) scale(1.250000e-01) lse : tensor<2x16x1000x64xbf16>, tensor<2x16x1000x64xbf16>, tensor<2x16x1000x64xbf16>, tensor<1000x1000xbf16> -> tensor<2x16x1000x64xbf16>, tensor<2x16x1000xf32>
    %o3 = kb.attention %q3, %k3, %v3 scale(1.250000e-01) causal bthd : tensor<1x2048x32x128xbf16>, tensor<1x2048x32x128xbf16>, tensor<1x2048x32x128xbf16> -> tensor<1x2048x32x128xbf16>
    ```
  }];
  let arguments = (ins KB_FloatTensor:$q, KB_FloatTensor:$k, KB_FloatTensor:$v,
                   Optional<KB_FloatTensor>:$mask, F32Attr:$scale,
                   UnitAttr:$causal, UnitAttr:$bthd,
                   KB_PrecisionAttr:$precision,
                   KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result, Optional<KB_FloatTensor>:$lse);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The axis of q's (and k's, v's, the result's) sequence: 1 with
    /// `bthd`, else rank - 2.
    int64_t getSeqAxis() {
      return getBthd() ? 1 : getQ().getType().getRank() - 2;
    }
  }];
}

def KB_CausalMaskOp : KB_Op<"causal_mask", [SameOperandsAndResultType]> {
  let summary = "-inf above the diagonal of the last two axes";
  let description = [{
    `result[..., i, j] = j <= i ? input[..., i, j] : -inf` (rank 2 or
    more; top-left aligned, as PyTorch's `is_causal`): the unfused
    spelling of causal attention's mask. kb-fuse-attention folds one into
    a kb.attention as its `causal` attribute; kb has no kernel of its own
    for it (kb-lower-to-gpu refuses one left outside an attention).

    Example: `%y = kb.causal_mask %s : tensor<32x1024x1024xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Log-softmax (issue #45, second slice; the softmax kernel, Softmax.cpp)
//===----------------------------------------------------------------------===//

def KB_LogSoftmaxOp : KB_Op<"log_softmax", [SameOperandsAndResultType]> {
  let summary = "log-softmax over the last axis";
  let description = [{
    `result[..., j] = x[..., j] - max - log(sum_k exp(x[..., k] - max))`
    (PyTorch's `F.log_softmax(x, -1)`). Lowered by the softmax kernel with
    strategy `registers` (the row in one block's registers: one read, one
    write) or `online` (two reads, any width), chosen by kb-select-config
    and recorded in `config`; 16-bit tensors take `registers` only.

    Example: `%y = kb.log_softmax %x : tensor<4096x8192xf32>`
  }];
  let arguments = (ins KB_FloatTensor:$input, KB_OptionalConfigAttr:$config);
  let results = (outs KB_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // KB_OPS_TD
