//===- ManifestValidationTest.cpp - mutated manifests, each refused -------===//
//
// A bundle is untrusted input: a table of mutations of a valid manifest
// (the ones repros/README.md lists as once accepted though wrong, and more),
// each of which must be refused with a one-line message that names the
// field; and the files a manifest names, which must be regular files inside
// the bundle folder.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Manifest.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include <sys/stat.h>
#include <unistd.h>

using namespace kb::runtime;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// relu, then a softmax, then a bias add in a second kernel; a matmul with
/// a fused epilogue in a third.
json valid() {
  return json::parse(R"J({
    "format": "kb-bundle", "version": 1, "target": "sm_90a", "function": "f",
    "compiler": "kb 0.1.0 (test)",
    "buffers": [
      {"name": "x", "shape": [4, 8], "dtype": "f32", "role": "input",
       "init": {"dist": "normal", "mean": 0, "std": 1}},
      {"name": "bias", "shape": [8], "dtype": "f32", "role": "input"},
      {"name": "t0", "shape": [4, 8], "dtype": "f32", "role": "scratch"},
      {"name": "y", "shape": [4, 8], "dtype": "f32", "role": "output"},
      {"name": "w", "shape": [8, 8], "dtype": "f32", "role": "input"},
      {"name": "z", "shape": [4, 8], "dtype": "f32", "role": "output"}],
    "program": [
      {"op": "kb.relu", "inputs": ["x"], "output": "k0.v0", "shape": [4, 8],
       "attrs": {}, "kernel": "k0"},
      {"op": "kb.softmax", "inputs": ["k0.v0"], "output": "t0", "shape": [4, 8],
       "attrs": {}, "kernel": "k0"},
      {"op": "kb.bias_add", "inputs": ["t0", "bias"], "output": "y", "shape": [4, 8],
       "attrs": {}, "kernel": "k1"},
      {"op": "kb.matmul", "inputs": ["x", "w"], "output": "k2.v0", "shape": [4, 8],
       "attrs": {"precision": "tf32"}, "kernel": "k2"},
      {"op": "kb.dropout", "inputs": ["k2.v0"], "output": "z", "shape": [4, 8],
       "attrs": {"p": 0.1, "seed": 7}, "kernel": "k2"}],
    "kernels": [
      {"name": "k0", "ptx": "k0.ptx", "grid": [4, 1, 1], "block": [128, 1, 1],
       "dynamic_shared_bytes": 0, "args": ["x", "t0"], "ops": [0, 1]},
      {"name": "k1", "ptx": "k1.ptx", "grid": [1, 1, 1], "block": [256, 1, 1],
       "args": ["t0", "bias", "y"], "ops": [2]},
      {"name": "k2", "ptx": "k2.ptx", "cubin": "k2.cubin", "grid": [1, 1, 1],
       "block": [128, 1, 1], "dynamic_shared_bytes": 4096,
       "args": ["x", "w", "z"], "ops": [3, 4],
       "resources": {"registers": 64, "shared_static_bytes": 0}}]})J");
}

std::string errorOf(const json &j) {
  try {
    Manifest::parse(j.dump(), "/tmp");
  } catch (const ManifestError &e) {
    return e.what();
  } catch (const std::exception &e) {
    return std::string("NOT A ManifestError: ") + e.what();
  }
  return "";
}

struct Mutation {
  const char *what;
  std::function<void(json &)> apply;
  const char *message; // the whole message, or a part of it
};

