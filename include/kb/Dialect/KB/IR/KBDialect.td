//===- KBDialect.td - the kb dialect ----------------------*- tablegen -*-===//
//
// The kb dialect: a small language of GPU work (matmul, softmax and chains of
// elementwise ops) on ranked, statically shaped f32 tensors. kb's passes
// decide fusion, tiling, shared-memory staging and the arithmetic unit, and
// lower the program to PTX kernels.
//
//===----------------------------------------------------------------------===//

#ifndef KB_DIALECT_TD
#define KB_DIALECT_TD

include "mlir/IR/OpBase.td"

def KB_Dialect : Dialect {
  let name = "kb";
  let summary = "GPU kernel programs: matmul, softmax and elementwise chains";
  let description = [{
    Ops on ranked tensors with static shapes and f32 elements. Every op is one
    GPU kernel, or part of one once `kb-fuse-elementwise` has grouped it into a
    `kb.fusion`. Per-op choices (tiles, stages, vector width, arithmetic unit,
    softmax strategy) live in a `#kb.config` attribute named `config`.
  }];
  let cppNamespace = "::mlir::kb";
  let useDefaultAttributePrinterParser = 1;
  // `kb.name` on function arguments and results: a non-empty string, unique
  // among the function's buffers.
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

#endif // KB_DIALECT_TD
