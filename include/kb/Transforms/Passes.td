//===- Passes.td - kb's decision passes -------------------*- tablegen -*-===//
//
// The passes that decide how kb programs become kernels: what to fuse, which
// config each op gets, how it is tiled, what is staged in shared memory and
// which unit does the arithmetic. Each decision is written into the IR
// (kb.fusion, #kb.config) where the lowering reads it and lit tests check it.
//
//===----------------------------------------------------------------------===//

#ifndef KB_TRANSFORMS_PASSES_TD
#define KB_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def KBFuseElementwise : Pass<"kb-fuse-elementwise", "func::FuncOp"> {
  let summary = "Groups maximal chains of elementwise kb ops into kb.fusion";
  let description = [{
    Walks each function and grows groups of elementwise ops (kb.add, kb.gelu,
    kb.dropout, ...) whose intermediate results are used only inside the
    group. Each group becomes one `kb.fusion`, so it reads its inputs once
    and writes its result once: bias + GELU + dropout goes from six trips to
    memory to two. A value used outside the chain ends the chain, so no
    kernel recomputes or re-reads another's work. A kb.matmul or kb.softmax
    whose result only the chain reads joins the group as its anchor: the
    chain becomes its epilogue (for a matmul, applied to the accumulators
    before the single store). A softmax also takes the elementwise chain that
    feeds only it, as a prologue computed while the row is loaded; so does
    a kb.layer_norm or kb.rms_norm (a residual add in front of the norm,
    an epilogue after it; its weight and bias stay kernel inputs). Rules:
    docs/fusion.md. Also spelled `--fuse-elementwise`.
  }];
  let dependentDialects = ["::mlir::kb::KBDialect"];
}