// The table: each mutation of valid() and the message it must get.
const Mutation kMutations[] = {
    // Top level.
    {"version read as 1 by truncation",
     [](json &j) { j["version"] = 4294967297ull; },
     "manifest: version 4294967297 is not supported (kb-run reads version 1)"},
    {"version 2", [](json &j) { j["version"] = 2; },
     "manifest: version 2 is not supported"},
    {"version as a string", [](json &j) { j["version"] = "1"; },
     "version \"1\" is not supported"},
    {"version 1.0", [](json &j) { j["version"] = 1.0; },
     "version 1.0 is not supported"},
    {"format", [](json &j) { j["format"] = "zip"; },
     "format must be \"kb-bundle\""},
    {"format a number", [](json &j) { j["format"] = 3; },
     "manifest: format must be a string, not an integer"},
    {"target", [](json &j) { j["target"] = "x86"; },
     "manifest: target 'x86' is not a chip name"},
    {"function a number", [](json &j) { j["function"] = 3; },
     "manifest: function must be a string"},
    {"compiler an object", [](json &j) { j["compiler"] = json::object(); },
     "manifest: compiler must be a string, not object"},
    {"no buffers", [](json &j) { j.erase("buffers"); },
     "manifest: manifest has no field 'buffers'"},
    {"buffers empty", [](json &j) { j["buffers"] = json::array(); },
     "manifest: buffers must not be empty"},
    {"buffers an object", [](json &j) { j["buffers"] = json::object(); },
     "manifest: buffers must be an array, not object"},
    {"program an object", [](json &j) { j["program"] = 1; },
     "manifest: program must be an array, not an integer"},
    {"kernels empty", [](json &j) { j["kernels"] = json::array(); },
     "manifest: kernels must not be empty"},
    // Buffers.
    {"buffer not an object", [](json &j) { j["buffers"][0] = 5; },
     "manifest: buffers[0] must be an object, not an integer"},
    {"buffer name a number", [](json &j) { j["buffers"][0]["name"] = 5; },
     "manifest: buffers[0].name must be a string, not an integer"},
    {"buffer name empty", [](json &j) { j["buffers"][0]["name"] = ""; },
     "buffers[0].name must have 1 to 256 characters"},
    {"negative program shape's buffer",
     [](json &j) { j["buffers"][3]["shape"] = {-4, 8}; },
     "manifest: buffers[3] (y).shape[0]: -4 is below the minimum 1"},
    {"zero dimension", [](json &j) { j["buffers"][3]["shape"] = {0, 8}; },
     "buffers[3] (y).shape[0]: 0 is below the minimum 1"},
    {"empty shape", [](json &j) { j["buffers"][3]["shape"] = json::array(); },
     "buffers[3] (y).shape must have 1 to 8 dimensions, has 0"},
    {"nine dimensions",
     [](json &j) { j["buffers"][0]["shape"] = {1, 1, 1, 1, 1, 1, 1, 4, 8}; },
     "buffers[0] (x).shape must have 0 to 8 dimensions, has 9"},
    {"a rank-0 input read by an op",
     [](json &j) { j["buffers"][0]["shape"] = json::array(); },
     "program[0] (kb.relu).inputs[0] 'x' has shape [], the op's shape is [4, "
     "8]"},
    {"element count wraps",
     [](json &j) { j["buffers"][3]["shape"] = {4611686018427387905ll, 4}; },
     "buffers[3] (y).shape[0]: 4611686018427387905 exceeds the limit "
     "274877906944"},
    {"element count overflows in the product",
     [](json &j) { j["buffers"][3]["shape"] = {1 << 20, 1 << 20, 1 << 20}; },
     "buffers[3] (y).shape [1048576, 1048576, 1048576]: more than 274877906944 "
     "elements"},
    {"shape of floats", [](json &j) { j["buffers"][3]["shape"] = {4.5, 8}; },
     "buffers[3] (y).shape[0] must be an integer, not a number (4.5)"},
    {"shape a string", [](json &j) { j["buffers"][3]["shape"] = "4x8"; },
     "buffers[3] (y).shape must be an array, not string"},
    {"dtype", [](json &j) { j["buffers"][0]["dtype"] = "f64"; },
     "buffers[0] (x) has dtype \"f64\"; a data buffer is f32, f16 or bf16"},
    {"role", [](json &j) { j["buffers"][0]["role"] = "both"; },
     "buffers[0].role must be input, output, scratch, workspace or tensor_map, "
     "got both"},
    {"init dist", [](json &j) { j["buffers"][0]["init"]["dist"] = "cauchy"; },
     "buffers[0] (x).init.dist must be normal or uniform"},
    {"init std a string", [](json &j) { j["buffers"][0]["init"]["std"] = "1"; },
     "buffers[0] (x).init.std must be a number, not string"},
    {"init std negative", [](json &j) { j["buffers"][0]["init"]["std"] = -1; },
     "buffers[0] (x).init.std must not be negative"},
    {"init on an output",
     [](json &j) { j["buffers"][3]["init"] = json::object(); },
     "buffers[3] (y).init: only an input is initialised"},
    {"duplicate name", [](json &j) { j["buffers"][3]["name"] = "x"; },
     "buffers[3] (x): buffer name 'x' appears twice"},
    {"tensor_map on a data buffer",
     [](json &j) { j["buffers"][0]["tensor_map"] = json::object(); },
     "buffers[0] (x).tensor_map is only for a buffer of role tensor_map"},
    // Program.
    {"unknown op", [](json &j) { j["program"][0]["op"] = "kb.conv"; },
     "program[0].op 'kb.conv' is not an op kb-run can check"},
    {"op input undefined",
     [](json &j) { j["program"][0]["inputs"][0] = "nowhere"; },
     "program[0] (kb.relu).inputs[0] 'nowhere' is neither a data buffer nor an "
     "earlier op's output"},
    {"op inputs not strings", [](json &j) { j["program"][0]["inputs"][0] = 1; },
     "program[0] (kb.relu).inputs[0] must be a string"},
    {"negative program shape",
     [](json &j) { j["program"][2]["shape"] = {-4, 8}; },
     "program[2] (kb.bias_add).shape[0]: -4 is below the minimum 1"},
    {"program shape disagrees with its input",
     [](json &j) { j["program"][0]["shape"] = {8, 4}; },
     "program[0] (kb.relu).inputs[0] 'x' has shape [4, 8], the op's shape is "
     "[8, 4]"},
    {"softmax shape disagrees with its output buffer",
     [](json &j) { j["buffers"][2]["shape"] = {2, 16}; },
     "program[1] (kb.softmax) has shape [4, 8], its output buffer 't0' has [2, "
     "16]"},
    {"bias of the wrong length",
     [](json &j) { j["buffers"][1]["shape"] = {4}; },
     "program[2] (kb.bias_add).inputs[1] 'bias' has shape [4]; a bias of [4, "
     "8] has shape [8]"},
    {"binary op with one input",
     [](json &j) { j["program"][2]["inputs"] = {"t0"}; },
     "program[2] (kb.bias_add) needs 2 inputs, has 1"},
    {"unary op with two inputs",
     [](json &j) { j["program"][0]["inputs"] = {"x", "x"}; },
     "program[0] (kb.relu) needs 1 input, has 2"},
    {"op writes an input", [](json &j) { j["program"][2]["output"] = "x"; },
     "program[2] (kb.bias_add).output 'x' is a buffer of role input, which no "
     "op writes"},
    {"two ops write one buffer",
     [](json &j) { j["program"][2]["output"] = "t0"; },
     "program[2] (kb.bias_add).output 't0' is written by an earlier op too"},
    {"dropout p out of range",
     [](json &j) { j["program"][4]["attrs"]["p"] = 1.5; },
     "program[4] (kb.dropout).attrs.p: 1.5 is not in [0, 1)"},
    {"dropout seed a string",
     [](json &j) { j["program"][4]["attrs"]["seed"] = "7"; },
     "program[4] (kb.dropout).attrs.seed must be an integer, not string"},
    {"precision",
     [](json &j) { j["program"][3]["attrs"]["precision"] = "fp8"; },
     "program[3] (kb.matmul).attrs.precision must be ieee, tf32, tf32x3 or "
     "native, got 'fp8'"},
    {"transpose_b a string",
     [](json &j) { j["program"][3]["attrs"]["transpose_b"] = "yes"; },
     "program[3] (kb.matmul).attrs.transpose_b must be true or false, not "
     "string"},
    {"matmul operands do not multiply",
     [](json &j) { j["buffers"][4]["shape"] = {4, 8}; },
     "program[3] (kb.matmul) operands [4, 8] and [4, 8] do not multiply"},
    {"attrs not an object", [](json &j) { j["program"][0]["attrs"] = {1}; },
     "program[0] (kb.relu).attrs must be an object, not array"},
    // Kernels: launch limits.
    {"grid y beyond CUDA", [](json &j) { j["kernels"][0]["grid"][1] = 70000; },
     "manifest: kernels[0].grid[1]: 70000 exceeds CUDA's limit 65535"},
    {"grid x beyond 2^31",
     [](json &j) { j["kernels"][0]["grid"][0] = 2147483648ll; },
     "kernels[0].grid[0]: 2147483648 exceeds CUDA's limit 2147483647"},
    {"grid zero", [](json &j) { j["kernels"][0]["grid"][2] = 0; },
     "kernels[0].grid[2]: 0 is below the minimum 1"},
    {"grid of two", [](json &j) { j["kernels"][0]["grid"] = {1, 1}; },
     "kernels[0].grid needs 3 sizes (x, y, z), has 2"},
    {"block product overflowing to a small number",
     [](json &j) { j["kernels"][0]["block"] = {2, 9223372036854775807ll, 2}; },
     "kernels[0].block[1]: 9223372036854775807 exceeds CUDA's limit 1024"},
    {"block product over 1024",
     [](json &j) { j["kernels"][0]["block"] = {64, 32, 1}; },
     "kernels[0].block: kernels[0] (k0) asks for 2048 threads per block; at "
     "most 1024"},
    {"block z over 64", [](json &j) { j["kernels"][0]["block"] = {1, 1, 128}; },
     "kernels[0].block[2]: 128 exceeds CUDA's limit 64"},
    {"dynamic shared bytes negative",
     [](json &j) { j["kernels"][0]["dynamic_shared_bytes"] = -1; },
     "kernels[0].dynamic_shared_bytes: -1 is below the minimum 0"},
    {"dynamic shared bytes huge",
     [](json &j) { j["kernels"][0]["dynamic_shared_bytes"] = 1ll << 40; },
     "kernels[0].dynamic_shared_bytes: 1099511627776 exceeds the 227 KB "
     "(232448 bytes)"},
    {"dynamic shared bytes a string",
     [](json &j) { j["kernels"][0]["dynamic_shared_bytes"] = "0"; },
     "kernels[0].dynamic_shared_bytes must be an integer, not string"},
    {"static + dynamic shared over the limit",
     [](json &j) {
       j["kernels"][2]["resources"]["shared_static_bytes"] = 48 * 1024;
       j["kernels"][2]["dynamic_shared_bytes"] = 200 * 1024;
     },
     "kernels[2].resources.shared_static_bytes: kernels[2] (k2) uses 253952 "
     "bytes of shared memory in all"},
    {"registers a string",
     [](json &j) { j["kernels"][2]["resources"]["registers"] = "64"; },
     "kernels[2].resources.registers must be an integer, not string"},
    {"registers over 255",
     [](json &j) { j["kernels"][2]["resources"]["registers"] = 300; },
     "kernels[2].resources.registers: 300 exceeds the limit 255"},
    {"cluster of 0", [](json &j) { j["kernels"][0]["cluster"] = {0, 1, 1}; },
     "kernels[0].cluster[0]: 0 is below the minimum 1"},
    {"cluster not dividing the grid",
     [](json &j) { j["kernels"][0]["cluster"] = {3, 1, 1}; },
     "kernels[0] (k0) cluster size 3 does not divide grid size 4"},
    {"co_resident_blocks 0",
     [](json &j) { j["kernels"][0]["co_resident_blocks"] = 0; },
     "kernels[0].co_resident_blocks: 0 is below the minimum 1"},
    // Kernels: names, arguments, ops.
    {"kernel name with a quote (reaches ncu's command line)",
     [](json &j) { j["kernels"][0]["name"] = "k0'; rm -rf ~; '"; },
     "kernels[0].name 'k0'; rm -rf ~; '' is not a PTX identifier"},
    {"a name with a newline stays on one line",
     [](json &j) { j["kernels"][0]["args"][0] = "a\nb"; },
     "kernels[0].args[0]: kernels[0] (k0) names an unknown buffer \"a\\x0ab\""},
    {"duplicate kernel name", [](json &j) { j["kernels"][1]["name"] = "k0"; },
     "kernels[1].name 'k0' appears twice"},
    {"ptx a number", [](json &j) { j["kernels"][0]["ptx"] = 1; },
     "kernels[0].ptx must be a string, not an integer"},
    {"empty args", [](json &j) { j["kernels"][0]["args"] = json::array(); },
     "kernels[0].args must not be empty"},
    {"args not strings", [](json &j) { j["kernels"][0]["args"][0] = 3; },
     "kernels[0].args[0] must be a string, not an integer"},
    {"unknown arg", [](json &j) { j["kernels"][0]["args"][0] = "q"; },
     "kernels[0].args[0]: kernels[0] (k0) names an unknown buffer \"q\""},
    {"kernel writes an input",
     [](json &j) { j["kernels"][1]["args"] = {"t0", "y", "bias"}; },
     "kernels[1].args: kernels[1] (k1)'s last argument (its output) 'bias' is "
     "a buffer of role input"},
    {"op index past the program", [](json &j) { j["kernels"][0]["ops"] = {9}; },
     "kernels[0] (k0) names op 9, which the program does not have"},
    {"op in two kernels", [](json &j) { j["kernels"][1]["ops"] = {1, 2}; },
     "kernels[1].ops[0]: op 1 is computed by kernels[0] already"},
    {"op's kernel field disagrees",
     [](json &j) { j["program"][2]["kernel"] = "k0"; },
     "program[2] (kb.bias_add).kernel is 'k0', but kernels[1] (k1) lists it"},
    {"kernel args lack an op's input",
     [](json &j) { j["kernels"][1]["args"] = {"t0", "y"}; },
     "program[2] (kb.bias_add) reads buffer 'bias', which is not among "
     "kernels[1] (k1)'s args"},
    {"kernel output is not its last op's",
     [](json &j) {
       j["kernels"][0]["args"] = {"x", "y", "t0"};
       j["kernels"][0]["ops"] = {0};
     },
     "kernels[0] (k0)'s last op writes 'k0.v0', but its output (last arg) is "
     "'t0'"},
    {"an op listed by no kernel but naming one",
     [](json &j) { j["kernels"][1]["ops"] = json::array(); },
     "program[2] (kb.bias_add) names kernel 'k1', which does not list it in "
     "its ops"},
    {"a register value read by another kernel",
     [](json &j) { j["program"][2]["inputs"][0] = "k0.v0"; },
     "program[2] (kb.bias_add) reads 'k0.v0', a value of another kernel's "
     "registers"},
    {"matmul not first in its kernel",
     [](json &j) {
       j["kernels"][2]["ops"] = {3, 4};
       j["program"].push_back(j["program"][3]);
       j["program"][5]["inputs"] = {"x", "w"};
       j["program"][5]["output"] = "k2.v9";
       j["kernels"][2]["ops"] = {3, 4, 5};
     },
     "program[5] (kb.matmul): a matmul must be its kernel's first op "
     "(kernels[2] (k2))"},
    {"an output no kernel writes",
     [](json &j) {
       j["buffers"].push_back({{"name", "u"},
                               {"shape", {4}},
                               {"dtype", "f32"},
                               {"role", "output"}});
     },
     "buffers[6] (u) is an output that no kernel writes"},
};

