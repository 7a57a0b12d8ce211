//===- NpyTest.cpp - .npy round trip and errors ---------------------------===//

#include "kb/Runtime/Npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

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
