//===- ManifestRowsTest.cpp - the row ops in a manifest's program ---------===//
//
// kb.layer_norm, kb.rms_norm and kb.reduce as kb-emit-bundle writes them
// (inputs: the row, then the weight and bias; attrs eps, kind, keepdim):
// a valid program parses, and each wrong shape, count or attribute is
// refused by name.
//
//===----------------------------------------------------------------------===//

#include "ManifestTestHelpers.h"
#include "kb/Runtime/Manifest.h"

#include <gtest/gtest.h>

#include <functional>

using namespace kb::runtime;
using nlohmann::json;
using kb::runtime::test::expectEachRefused;
using kb::runtime::test::manifestErrorOf;

namespace {

/// A residual add fused into a layer_norm (k0), a reduce (k1).
json valid() {
  return json::parse(R"J({
    "format": "kb-bundle", "version": 1, "target": "sm_90a", "function": "f",
    "compiler": "kb 0.1.0 (test)",
    "buffers": [
      {"name": "x", "shape": [4, 8], "dtype": "bf16", "role": "input"},
      {"name": "r", "shape": [4, 8], "dtype": "bf16", "role": "input"},
      {"name": "w", "shape": [8], "dtype": "bf16", "role": "input"},
      {"name": "b", "shape": [8], "dtype": "bf16", "role": "input"},
      {"name": "y", "shape": [4, 8], "dtype": "bf16", "role": "output"},
      {"name": "s", "shape": [4, 1], "dtype": "bf16", "role": "output"}],
    "program": [
      {"op": "kb.add", "inputs": ["x", "r"], "output": "k0.v0", "shape": [4, 8],
       "attrs": {}, "kernel": "k0"},
      {"op": "kb.layer_norm", "inputs": ["k0.v0", "w", "b"], "output": "y",
       "shape": [4, 8], "attrs": {"eps": 1e-5}, "kernel": "k0"},
      {"op": "kb.reduce", "inputs": ["x"], "output": "s", "shape": [4, 1],
       "attrs": {"kind": "max", "keepdim": true}, "kernel": "k1"}],
    "kernels": [
      {"name": "k0", "ptx": "k0.ptx", "grid": [4, 1, 1], "block": [32, 1, 1],
       "args": ["x", "r", "w", "b", "y"], "ops": [0, 1]},
      {"name": "k1", "ptx": "k1.ptx", "grid": [4, 1, 1], "block": [32, 1, 1],
       "args": ["x", "s"], "ops": [2]}]})J");
}


} // namespace

TEST(ManifestRows, TheValidProgramParses) {
  EXPECT_EQ(manifestErrorOf(valid()), "");
  Manifest m = Manifest::parse(valid().dump(), "/tmp");
  ASSERT_EQ(m.program.size(), 3u);
  EXPECT_EQ(m.program[1].dtype, DType::BF16);
  EXPECT_EQ(m.program[2].attrString("kind", ""), "max");
}

TEST(ManifestRows, EveryMutationIsRefusedByName) {
  expectEachRefused(valid(), {
      {"weight of the wrong length",
       [](json &j) { j["program"][1]["inputs"][1] = "x"; },
       "program[1] (kb.layer_norm).inputs[1] 'x' has shape [4, 8]; a weight "
       "of [4, 8] has shape [8]"},
      {"four inputs",
       [](json &j) { j["program"][1]["inputs"].push_back("b"); },
       "program[1] (kb.layer_norm) needs 1 to 3 inputs (the input, then "
       "weight, bias), has 4"},
      {"rms_norm with a bias",
       [](json &j) { j["program"][1]["op"] = "kb.rms_norm"; },
       "program[1] (kb.rms_norm) needs 1 to 2 inputs"},
      {"negative eps", [](json &j) { j["program"][1]["attrs"]["eps"] = -1; },
       "program[1] (kb.layer_norm).attrs.eps: -1 is not a finite number >= 0"},
      {"reduce without kind",
       [](json &j) { j["program"][2]["attrs"].erase("kind"); },
       "program[2] (kb.reduce) needs attrs.kind"},
      {"reduce of an unknown kind",
       [](json &j) { j["program"][2]["attrs"]["kind"] = "prod"; },
       "program[2] (kb.reduce).attrs.kind must be sum, max, min or mean, got "
       "'prod'"},
      {"reduce keeping no dim",
       [](json &j) { j["program"][2]["attrs"].erase("keepdim"); },
       "program[2] (kb.reduce) of [4, 8] must give [4], not [4, 1]"},
      {"keepdim a string",
       [](json &j) { j["program"][2]["attrs"]["keepdim"] = "yes"; },
       "program[2] (kb.reduce).attrs.keepdim must be"},
      {"norm of another type",
       [](json &j) { j["buffers"][2]["dtype"] = "f32"; },
       "program[1] (kb.layer_norm) reads 'w' of f32 and writes bf16"},
  });
}