TEST(ManifestValidation, TheValidManifestParses) {
  EXPECT_EQ(errorOf(valid()), "");
  Manifest m = Manifest::parse(valid().dump(), "/b");
  EXPECT_EQ(m.compiler, "kb 0.1.0 (test)");
  EXPECT_EQ(m.kernels[2].dynamicSharedBytes, 4096);
  EXPECT_EQ(m.kernels[1].dynamicSharedBytes, 0);
}

// An unused rank-0 input (repros/invalid/arg_rank0_unused.mlir, once
// compiled into a shape kb-run could not read): one element, accepted.
TEST(ManifestValidation, UnusedScalarInput) {
  json j = valid();
  j["buffers"].push_back({{"name", "s"},
                          {"shape", json::array()},
                          {"dtype", "f32"},
                          {"role", "input"}});
  Manifest m = Manifest::parse(j.dump(), "/b");
  EXPECT_EQ(m.buffer("s").elements(), 1);
  j["buffers"].back()["role"] = "scratch";
  EXPECT_NE(errorOf(j).find(
                "buffers[6] (s).shape must have 1 to 8 dimensions, has 0"),
            std::string::npos);
}

TEST(ManifestValidation, EveryMutationIsRefusedByName) {
  for (const Mutation &mu : kMutations) {
    json j = valid();
    mu.apply(j);
    std::string e = errorOf(j);
    EXPECT_NE(e.find(mu.message), std::string::npos)
        << mu.what << ":\n  got:  " << e << "\n  want: " << mu.message;
    EXPECT_EQ(e.find('\n'), std::string::npos)
        << mu.what << ": not one line: " << e;
    EXPECT_EQ(e.find("[json.exception"), std::string::npos)
        << mu.what << ": raw JSON message";
  }
}

