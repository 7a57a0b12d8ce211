//===- ManifestTest.cpp - manifest parsing and its error messages
//----------===//

#include "kb/Runtime/Manifest.h"

#include <gtest/gtest.h>

using namespace kb::runtime;
using nlohmann::json;

static json valid() {
  return json::parse(R"({
    "format": "kb-bundle", "version": 1, "target": "sm_90", "function": "f",
    "buffers": [
      {"name": "x", "shape": [4, 8], "dtype": "f32", "role": "input",
       "init": {"dist": "uniform", "mean": 0, "std": 2}},
      {"name": "y", "shape": [4, 8], "dtype": "f32", "role": "output"}],
    "program": [{"op": "kb.relu", "inputs": ["x"], "output": "y", "shape": [4, 8],
                 "attrs": {}, "kernel": "k0"}],
    "kernels": [{"name": "k0", "ptx": "k0.ptx", "grid": [1, 1, 1],
                 "block": [128, 1, 1], "dynamic_shared_bytes": 0,
                 "args": ["x", "y"], "ops": [0],
                 "resources": {"registers": 12, "spill_store_bytes": 0}}]})");
}

static std::string errorOf(const json &j) {
  try {
    Manifest::parse(j.dump(), "/tmp");
  } catch (const ManifestError &e) {
    return e.what();
  }
  return "";
}

TEST(Manifest, ParsesAValidManifest) {
  Manifest m = Manifest::parse(valid().dump(), "/b");
  ASSERT_EQ(m.buffers.size(), 2u);
  EXPECT_EQ(m.buffer("x").elements(), 32);
  EXPECT_EQ(m.buffer("x").dist, "uniform");
  EXPECT_EQ(m.kernels[0].threads(), 128);
  EXPECT_EQ(m.kernels[0].resources.registers, 12);
  EXPECT_TRUE(m.kernels[0].resources.known);
  EXPECT_EQ(m.program[0].op, "kb.relu");
  EXPECT_EQ(m.dir, "/b");
  EXPECT_EQ(m.kernels[0].clusterBlocks(), 1);
}

TEST(Manifest, Clusters) {
  json j = valid();
  j["kernels"][0]["grid"] = {32, 1, 1};
  j["kernels"][0]["cluster"] = {16, 1, 1};
  EXPECT_EQ(Manifest::parse(j.dump(), "/b").kernels[0].clusterBlocks(), 16);
  j["kernels"][0]["cluster"] = {5, 1, 1};
  EXPECT_NE(errorOf(j).find("cluster size 5 does not divide grid size 32"),
            std::string::npos);
  j["kernels"][0]["cluster"] = {32, 1, 1};
  EXPECT_NE(
      errorOf(j).find(
          "kernels[0].cluster[0]: 32 exceeds the limit of 16 blocks a cluster"),
      std::string::npos);
  j["kernels"][0]["cluster"] = {16, 1};
  EXPECT_NE(errorOf(j).find("cluster needs 3 sizes"), std::string::npos);
}

TEST(Manifest, DependentLaunch) {
  json j = valid();
  EXPECT_FALSE(Manifest::parse(j.dump(), "/b").kernels[0].dependentLaunch);
  j["kernels"][0]["dependent_launch"] = true;
  EXPECT_TRUE(Manifest::parse(j.dump(), "/b").kernels[0].dependentLaunch);
  j["kernels"][0]["dependent_launch"] = 1;
  EXPECT_NE(
      errorOf(j).find("kernels[0].dependent_launch must be true or false, not"),
      std::string::npos)
      << errorOf(j);
}

