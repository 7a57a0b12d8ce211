//===- NpyTest.cpp - .npy round trip and errors ---------------------------===//

#include "kb/Runtime/Npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

using namespace kb::runtime;

TEST(Npy, RoundTrip) {
  std::vector<float> v = {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f};
  std::string path = testing::TempDir() + "/kb_npy_test.npy";
  writeNpy(path, {2, 3}, v.data());
  NpyArray a = readNpy(path);
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(a.data, v);
  writeNpy(path, {6}, v.data());
  EXPECT_EQ(readNpy(path).shape, (std::vector<int64_t>{6}));
  std::remove(path.c_str());
}

TEST(Npy, Errors) {
  EXPECT_THROW(readNpy("/nonexistent.npy"), std::runtime_error);
  std::string path = testing::TempDir() + "/kb_not_npy.npy";
  std::ofstream(path) << "hello";
  EXPECT_THROW(readNpy(path), std::runtime_error);
  std::remove(path.c_str());
}

namespace {

/// A .npy file of version 1.0 with `dict` as its header and `dataBytes` of
/// zeros after it.
std::string npyFile(const std::string &name, const std::string &dict,
                    size_t dataBytes, int major = 1) {
  std::string path = testing::TempDir() + "/kb_npy_" + name + ".npy";
  std::string header = dict + "\n";
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY", 6);
  out.put(char(major));
  out.put(0);
  if (major == 1) {
    out.put(char(header.size() & 0xff));
    out.put(char(header.size() >> 8));
  } else {
    uint32_t n = header.size();
    for (int i = 0; i < 4; ++i)
      out.put(char((n >> (8 * i)) & 0xff));
  }
  out << header << std::string(dataBytes, '\0');
  return path;
}

std::string npyError(const std::string &path) {
  try {
    readNpy(path);
  } catch (const std::runtime_error &e) {
    return e.what();
  }
  return "";
}

const char *kGood =
    "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

} // namespace

TEST(Npy, StrictHeader) {
  EXPECT_EQ(npyError(npyFile("good", kGood, 24)), "");
  EXPECT_EQ(readNpy(npyFile("good2", kGood, 24, 2)).shape,
            (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(
      readNpy(npyFile("scalar",
                      "{'descr': '<f4', 'fortran_order': False, 'shape': ()}",
                      4))
          .data.size(),
      1u);
  EXPECT_EQ(
      readNpy(
          npyFile(
              "dq",
              "{\"shape\": (3,), \"descr\": \"<f4\", \"fortran_order\": False}",
              12))
          .shape,
      (std::vector<int64_t>{3}));
  struct Case {
    const char *name, *dict;
    size_t bytes;
    const char *message;
  } cases[] = {
      // Once "stoll": a dimension that is not a number.
      {"stoll", "{'descr': '<f4', 'fortran_order': False, 'shape': (x, 3), }",
       24, "bad .npy header: shape must be a tuple of non-negative integers"},
      {"neg", "{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }",
       24, "shape must be a tuple of non-negative integers"},
      // Once "vector::_M_default_append" or a 4 GB allocation.
      {"huge",
       "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, ), }",
       24,
       "shape (1073741824,) of float32 needs 4294967296 bytes of data; the "
       "file holds 24"},
      {"overflow",
       "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
       "4294967296), }",
       24, "needs more bytes than the file holds"},
      {"digits",
       "{'descr': '<f4', 'fortran_order': False, 'shape': "
       "(99999999999999999999, ), }",
       24, "a shape dimension overflows 64 bits"},
      {"short", kGood, 20,
       "shape (2, 3) of float32 needs 24 bytes of data; the file holds 20"},
      {"long", kGood, 28, "needs 24 bytes of data; the file holds 28"},
      {"f8", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", 48,
       "dtype '<f8'; kb-run reads float32 ('<f4'), float16 ('<f2') and "
       "bfloat16 bits ('<u2') arrays only"},
      {"bigendian",
       "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24,
       "dtype '>f4'"},
      {"fortran", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
       24, "C-order arrays only"},
      {"noshape", "{'descr': '<f4', 'fortran_order': False, }", 24,
       "the header has no 'shape'"},
      {"twice",
       "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': "
       "(6,)}",
       24, "'descr' appears twice"},
      {"extra",
       "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", 24,
       "unexpected key 'x' in the header"},
      {"order", "{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}", 24,
       "fortran_order must be True or False"},
      {"unterminated", "{'descr': '<f4", 24, "unterminated or overlong string"},
      {"trailing",
       "{'descr': '<f4', 'fortran_order': False, 'shape': (6,)} junk", 24,
       "unexpected text after the header dictionary"},
      {"nobrace", "'descr': '<f4'", 24, "expected '{'"},
  };
  for (const Case &c : cases) {
    std::string e = npyError(npyFile(c.name, c.dict, c.bytes));
    EXPECT_NE(e.find(c.message), std::string::npos) << c.name << ": " << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << c.name;
  }
}

TEST(Npy, BoundedPreamble) {
  // A header length larger than the file (or than the reader's bound) is
  // refused before the header is allocated.
  std::string path = testing::TempDir() + "/kb_npy_hdr.npy";
  {
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x02\x00\xff\xff\xff\xff", 12);
    out << "{}";
  }
  EXPECT_NE(npyError(path).find(
                ".npy header of 4294967295 bytes; kb-run reads headers of at "
                "most 65536"),
            std::string::npos)
      << npyError(path);
  {
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00\x00\x10", 10);
    out << "{}";
  }
  EXPECT_NE(
      npyError(path).find(".npy header of 4096 bytes is longer than the file"),
      std::string::npos)
      << npyError(path);
  {
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x07\x00\x00\x10", 10);
  }
  EXPECT_NE(npyError(path).find("format version 7 is not supported"),
            std::string::npos);
  std::remove(path.c_str());
  EXPECT_EQ(npyError("/dev/zero"), "/dev/zero is not a regular file");
  EXPECT_EQ(npyError(testing::TempDir()),
            testing::TempDir() + " is not a regular file");
}

// Found by CI's npy fuzz run (seed 1, 2026-12-01): a shape whose leading
// dimensions overflow 64 bits but which holds a zero reads as an empty array;
// writing it back multiplied the dimensions (signed overflow, UBSan). It must
// write and read back as the same empty array; a shape that really overflows
// is refused by writeNpy with a message.
TEST(Npy, ZeroDimAfterOverflowingDims) {
  std::string path =
      npyFile("zero_after_overflow",
              "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, "
              "4294967296, 0), }",
              0);
  NpyArray a = readNpy(path);
  EXPECT_TRUE(a.data.empty());
  std::string back =
      testing::TempDir() + "/kb_npy_zero_after_overflow_back.npy";
  writeNpy(back, a.shape, a.data.data());
  NpyArray b = readNpy(back);
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_TRUE(b.data.empty());
  float x = 0;
  EXPECT_THROW(writeNpy(back, {int64_t(1) << 32, int64_t(1) << 32}, &x),
               std::runtime_error);
  EXPECT_THROW(writeNpy(back, {-1}, &x), std::runtime_error);
  std::remove(path.c_str());
  std::remove(back.c_str());
}