// Every value of a wrong JSON type in every field: never the JSON library's
// own message, never anything but a ManifestError.
TEST(ManifestValidation, WrongTypesEverywhere) {
  const json wrong[] = {nullptr,
                        true,
                        -1,
                        1.5,
                        "s",
                        json::array(),
                        json::object(),
                        18446744073709551615ull};
  std::function<void(json &, const std::function<void()> &)> each;
  each = [&](json &node, const std::function<void()> &check) {
    if (node.is_object() || node.is_array())
      for (auto it = node.begin(); it != node.end(); ++it) {
        json saved = *it;
        for (const json &w : wrong) {
          *it = w;
          check();
        }
        *it = saved;
        each(*it, check);
      }
  };
  json j = valid();
  int tried = 0;
  each(j, [&] {
    ++tried;
    try {
      Manifest::parse(j.dump(), "/tmp");
    } catch (const ManifestError &e) {
      std::string s = e.what();
      EXPECT_EQ(s.find("[json.exception"), std::string::npos) << s;
      EXPECT_EQ(s.rfind("manifest: ", 0), 0u) << s;
    } catch (const std::exception &e) {
      ADD_FAILURE() << "not a ManifestError: " << e.what() << " for "
                    << j.dump();
    }
  });
  EXPECT_GT(tried, 500);
}

