// RUN: kb-opt %s -split-input-file -verify-diagnostics
// `kb.name` names one buffer of the bundle: two arguments or results with the
// same name are refused (repro invalid/name_dup_args.mlir: kb-run refused
// the bundle kb-opt wrote). Generated names that clash with a given one are
// made unique by kb-lower-to-gpu (test/Target/kb-compile-names.mlir).

// invalid/name_dup_args.mlir
// expected-error @+1 {{argument #1 has kb.name "x", which argument #0 has already: each buffer needs its own name}}
func.func @f(%x: tensor<4x8xf32> {kb.name = "x"}, %y: tensor<4x8xf32> {kb.name = "x"}) -> tensor<4x8xf32> {
  %0 = kb.add %x, %y : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{result #0 has kb.name "x", which argument #0 has already: each buffer needs its own name}}
func.func @result_like_arg(%x: tensor<4x8xf32> {kb.name = "x"}) -> (tensor<4x8xf32> {kb.name = "x"}) {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{result #1 has kb.name "y", which result #0 has already: each buffer needs its own name}}
func.func @two_results(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {kb.name = "y"}, tensor<4x8xf32> {kb.name = "y"}) {
  %0 = kb.relu %x : tensor<4x8xf32>
  %1 = kb.tanh %x : tensor<4x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

// expected-error @+1 {{argument #0: 'kb.name' must be a non-empty string}}
func.func @empty(%x: tensor<4x8xf32> {kb.name = ""}) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{result #0: 'kb.name' must be a non-empty string}}
func.func @not_a_string(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {kb.name = 3 : i64}) {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Found by the kb-compile fuzzer (fuzz/regressions/kb-compile/
// name_invalid_utf8_json_assert.mlir): a name that is not UTF-8 reached the
// manifest's JSON writer, which asserted.
// expected-error @+1 {{argument #1: 'kb.name' is not valid UTF-8 (it names a buffer in the bundle's JSON manifest)}}
func.func @not_utf8(%x: tensor<4x8xf32> {kb.name = "x"}, %b: tensor<8xf32> {kb.name = "b\FFias"}) -> tensor<4x8xf32> {
  %0 = kb.bias_add %x, %b : tensor<4x8xf32>, tensor<8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// kb-run reads names of 1 to 256 bytes: a longer one is refused here, not
// after the bundle is written.
// expected-error @+1 {{result #0: 'kb.name' has 257 bytes; kb-run reads names of at most 256}}
func.func @too_long(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {kb.name = "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn"}) {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// 256 bytes, and UTF-8 beyond ASCII, are fine.
func.func @longest(%x: tensor<4x8xf32> {kb.name = "\C3\A9t\C3\A9"}) -> (tensor<4x8xf32> {kb.name = "mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm"}) {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// kb-run names files after kb.name (--save-outputs NAME.npy), so a name is a
// plain file name, as the Python builder already required: no '/' (a path
// kb-run refused only when saving), no control character, not '.' or '..'.
// expected-error @+1 {{argument #0: 'kb.name' "../escape" is not a plain file name (it has a '/', a '\' or a control character, or is '.' or '..'); kb-run names files after it}}
func.func @slash(%x: tensor<4x8xf32> {kb.name = "../escape"}) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{result #0: 'kb.name' "y\0A" is not a plain file name}}
func.func @control(%x: tensor<4x8xf32>) -> (tensor<4x8xf32> {kb.name = "y\0A"}) {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{argument #0: 'kb.name' ".." is not a plain file name}}
func.func @dotdot(%x: tensor<4x8xf32> {kb.name = ".."}) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// expected-error @+1 {{argument #0: 'kb.name' "." is not a plain file name}}
func.func @dot(%x: tensor<4x8xf32> {kb.name = "."}) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Dots inside a name are fine.
func.func @dots_inside(%x: tensor<4x8xf32> {kb.name = "x.1..b"}) -> tensor<4x8xf32> {
  %0 = kb.relu %x : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