TEST(Manifest, StreamKWorkspace) {
  // x is M x K = 4 x 8, y M x N = 4 x 8; 2 x 4 tiles (4 of them) of 2 k
  // tiles each over 3 blocks: one round of 3, the rest tile in min(3, 2) =
  // 2 chunks, one partial slot: 4 x 3 flags + 2 x 4 words = 20.
  json j = valid();
  j["buffers"].push_back({{"name", "ws0"},
                          {"shape", {20}},
                          {"dtype", "i32"},
                          {"role", "workspace"}});
  j["kernels"][0]["args"] = {"x", "ws0", "y"};
  j["kernels"][0]["grid"] = {3, 1, 1};
  j["kernels"][0]["co_resident_blocks"] = 3;
  j["kernels"][0]["config"] =
      "#kb.config<block = [2, 4, 4], grid = 3, reduce = \"stream\">";
  EXPECT_EQ(Manifest::parse(j.dump(), "/b").buffer("ws0").elements(), 20);
  j["buffers"][2]["shape"] = {19};
  EXPECT_NE(errorOf(j).find("(stream-K) takes workspace 'ws0' of 19 words "
                            "with 3 co-resident blocks; its grid of 3 blocks "
                            "needs that many resident and 20 words"),
            std::string::npos);
  j["buffers"][2]["shape"] = {20};
  j["kernels"][0]["co_resident_blocks"] = 2;
  EXPECT_NE(errorOf(j).find("(stream-K) takes workspace"), std::string::npos);
}

TEST(Manifest, Workspace) {
  json j = valid();
  // y is 4 rows; 2 blocks per row: 2 + 2 * 4 + 2 * 4 * 2 = 26 words.
  j["buffers"].push_back({{"name", "ws0"},
                          {"shape", {26}},
                          {"dtype", "i32"},
                          {"role", "workspace"}});
  j["kernels"][0]["args"] = {"x", "ws0", "y"};
  j["kernels"][0]["co_resident_blocks"] = 2;
  Manifest m = Manifest::parse(j.dump(), "/b");
  EXPECT_EQ(m.buffer("ws0").role, "workspace");
  EXPECT_EQ(m.buffer("ws0").bytes(), 104u);
  j["buffers"][2]["shape"] = {25};
  EXPECT_NE(
      errorOf(j).find(
          "(k0) workspace 'ws0' has 25 words; 4 rows of 2 blocks need 26"),
      std::string::npos);
  j["buffers"][2]["shape"] = {26};
  j["kernels"][0].erase("co_resident_blocks");
  EXPECT_NE(errorOf(j).find(
                "takes workspace 'ws0' but declares no co_resident_blocks"),
            std::string::npos);
  j["kernels"][0]["co_resident_blocks"] = 2;
  j["buffers"][2]["dtype"] = "f32";
  EXPECT_NE(errorOf(j).find("(ws0) has dtype \"f32\"; a workspace is i32"),
            std::string::npos);
  j["buffers"][2]["dtype"] = "i32";
  j["buffers"][2]["role"] = "spare";
  EXPECT_NE(errorOf(j).find("role must be input, output, scratch, workspace or "
                            "tensor_map, got spare"),
            std::string::npos);
  j = valid();
  j["buffers"][0]["dtype"] = "i32";
  EXPECT_NE(errorOf(j).find("; a data buffer is f32, f16 or bf16"),
            std::string::npos);
}