TEST(ManifestValidation, NotJson) {
  json j;
  std::string e;
  try {
    Manifest::parse("{\"format\": ", "/tmp");
  } catch (const ManifestError &x) {
    e = x.what();
  }
  EXPECT_EQ(e.rfind("manifest: not valid JSON (parse error at", 0), 0u) << e;
  EXPECT_EQ(e.find("[json.exception"), std::string::npos) << e;
}

// fuzz/regressions/manifest/number_overflow_1e400.json: json::parse throws
// out_of_range, not parse_error; refused as a ManifestError all the same,
// without the library's tag.
TEST(ManifestValidation, NumberTooLargeForADouble) {
  std::string e;
  try {
    Manifest::parse("{\"format\": \"kb-bundle\", \"version\": 1e400}", "/tmp");
  } catch (const ManifestError &x) {
    e = x.what();
  }
  EXPECT_EQ(e, "manifest: not valid JSON (number overflow parsing '1e400')");
}

/// A bundle folder with valid()'s manifest and its kernel files.
struct BundleDir {
  fs::path dir;
  explicit BundleDir(const std::string &name) {
    dir = fs::path(testing::TempDir()) /
          ("kb_bundle_" + name + "_" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const char *f : {"k0.ptx", "k1.ptx", "k2.ptx", "k2.cubin"})
      std::ofstream(dir / f) << "// ptx\n";
    write(valid());
  }
  ~BundleDir() { fs::remove_all(dir); }
  void write(const json &j) {
    std::ofstream(dir / "manifest.json") << j.dump();
  }
  std::string error() {
    try {
      Manifest::load(dir.string());
    } catch (const ManifestError &e) {
      return e.what();
    }
    return "";
  }
};

