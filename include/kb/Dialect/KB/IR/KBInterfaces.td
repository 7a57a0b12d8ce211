//===- KBInterfaces.td - kb op interfaces -----------------*- tablegen -*-===//
//
// KB_ElementwiseOpInterface marks the ops that map each output element from
// the elements at the same logical index (bias_add reads its vector at the
// last-axis index). kb-fuse-elementwise groups these ops, and the lowering
// emits their scalar form inside one kernel.
//
//===----------------------------------------------------------------------===//

#ifndef KB_INTERFACES_TD
#define KB_INTERFACES_TD

include "mlir/IR/OpBase.td"

def KB_ElementwiseOpInterface : OpInterface<"ElementwiseOpInterface"> {
  let description = [{
    An op whose result element at logical index i depends only on operand
    elements at index i (or, for a broadcast operand, at i's last-axis index).
  }];
  let cppNamespace = "::mlir::kb";
}

#endif // KB_INTERFACES_TD