// A TMA tensor map (kb-lower-to-gpu's copy = "tma" wgmma kernels): a
// 128-byte i32 buffer describing another; cuTensorMapEncodeTiled's limits are
// checked before anything reaches the GPU.
TEST(Manifest, TensorMap) {
  json j = valid();
  j["buffers"].push_back({{"name", "tm0"},
                          {"shape", {32}},
                          {"dtype", "i32"},
                          {"role", "tensor_map"},
                          {"tensor_map",
                           {{"of", "x"},
                            {"dims", {4, 8}},
                            {"box", {2, 8}},
                            {"swizzle", "128B"}}}});
  j["kernels"][0]["args"] = {"x", "tm0", "y"};
  Manifest m = Manifest::parse(j.dump(), "/b");
  EXPECT_EQ(m.buffer("tm0").tensorMap.of, "x");
  EXPECT_EQ(m.buffer("tm0").tensorMap.box, (std::vector<int64_t>{2, 8}));
  EXPECT_FALSE(m.buffer("tm0").isData());
  EXPECT_TRUE(m.buffer("x").isData());
  auto errorWith = [&](const char *key, json value) {
    json k = j;
    k["buffers"][2]["tensor_map"][key] = value;
    return errorOf(k);
  };
  EXPECT_NE(
      errorWith("of", "nope")
          .find(
              "tensor map 'tm0' describes 'nope', which is not a data buffer"),
      std::string::npos);
  EXPECT_NE(errorWith("dims", {4, 9})
                .find("tensor map 'tm0': dims[1] = 9 must be in [1, 8]"),
            std::string::npos);
  EXPECT_NE(
      errorWith("box", {2}).find("dims and box need one size per axis of 'x'"),
      std::string::npos);
  EXPECT_NE(errorWith("box", {300, 8}).find("box[0] = 300 must be in [1, 256]"),
            std::string::npos);
  EXPECT_EQ(m.buffer("tm0").tensorMap.swizzle, 128);
  // 64B and 32B (a 16-bit row-major B's narrower boxes); nothing else.
  EXPECT_NE(errorWith("swizzle", "16B")
                .find("swizzle must be \"128B\", \"64B\" or \"32B\" (the "
                      "swizzles kb's kernels read), got \"16B\""),
            std::string::npos);
  EXPECT_NE(errorWith("swizzle", "none").find("got \"none\""),
            std::string::npos);
  {
    json k = j;
    k["buffers"][2]["tensor_map"]["swizzle"] = "32B";
    EXPECT_EQ(Manifest::parse(k.dump(), "/b").buffer("tm0").tensorMap.swizzle,
              32);
    // A row of 8 f32 is 32 bytes: 32B holds it; 16 of them do not fit.
    k["buffers"][0]["shape"] = k["buffers"][1]["shape"] = {4, 16};
    k["program"][0]["shape"] = {4, 16};
    k["buffers"][2]["tensor_map"]["dims"] = {4, 16};
    k["buffers"][2]["tensor_map"]["box"] = {2, 16};
    EXPECT_NE(errorOf(k).find("a 32-byte swizzled box row holds at most 8 "
                              "elements of f32, got 16"),
              std::string::npos);
    k["buffers"][2]["tensor_map"]["swizzle"] = "64B";
    EXPECT_EQ(Manifest::parse(k.dump(), "/b").buffer("tm0").tensorMap.swizzle,
              64);
  }
  json wide = j;
  wide["buffers"][0]["shape"] = {4, 64};
  wide["buffers"][1]["shape"] = {4, 64};
  wide["program"][0]["shape"] = {4, 64};
  wide["buffers"][2]["tensor_map"]["dims"] = {4, 64};
  wide["buffers"][2]["tensor_map"]["box"] = {2, 64};
  EXPECT_NE(errorOf(wide).find(
                "a 128-byte swizzled box row holds at most 32 elements of f32, "
                "got 64"),
            std::string::npos);
  json odd = j;
  odd["buffers"][0]["shape"] = {4, 6};
  odd["buffers"][1]["shape"] = {4, 6};
  odd["program"][0]["shape"] = {4, 6};
  odd["buffers"][2]["tensor_map"]["dims"] = {4, 6};
  EXPECT_NE(errorOf(odd).find(
                "rows of 'x' (f32) are 24 bytes, not a multiple of 16"),
            std::string::npos);
  json shape = j;
  shape["buffers"][2]["shape"] = {16};
  EXPECT_NE(errorOf(shape).find("(tm0) must have shape [32]"),
            std::string::npos);
  json written = j;
  written["kernels"][0]["args"] = {"x", "tm0"};
  EXPECT_NE(errorOf(written).find("(k0) writes tensor map 'tm0' as its output"),
            std::string::npos);
}

TEST(Manifest, CoResidentBlocks) {
  json j = valid();
  EXPECT_EQ(Manifest::parse(j.dump(), "/b").kernels[0].coResidentBlocks, 0);
  j["kernels"][0]["co_resident_blocks"] = 16;
  EXPECT_EQ(Manifest::parse(j.dump(), "/b").kernels[0].coResidentBlocks, 16);
  j["kernels"][0]["co_resident_blocks"] = 0;
  EXPECT_NE(errorOf(j).find(
                "kernels[0].co_resident_blocks: 0 is below the minimum 1"),
            std::string::npos);
  j["kernels"][0]["co_resident_blocks"] = "many";
  EXPECT_NE(errorOf(j).find(
                "kernels[0].co_resident_blocks must be an integer, not string"),
            std::string::npos);
}