TEST(ManifestValidation, FilesStayInsideTheBundle) {
  BundleDir b("files");
  EXPECT_EQ(b.error(), "");
  json j = valid();
  j["kernels"][0]["ptx"] = "/etc/passwd";
  b.write(j);
  EXPECT_EQ(
      b.error(),
      "manifest: kernels[0].ptx '/etc/passwd' is an absolute path; a bundle "
      "names files inside its folder");
  j["kernels"][0]["ptx"] = "../../../../etc/passwd";
  b.write(j);
  EXPECT_EQ(
      b.error(),
      "manifest: kernels[0].ptx '../../../../etc/passwd' leaves the bundle "
      "folder ('..')");
  // A symlink inside the folder that points out of it.
  fs::create_symlink("/etc/passwd", b.dir / "link.ptx");
  j["kernels"][0]["ptx"] = "link.ptx";
  b.write(j);
  EXPECT_NE(b.error().find("manifest: kernels[0].ptx 'link.ptx' resolves to "
                           "/etc/passwd, outside "
                           "the bundle folder"),
            std::string::npos)
      << b.error();
  // A symlink inside the folder to a file inside it is fine.
  fs::create_symlink("k0.ptx", b.dir / "same.ptx");
  j["kernels"][0]["ptx"] = "same.ptx";
  b.write(j);
  EXPECT_EQ(b.error(), "");
  j["kernels"][0]["ptx"] = "missing.ptx";
  b.write(j);
  EXPECT_NE(b.error().find("manifest: kernels[0].ptx names "),
            std::string::npos);
  EXPECT_NE(b.error().find("missing.ptx, which does not exist"),
            std::string::npos);
  fs::create_directories(b.dir / "sub.ptx");
  j["kernels"][0]["ptx"] = "sub.ptx";
  b.write(j);
  EXPECT_EQ(b.error(),
            "manifest: kernels[0].ptx 'sub.ptx' is not a regular file");
  j = valid();
  j["kernels"][2]["cubin"] = "../k2.cubin";
  b.write(j);
  EXPECT_NE(
      b.error().find("kernels[2].cubin '../k2.cubin' leaves the bundle folder"),
      std::string::npos);
}

