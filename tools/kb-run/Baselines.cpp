//===- Baselines.cpp - the fastest library route for a matmul -------------===//
//
// The legacy cuBLAS call kb-run has always timed, cublasGemmEx with a 32 MiB
// workspace, and cuBLASLt's top heuristic candidates with the same
// workspace, each timed alone on the same operands; for 16-bit operands the
// same three with CUDA_R_16BF / CUDA_R_16F inputs, CUBLAS_COMPUTE_32F and
// the bundle's result type. Row-major C = A B is
// column-major C^T = B^T A^T, so the libraries' "A" is kb's B.
//
//===----------------------------------------------------------------------===//

#include "Baselines.h"

#include <algorithm>
#include <memory>

namespace kb::runtime {

namespace {
void checkLt(cublasStatus_t s, const char *what) { checkCublas(s, what); }

/// A cuBLASLt object destroyed with its own function.
template <typename T, cublasStatus_t (*Destroy)(T)> struct LtObject {
  T v = nullptr;
  ~LtObject() {
    if (v)
      Destroy(v);
  }
};
using MatmulDesc = LtObject<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using Layout = LtObject<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using Preference =
    LtObject<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

/// A column-major rows x cols layout with leading dimension ld, `batch`
/// matrices `stride` elements apart.
void makeLayout(Layout &l, cudaDataType_t type, uint64_t rows, uint64_t cols,
                int64_t ld, int64_t batch, int64_t stride) {
  checkLt(cublasLtMatrixLayoutCreate(&l.v, type, rows, cols, ld),
          "cublasLtMatrixLayoutCreate");
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    checkLt(cublasLtMatrixLayoutSetAttribute(
                l.v, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
            "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)");
    checkLt(cublasLtMatrixLayoutSetAttribute(
                l.v, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                sizeof(stride)),
            "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)");
  }
}
} // namespace

GemmRoutes::GemmRoutes() : workspace_(kWorkspaceBytes) {
  checkCublas(cublasCreate(&plain_), "cublasCreate");
  checkCublas(cublasCreate(&withWorkspace_), "cublasCreate");
  checkCublas(cublasSetWorkspace(withWorkspace_,
                                 reinterpret_cast<void *>(workspace_.ptr),
                                 kWorkspaceBytes),
              "cublasSetWorkspace");
  checkLt(cublasLtCreate(&lt_), "cublasLtCreate");
}

GemmRoutes::~GemmRoutes() {
  if (lt_)
    cublasLtDestroy(lt_);
  if (withWorkspace_)
    cublasDestroy(withWorkspace_);
  if (plain_)
    cublasDestroy(plain_);
}

std::vector<GemmRoute>
GemmRoutes::timeAll(const std::string &precision, const MatmulDims &d,
                    CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, int warmup,
                    int minRuns, double minMillis, DeviceBuffer *flush,
                    int batch) {
  bool tf32 = precision == "tf32";
  // native: the 16-bit operands' routes (fp32 compute, the bundle's result
  // type); otherwise fp32 operands and result.
  bool native = precision == "native";
  cudaDataType_t tIn = native ? cudaTypeOf(d.in) : CUDA_R_32F,
                 tOut = native ? cudaTypeOf(d.out) : CUDA_R_32F;
  std::string label = native ? std::string(" ") + dtypeName(d.in) + " in, " +
                                   dtypeName(d.out) + " out, 32F"
                      : tf32 ? " FAST_TF32"
                             : " 32F";
  std::vector<GemmRoute> routes;
  auto time = [&](const std::string &name, const std::function<void()> &body) {
    routes.push_back(
        {name, timeWithEvents(body, warmup, minRuns, minMillis, flush, batch)});
  };
  float alpha = 1.0f, beta = 0.0f;
  auto *A = reinterpret_cast<const void *>(a);
  auto *B = reinterpret_cast<const void *>(b);
  auto *C = reinterpret_cast<void *>(c);
  cublasOperation_t opB = d.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int64_t ldb = d.transB ? d.ldbT : d.n;
  int64_t strideB = d.transB ? d.n * d.ldbT : d.k * d.n;

  // 1. The call kb-run's checks make (strided-batched, library workspace).
  time(native ? "cublasGemmStridedBatchedEx" + label + ", library workspace"
              : std::string("cublasSgemmStridedBatched") +
                    (tf32 ? ", TF32 math mode" : ", pedantic"),
       [&] { runCublasGemm(plain_, precision == "tf32x3" ? "ieee" : precision,
                           d, a, b, c); });

  // 2. cublasGemmEx (the plain entry point for one matrix) with a workspace.
  cublasComputeType_t compute =
      tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  time(
      std::string(d.batch > 1 ? "cublasGemmStridedBatchedEx" : "cublasGemmEx") +
          label + ", 32 MiB workspace",
      [&] {
        if (d.batch > 1)
          checkCublas(cublasGemmStridedBatchedEx(
                          withWorkspace_, opB, CUBLAS_OP_N, d.n, d.m, d.k,
                          &alpha, B, tIn, ldb, strideB, A, tIn, d.k, d.m * d.k,
                          &beta, C, tOut, d.n, d.m * d.n, d.batch, compute,
                          CUBLAS_GEMM_DEFAULT),
                      "cublasGemmStridedBatchedEx");
        else
          checkCublas(cublasGemmEx(withWorkspace_, opB, CUBLAS_OP_N, d.n, d.m,
                                   d.k, &alpha, B, tIn, ldb, A, tIn, d.k, &beta,
                                   C, tOut, d.n, compute, CUBLAS_GEMM_DEFAULT),
                      "cublasGemmEx");
      });

  // 3. cuBLASLt: the heuristic's top candidates, each timed.
  MatmulDesc desc;
  checkLt(cublasLtMatmulDescCreate(&desc.v, compute, CUDA_R_32F),
          "cublasLtMatmulDescCreate");
  cublasOperation_t opN = CUBLAS_OP_N;
  checkLt(cublasLtMatmulDescSetAttribute(desc.v, CUBLASLT_MATMUL_DESC_TRANSA,
                                         &opB, sizeof(opB)),
          "cublasLtMatmulDescSetAttribute(TRANSA)");
  checkLt(cublasLtMatmulDescSetAttribute(desc.v, CUBLASLT_MATMUL_DESC_TRANSB,
                                         &opN, sizeof(opN)),
          "cublasLtMatmulDescSetAttribute(TRANSB)");
  Layout la, lb, lc;
  if (d.transB)
    makeLayout(la, tIn, d.k, d.n, d.ldbT, d.batch, strideB);
  else
    makeLayout(la, tIn, d.n, d.k, d.n, d.batch, strideB);
  makeLayout(lb, tIn, d.k, d.m, d.k, d.batch, d.m * d.k);
  makeLayout(lc, tOut, d.n, d.m, d.n, d.batch, d.m * d.n);
  Preference pref;
  checkLt(cublasLtMatmulPreferenceCreate(&pref.v),
          "cublasLtMatmulPreferenceCreate");
  uint64_t ws = kWorkspaceBytes;
  checkLt(
      cublasLtMatmulPreferenceSetAttribute(
          pref.v, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
      "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t results[kLtCandidates] = {};
  int returned = 0;
  cublasStatus_t st =
      cublasLtMatmulAlgoGetHeuristic(lt_, desc.v, la.v, lb.v, lc.v, lc.v,
                                     pref.v, kLtCandidates, results, &returned);
  if (st == CUBLAS_STATUS_SUCCESS)
    for (int i = 0; i < returned; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS)
        continue;
      const cublasLtMatmulAlgo_t *algo = &results[i].algo;
      // A candidate that fails at run time is left out, not fatal.
      if (cublasLtMatmul(lt_, desc.v, &alpha, B, la.v, A, lb.v, &beta, C, lc.v,
                         C, lc.v, algo,
                         reinterpret_cast<void *>(workspace_.ptr),
                         kWorkspaceBytes, nullptr) != CUBLAS_STATUS_SUCCESS)
        continue;
      time("cublasLt heuristic #" + std::to_string(i + 1) + " of " +
               std::to_string(returned) + label + ", 32 MiB workspace",
           [&] {
             checkLt(cublasLtMatmul(lt_, desc.v, &alpha, B, la.v, A, lb.v,
                                    &beta, C, lc.v, C, lc.v, algo,
                                    reinterpret_cast<void *>(workspace_.ptr),
                                    kWorkspaceBytes, nullptr),
                     "cublasLtMatmul");
           });
    }
  std::stable_sort(routes.begin(), routes.end(),
                   [](const GemmRoute &x, const GemmRoute &y) {
                     return x.time.median < y.time.median;
                   });
  return routes;
}

} // namespace kb::runtime