// kb-select-mma's padded B^T: a transpose whose rows are padded, read by a
// matmul with transpose_b and padded_b.
TEST(Manifest, PaddedTranspose) {
  json j = valid();
  j["buffers"] = json::parse(R"([
    {"name": "a", "shape": [4, 6], "dtype": "f32", "role": "input"},
    {"name": "b", "shape": [6, 8], "dtype": "f32", "role": "input"},
    {"name": "bt", "shape": [8, 32], "dtype": "f32", "role": "scratch"},
    {"name": "c", "shape": [4, 8], "dtype": "f32", "role": "output"}])");
  j["program"] = json::parse(R"([
    {"op": "kb.transpose", "inputs": ["b"], "output": "bt", "shape": [8, 32],
     "attrs": {"pad": 32}, "kernel": "k0"},
    {"op": "kb.matmul", "inputs": ["a", "bt"], "output": "c", "shape": [4, 8],
     "attrs": {"transpose_b": true, "padded_b": true, "precision": "tf32"}, "kernel": "k1"}])");
  j["kernels"] = json::parse(R"([
    {"name": "k0", "ptx": "k0.ptx", "grid": [1, 1, 1], "block": [128, 1, 1],
     "dynamic_shared_bytes": 0, "args": ["b", "bt"], "ops": [0]},
    {"name": "k1", "ptx": "k1.ptx", "grid": [1, 1, 1], "block": [128, 1, 1],
     "dynamic_shared_bytes": 0, "args": ["a", "bt", "c"], "ops": [1]}])");
  EXPECT_EQ(errorOf(j), "");
  j["program"][1]["attrs"].erase("padded_b");
  EXPECT_NE(errorOf(j).find(
                "operands [4, 6] and [8, 32] (B transposed) do not multiply"),
            std::string::npos);
  j["program"][1]["attrs"]["padded_b"] = true;
  j["program"][0]["attrs"]["pad"] = 16;
  EXPECT_NE(errorOf(j).find(
                "(kb.transpose) of [6, 8] must give [8, 16], not [8, 32]"),
            std::string::npos);
}

// kb-select-mma's pads (K % 4 != 0 on wgmma): A and B^T lengthened to 32,
// each a kernel of its own, read by a matmul over the padded K.
TEST(Manifest, PaddedRows) {
  json j = valid();
  j["buffers"] = json::parse(R"([
    {"name": "a", "shape": [4, 6], "dtype": "f32", "role": "input"},
    {"name": "bt", "shape": [8, 6], "dtype": "f32", "role": "input"},
    {"name": "ap", "shape": [4, 32], "dtype": "f32", "role": "scratch"},
    {"name": "bp", "shape": [8, 32], "dtype": "f32", "role": "scratch"},
    {"name": "c", "shape": [4, 8], "dtype": "f32", "role": "output"}])");
  j["program"] = json::parse(R"([
    {"op": "kb.pad", "inputs": ["bt"], "output": "bp", "shape": [8, 32],
     "attrs": {"multiple": 32}, "kernel": "k0"},
    {"op": "kb.pad", "inputs": ["a"], "output": "ap", "shape": [4, 32],
     "attrs": {"multiple": 32}, "kernel": "k1"},
    {"op": "kb.matmul", "inputs": ["ap", "bp"], "output": "c", "shape": [4, 8],
     "attrs": {"transpose_b": true, "precision": "tf32"}, "kernel": "k2"}])");
  j["kernels"] = json::parse(R"([
    {"name": "k0", "ptx": "k0.ptx", "grid": [1, 1, 1], "block": [128, 1, 1],
     "dynamic_shared_bytes": 0, "args": ["bt", "bp"], "ops": [0]},
    {"name": "k1", "ptx": "k1.ptx", "grid": [1, 1, 1], "block": [128, 1, 1],
     "dynamic_shared_bytes": 0, "args": ["a", "ap"], "ops": [1]},
    {"name": "k2", "ptx": "k2.ptx", "grid": [1, 1, 1], "block": [128, 1, 1],
     "dynamic_shared_bytes": 0, "args": ["ap", "bp", "c"], "ops": [2]}])");
  EXPECT_EQ(errorOf(j), "");
  j["program"][1]["attrs"]["multiple"] = 16;
  EXPECT_NE(
      errorOf(j).find("(kb.pad) of [4, 6] must give [4, 16], not [4, 32]"),
      std::string::npos);
  j["program"][1]["attrs"].erase("multiple");
  EXPECT_NE(errorOf(j).find("(kb.pad) needs attrs.multiple"),
            std::string::npos);
  j["program"][1]["attrs"]["multiple"] = 1;
  EXPECT_NE(errorOf(j).find("attrs.multiple: 1 is below the minimum 2"),
            std::string::npos);
}

