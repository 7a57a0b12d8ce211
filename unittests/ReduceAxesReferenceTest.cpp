//===- ReduceAxesReferenceTest.cpp - kb.reduce over an axis, over all -----===//
//
// The float64 references of kb.reduce over a non-last axis and over the
// whole tensor, against values worked by hand, and their bounds against the
// kernels emulated on the CPU in fp32 the way ColumnReduce.cpp (each slice's
// rows in order, then the slices in order) and WholeReduce.cpp (each
// thread's vectors in order, a block's tree, the partials in order, a tree)
// sum: the emulated kernels pass at their own summation depth; the column
// kernel missing one row or reading the next column, and the whole-tensor
// kernel missing one block's partial, fail.
//
//===----------------------------------------------------------------------===//

#include "kb/Runtime/Reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace kb::runtime;

namespace {

ProgramOp reduceOp(nlohmann::json attrs, double depth = 0) {
  ProgramOp op;
  op.op = "kb.reduce";
  op.attrs = attrs;
  op.toBuffer = true;
  op.sumDepth = depth;
  return op;
}

HostTensor randomTensor(std::vector<int64_t> shape, double mean,
                        unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(static_cast<float>(mean), 1.0f);
  HostTensor t;
  t.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  for (int64_t i = 0; i < n; ++i)
    t.data.push_back(dist(gen));
  return t;
}

float tree(std::vector<float> v) {
  for (size_t w = 1; w < v.size(); w *= 2)
    for (size_t i = 0; i + w < v.size(); i += 2 * w)
      v[i] += v[i + w];
  return v[0];
}

enum class Broken { None, MissingRow, NextColumn };

/// Column sum of [len, inner] over axis 0 with `slices` slices.
std::vector<float> columnKernel(const HostTensor &x, int64_t len, int64_t inner,
                                int64_t slices, Broken broken) {
  std::vector<float> out(inner);
  for (int64_t i = 0; i < inner; ++i) {
    int64_t col = broken == Broken::NextColumn && i == inner / 2 ? i + 1 : i;
    float total = 0;
    for (int64_t s = 0; s < slices; ++s) {
      float acc = 0;
      for (int64_t r = s; r < len; r += slices)
        if (!(broken == Broken::MissingRow && r == len - 1))
          acc += static_cast<float>(x.data[r * inner + col]);
      total = s == 0 ? acc : total + acc;
    }
    out[i] = total;
  }
  return out;
}

/// Whole sum on `grid` blocks of `threads` threads of `vec` values.
float wholeKernel(const HostTensor &x, int64_t grid, int64_t threads,
                  int64_t vec, Broken broken) {
  int64_t total = static_cast<int64_t>(x.data.size()), vectors = total / vec;
  std::vector<float> partials(grid);
  for (int64_t b = 0; b < grid; ++b) {
    std::vector<float> acc(threads, 0.0f);
    for (int64_t t = 0; t < threads; ++t)
      for (int64_t i = b * threads + t; i < vectors; i += grid * threads)
        for (int64_t l = 0; l < vec; ++l)
          acc[t] += static_cast<float>(x.data[i * vec + l]);
    partials[b] = tree(acc);
  }
  std::vector<float> acc(threads, 0.0f);
  for (int64_t t = 0; t < threads; ++t)
    for (int64_t k = t; k < grid; k += threads)
      if (!(broken == Broken::MissingRow && k == grid - 1))
        acc[t] += partials[k];
  return tree(acc);
}

} // namespace

TEST(ReduceAxesReference, ByHand) {
  HostTensor x;
  x.shape = {2, 3, 2};
  x.data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  auto mid = evalOp(reduceOp({{"kind", "sum"}, {"axis", 1}}), {&x});
  EXPECT_EQ(mid.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(mid.data, (std::vector<double>{9, 12, 27, 30}));
  auto first =
      evalOp(reduceOp({{"kind", "max"}, {"axis", 0}, {"keepdim", true}}), {&x});
  EXPECT_EQ(first.shape, (std::vector<int64_t>{1, 3, 2}));
  EXPECT_EQ(first.data, (std::vector<double>{7, 8, 9, 10, 11, 12}));
  auto mn = evalOp(reduceOp({{"kind", "min"}, {"axis", 2}}), {&x});
  EXPECT_EQ(mn.data, (std::vector<double>{1, 3, 5, 7, 9, 11}));
  auto all = evalOp(reduceOp({{"kind", "mean"}, {"all", true}}), {&x});
  EXPECT_EQ(all.shape, (std::vector<int64_t>{1}));
  EXPECT_DOUBLE_EQ(all.data[0], 6.5);
  auto allKeep = evalOp(
      reduceOp({{"kind", "sum"}, {"all", true}, {"keepdim", true}}), {&x});
  EXPECT_EQ(allKeep.shape, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(allKeep.data[0], 78);
  EXPECT_THROW(evalOp(reduceOp({{"kind", "sum"}, {"axis", 3}}), {&x}),
               std::runtime_error);
}

TEST(ReduceAxesReference, SumDepthsOfTheKernelsLayouts) {
  EXPECT_EQ(columnSumDepth(8192, 64), 128 + 64 + 2);
  EXPECT_EQ(columnSumDepth(10, 4), 3 + 4 + 2);
  EXPECT_EQ(columnSumDepth(100, 0), 100); // layout unknown: in order
  // 2^28 floats on 528 blocks of 512 threads of 4: 249 vectors a thread.
  EXPECT_EQ(wholeSumDepth(int64_t(1) << 28, 528, 512, 4),
            249 * 4 + 10 + 2 + 10 + 2);
}

TEST(ReduceAxesReference, EmulatedColumnSumPassesBrokenFails) {
  for (double mean : {0.0, 10.0}) {
    int64_t len = 4096, inner = 64, slices = 64;
    HostTensor x = randomTensor({len, inner}, mean, 3);
    ProgramOp op =
        reduceOp({{"kind", "sum"}, {"axis", 0}}, columnSumDepth(len, slices));
    HostTensor ref = evalOp(op, {&x});
    for (Broken b : {Broken::None, Broken::MissingRow, Broken::NextColumn}) {
      auto got = columnKernel(x, len, inner, slices, b);
      Comparison c =
          compareWithBound(got.data(), ref.data.data(), ref.err, inner);
      EXPECT_EQ(c.ok(), b == Broken::None)
          << "mean " << mean << " broken " << int(b) << ": worst "
          << c.maxErrOverBound;
    }
  }
}

TEST(ReduceAxesReference, EmulatedWholeSumPassesBrokenFails) {
  for (double mean : {0.0, 10.0}) {
    HostTensor x = randomTensor({1 << 20}, mean, 5);
    int64_t grid = 64, threads = 256, vec = 4;
    ProgramOp op = reduceOp({{"kind", "sum"}, {"all", true}},
                            wholeSumDepth(1 << 20, grid, threads, vec));
    HostTensor ref = evalOp(op, {&x});
    for (Broken b : {Broken::None, Broken::MissingRow}) {
      float got = wholeKernel(x, grid, threads, vec, b);
      Comparison c = compareWithBound(&got, ref.data.data(), ref.err, 1);
      EXPECT_EQ(c.ok(), b == Broken::None)
          << "mean " << mean << " broken " << int(b) << ": worst "
          << c.maxErrOverBound;
    }
  }
}