TEST(ManifestValidation, SpecialFilesAreRefusedWithoutReading) {
  // /dev/zero would be read forever (out of memory); a FIFO would block in
  // open() until a writer came.
  EXPECT_THROW(Manifest::load("/dev/zero"), ManifestError);
  try {
    Manifest::load("/dev/zero");
  } catch (const ManifestError &e) {
    EXPECT_STREQ(e.what(), "manifest: /dev/zero is not a regular file");
  }
  BundleDir b("fifo");
  fs::remove(b.dir / "manifest.json");
  ASSERT_EQ(mkfifo((b.dir / "manifest.json").c_str(), 0600), 0);
  EXPECT_EQ(b.error(), "manifest: " + (b.dir / "manifest.json").string() +
                           " is not a regular file");
  fs::remove(b.dir / "manifest.json");
  b.write(valid());
  fs::remove(b.dir / "k1.ptx");
  ASSERT_EQ(mkfifo((b.dir / "k1.ptx").c_str(), 0600), 0);
  EXPECT_EQ(b.error(),
            "manifest: kernels[1].ptx 'k1.ptx' is not a regular file");
}

TEST(ManifestValidation, ReadRegularFileHasACap) {
  std::string path = testing::TempDir() + "/kb_cap_" + std::to_string(getpid());
  std::ofstream(path) << std::string(100, 'x');
  EXPECT_EQ(readRegularFile(path, 100, "t").size(), 100u);
  try {
    readRegularFile(path, 99, "t");
    ADD_FAILURE();
  } catch (const ManifestError &e) {
    EXPECT_EQ(std::string(e.what()),
              "t: " + path + " is 100 bytes, more than the 99 kb-run reads");
  }
  fs::remove(path);
}

} // namespace