TEST(Manifest, RejectsBadInputWithAMessageNamingTheField) {
  json j = valid();
  j["version"] = 2;
  EXPECT_NE(errorOf(j).find("version 2 is not supported"), std::string::npos);
  j = valid();
  j["buffers"][0]["dtype"] = "f64";
  EXPECT_NE(errorOf(j).find("has dtype \"f64\"; a data buffer is f32, f16 "
                            "or bf16"),
            std::string::npos);
  j = valid();
  j["kernels"][0]["args"][1] = "z";
  EXPECT_NE(errorOf(j).find("unknown buffer \"z\""), std::string::npos);
  j = valid();
  j["kernels"][0]["block"] = {2048, 1, 1};
  EXPECT_NE(
      errorOf(j).find("kernels[0].block[0]: 2048 exceeds CUDA's limit 1024"),
      std::string::npos);
  j = valid();
  j["kernels"][0]["ops"] = {3};
  EXPECT_NE(errorOf(j).find("names op 3"), std::string::npos);
  j = valid();
  j["buffers"][1]["name"] = "x";
  EXPECT_NE(errorOf(j).find("appears twice"), std::string::npos);
  j = valid();
  j["program"][0]["inputs"][0] = "nowhere";
  EXPECT_NE(errorOf(j).find("program[0] (kb.relu).inputs[0] 'nowhere' is "
                            "neither a data buffer nor an earlier op's output"),
            std::string::npos);
  j = valid();
  j["program"][0]["op"] = "kb.matmul";
  EXPECT_NE(errorOf(j).find("(kb.matmul) needs 2 inputs, has 1"),
            std::string::npos);
  j = valid();
  j.erase("kernels");
  EXPECT_NE(errorOf(j).find("no field 'kernels'"), std::string::npos);
  EXPECT_NE(
      errorOf(json::parse("[1]"))
          .find("manifest: the manifest must be a JSON object, not array"),
      std::string::npos);
}

TEST(Manifest, NotJsonAndMissingFile) {
  EXPECT_THROW(Manifest::parse("{oops", "/tmp"), ManifestError);
  try {
    Manifest::load("/nonexistent/bundle");
    FAIL();
  } catch (const ManifestError &e) {
    EXPECT_NE(std::string(e.what()).find("cannot open /nonexistent/bundle"),
              std::string::npos);
  }
}

// kb-run refuses, before loading a kernel, a bundle whose target the GPU
// cannot run (issue #18): sm_90a code on anything but compute capability
// 9.0, sm_XY code on a chip older than X.Y.
TEST(Manifest, TargetCannotRun) {
  EXPECT_EQ(targetCannotRun("sm_90a", 9, 0), "");
  EXPECT_EQ(targetCannotRun("sm_90", 9, 0), "");
  EXPECT_EQ(targetCannotRun("sm_80", 9, 0), "");
  EXPECT_EQ(targetCannotRun("sm_90", 10, 0), "");
  EXPECT_NE(
      targetCannotRun("sm_90a", 10, 0).find("instructions of that chip only"),
      std::string::npos);
  EXPECT_NE(
      targetCannotRun("sm_90a", 8, 0).find("compute capability 8.0 cannot run"),
      std::string::npos);
  EXPECT_NE(targetCannotRun("sm_90", 8, 6).find("targets sm_90,"),
            std::string::npos);
  EXPECT_THROW(targetCannotRun("sm_", 9, 0), ManifestError);
  EXPECT_THROW(targetCannotRun("gfx90a", 9, 0), ManifestError);
  EXPECT_THROW(targetCannotRun("sm_9x", 9, 0), ManifestError);
}