def KBFuseGatedMatmul : Pass<"kb-fuse-gated-matmul", "func::FuncOp"> {
  let summary = "Folds gate(A B1^T) * (A B2^T) into one kb.gated_matmul";
  let description = [{
    Finds SwiGLU's `kb.mul(kb.silu(kb.matmul(A, B1)), kb.matmul(A, B2))`
    (and GeGLU's, with kb.gelu; either operand order of the mul) where both
    matmuls read the same A value, take B1 and B2 of one type as B^T
    (`transpose_b`, F.linear's weights), have one precision, no config,
    split or padded B, and nothing but the gate and the mul reads their
    results. It replaces the three ops with one `kb.gated_matmul`, whose
    kernel computes both products of an output tile from one A tile and
    writes only the gated product. Anything else stays as it is. Not yet in
    kb-compile's pipeline: kb.gated_matmul has no kernel yet
    (docs/design.md "Gated matmul").
  }];
  let dependentDialects = ["::mlir::kb::KBDialect"];
}

def KBFuseAttention : Pass<"kb-fuse-attention", "func::FuncOp"> {
  let summary = "Folds q k^T -> scale -> mask -> softmax -> v into one kb.attention";
  let description = [{
    Recognizes attention written out op by op and replaces it with one
    `kb.attention` (one kernel that never writes the Sq x Sk scores to
    memory): a batched (rank-3) `kb.matmul` of q by k with `transpose_b`
    (or of q by a `kb.transpose` of k), optionally `kb.scale` (the factors
    multiply into the attention's `scale`), then optionally a `kb.add` of a
    mask of the scores' shape and a `kb.causal_mask` (either order; they
    become `mask` and `causal`), then `kb.softmax`, optionally a
    `kb.convert` to the operands' 16-bit type, then a `kb.matmul` of the
    probabilities by v. Every intermediate must have one use, both matmuls
    one precision (tf32 or ieee for f32) and no config. At each matmul that
    reads a softmax a remark says what was fused or why not. Runs before
    kb-fuse-elementwise in kb-compile (off with fuse=false). Also spelled
    `--fuse-attention`.
  }];
  let dependentDialects = ["::mlir::kb::KBDialect"];
}

def KBSelectConfig : Pass<"kb-select-config", "func::FuncOp"> {
  let summary = "Attaches a launchable #kb.config to every kb op";
  let description = [{
    Picks threads per block, vector width and, for softmax, the strategy:
    `registers` when the row fits in the registers of one block;
    `split_global` (up to 64 ordinary blocks of 512 threads, each part in
    shared memory, partials exchanged through a global workspace) when the
    parts fit two blocks per SM; `online` (two reads) otherwise; with the
    blocks per row, from a model of the target (threads, registers and
    shared memory per block). The cluster strategies `split` (2-16 blocks,
    parts in registers) and `split_shared` (parts in shared memory,
    `block = [k]` rows per cluster) are taken when a config asks for them.
    Rows whose length is not a multiple of 4 keep 16-byte accesses (aligned
    chunks) in the registers, split_shared and split_global strategies of
    an unfused softmax. A `kb.transpose` gets
    64 x 64 tiles (or 32 x 32) of 256 threads, a `kb.pad` 256 threads.
    A norm or row reduction (kb.layer_norm, kb.rms_norm, kb.reduce) gets
    one block a row with the row in registers, as the registers softmax:
    vector 8 for 16-bit rows a multiple of 8 long, else the widest that
    divides the row, and a power of two of threads for about four vectors
    each; a row wider than 1024 threads of 32 values takes strategy
    `cluster` on sm_90 (the row over the registers of a cluster of 2, 4 or
    8 blocks: the fewest whose parts are whole vectors of at most 32 KB,
    else the most that fit) or `online` (the row read in loops; wider rows,
    rows no cluster splits evenly, sm_80). Fields that a program sets by hand are kept and
    checked: a config that cannot launch (over 1024 threads, more shared
    memory than the target has) is an error here, never a failed launch.
    With `tuning-db=PATH` (a kb-tune database, docs/kb-tune.md) a kernel
    whose key (ops, shapes, precision, chip, kb version) has an entry gets
    the entry's fields as if written by hand, unless a field already set
    disagrees (then a warning and no entry); a malformed database is an
    error.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target chip: sm_90a (Hopper, the default: wgmma and TMA), sm_90 (portable to later chips: mma.sync), sm_80">,
    Option<"tuningDb", "tuning-db", "std::string", /*default=*/"\"\"",
           "A kb-tune database (JSON) whose entries give kernels their config">,
  ];
  let dependentDialects = ["::mlir::kb::KBDialect"];
}

def KBTile : Pass<"kb-tile", "func::FuncOp"> {
  let summary = "Chooses block, warp and thread tiles for each kb op";
  let description = [{
    Matmul: the block tile [BM, BN, BK] and its split: per-thread register
    tiles [TM, TN] (FFMA), per-warp tiles [WM, WN] (mma.sync) or one
    warpgroup per 64 rows (wgmma), consistent with the thread count; tiles
    shrink for small matrices so the grid still fills the device. Softmax: elements per
    thread. Elementwise: elements per block. A hand-written tile that does
    not divide evenly among the threads is an error. The multiprocessor
    count the tiles should cover comes from the chip's target model.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target chip: sm_90a (Hopper, the default: wgmma and TMA), sm_90 (portable to later chips: mma.sync), sm_80">,
  ];
  let dependentDialects = ["::mlir::kb::KBDialect"];
}

def KBSplitK : Pass<"kb-split-k", "func::FuncOp"> {
  let summary = "Materialises split-K: a matmul with `split = S` becomes S partial products and a kb.split_sum";
  let description = [{
    A kb.matmul (or a kb.fusion anchored on one) whose #kb.config has
    `split = S` (S > 1, decided by kb-tile or set by hand) becomes a
    kb.matmul with `split_chunk = C` (C = the K tiles / S x BK) whose SxMxN
    result holds the partial products, and a kb.split_sum that adds them in
    order, into which the matmul's epilogue moves (one elementwise kernel:
    reads the S partials and the epilogue's inputs once, writes C once).
    The partials' kernel keeps the matmul's config; the sum gets the
    elementwise kernel's (256 threads, the widest vector that divides N),
    with fewer threads and a narrower vector where that leaves fewer than
    256 blocks (a small output: the sum's loads need SMs to issue them).
    Runs after kb-promote-shared-memory. Chunks are ceil(k tiles / S) tiles,
    the last one shorter; a split that leaves a chunk empty, or of a batched
    matmul, is an error.
  }];
  let dependentDialects = ["::mlir::kb::KBDialect"];
}

def KBPromoteSharedMemory : Pass<"kb-promote-shared-memory", "func::FuncOp"> {
  let summary = "Decides the shared-memory staging of matmul operand tiles";
  let description = [{
    Sets how the A and B tiles reach shared memory (`copy`: `registers`,
    `cp_async`, or for wgmma `tma`), the pipeline depth (`stages`), the row
    padding (`pad`; wgmma: 128-byte swizzled rows, no padding, at least 3
    stages) and a matmul's `threads` (the tiles' split, plus a producer warp
    with TMA), and checks the shared memory against the target's per-block
    limit. A tile that needs more is an error that names the bytes needed
    and the limit; a hand-written `copy` or `stages` that the kernel cannot
    run is an error naming the field. The lowering only reads these fields.
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target chip: sm_90a (Hopper, the default: wgmma and TMA), sm_90 (portable to later chips: mma.sync), sm_80">,
  ];
  let dependentDialects = ["::mlir::kb::KBDialect"];
}

def KBSelectMma : Pass<"kb-select-mma", "func::FuncOp"> {
  let summary = "Chooses the arithmetic unit of each matmul's inner tile";
  let description = [{
    `precision(ieee)` gives `ffma` (fp32 fused multiply-add on the SIMT
    cores: the tensor cores stay idle); `precision(tf32)` gives
    `mma_sync_tf32` (mma.sync.m16n8k8 on the tensor cores); `tf32x3` gives
    `mma_sync_tf32x3`. On `sm_90a`, `precision(tf32)` gives `wgmma_tf32`
    (warpgroup wgmma.mma_async from swizzled shared memory), reading a
    row-major B as it is where N % 4 == 0 (else with a `kb.transpose` in
    front) and, when K is not a multiple of 4 (TMA needs 16-byte row
    pitches), with a `kb.pad` of A's rows (and of a given B^T's) to a
    multiple of 32, unless its model of the two units says mma.sync is
    faster (a remark then says why). A matmul with at most 16 rows or
    columns (batch 1) gets `gemv` whatever its precision: fp32 FMAs that
    stream the weight from global memory, bound by its bytes
    (docs/shapes.md). A hand-set unit that contradicts the
    precision or the chip is an error. With `tuning-db=PATH` a matmul
    kernel with an entry in the kb-tune database takes the entry's fields,
    the unit among them, as hand-set (the same step as kb-select-config's).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90a\"",
           "Target chip: sm_90a (Hopper, the default: wgmma and TMA), sm_90 (portable to later chips: mma.sync), sm_80">,
      Option<"tuningDb", "tuning-db", "std::string", /*default=*/"\"\"",
           "A kb-tune database (JSON): a matmul with an entry takes the entry's unit (and fields) as hand-set">,
  ];
  let dependentDialects = ["::mlir::kb::KBDialect"];
}

#endif // KB_TRANSFORMS_PASSES_TD
