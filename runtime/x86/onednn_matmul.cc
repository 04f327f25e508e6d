/// \file The matmul extern on oneDNN: one matmul primitive per configuration, the transposes
/// and batch strides in its memory descriptors, the bias through its bias input.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/cinn_like_runtime.h"
#include "runtime/status_return.h"
#include "runtime/x86/onednn.h"
#include "runtime/x86/onednn_library.h"

namespace cinn_like::runtime::x86 {
namespace {

// The configuration as the cache's key.
enum : size_t {
  kDType,
  kBatch,
  kM,
  kN,
  kK,
  kTransA,
  kTransB,
  kStrideA,
  kStrideB,
  kBias,
  kActivation
};

std::vector<int64_t> Key(const DnnlMatmulArgs& a) {
  return {a.dtype,
          a.batch,
          a.m,
          a.n,
          a.k,
          a.trans_a,
          a.trans_b,
          a.batch_stride_a,
          a.batch_stride_b,
          a.bias != nullptr,
          a.activation};
}

std::string Describe(const DnnlMatmulArgs& a) {
  return absl::StrCat("oneDNN matmul (batch ", a.batch, ", m ", a.m, ", n ", a.n, ", k ", a.k,
                      ", trans_a ", a.trans_a, ", trans_b ", a.trans_b, ", batch strides ",
                      a.batch_stride_a, "/", a.batch_stride_b, ", dtype code ", a.dtype,
                      a.bias ? ", bias" : "", DnnlActivationText(a.activation), ")");
}

/// A (rows x cols, or cols x rows stored when `trans`) matrix per batch, `stride` apart
/// (0: one matrix for every batch).
absl::Status MatrixDesc(const Dnnl& d, dnnl_data_type_t type, int64_t batch, int64_t stride,
                        int64_t rows, int64_t cols, bool trans, dnnl_memory_desc_t* md) {
  dnnl_dims_t dims{stride == 0 ? 1 : batch, rows, cols};
  dnnl_dims_t strides{stride == 0 ? rows * cols : stride, trans ? 1 : cols, trans ? rows : 1};
  return CheckDnnl(d, d.dnnl_memory_desc_init_by_strides(md, 3, dims, type, strides),
                   "dnnl_memory_desc_init_by_strides");
}

absl::StatusOr<DnnlPrimitive> MakeMatmul(const Dnnl& d, const std::vector<int64_t>& key) {
  const dnnl_data_type_t type = DnnlDataType(key[kDType]);
  const int64_t batch = key[kBatch], m = key[kM], n = key[kN], k = key[kK];
  dnnl_memory_desc_t a, b, bias, c;
  absl::Status st = MatrixDesc(d, type, batch, key[kStrideA], m, k, key[kTransA], &a);
  if (st.ok()) st = MatrixDesc(d, type, batch, key[kStrideB], k, n, key[kTransB], &b);
  if (st.ok()) st = MatrixDesc(d, type, batch, 0, 1, n, false, &bias);
  if (st.ok()) st = MatrixDesc(d, type, batch, m * n, m, n, false, &c);
  if (!st.ok()) return st;
  dnnl_matmul_desc_t desc;
  st = CheckDnnl(d, d.dnnl_matmul_desc_init(&desc, &a, &b, key[kBias] ? &bias : nullptr, &c),
                 "dnnl_matmul_desc_init");
  if (!st.ok()) return st;
  std::vector<std::pair<int, dnnl_memory_desc_t>> args{{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}};
  if (key[kBias]) args.push_back({DNNL_ARG_BIAS, bias});
  args.push_back({DNNL_ARG_DST, c});
  return CreatePrimitive(d, &desc, std::move(args), {}, DnnlActivationAlg(key[kActivation]));
}

PrimitiveCache& Cache() {
  static PrimitiveCache* cache = new PrimitiveCache;
  return *cache;
}

/// The primitive of `a` (sizes >= 1); errors start with Describe(a).
absl::StatusOr<const DnnlPrimitive*> Prepare(const Dnnl& d, const DnnlMatmulArgs& a) {
  auto p = Cache().Get(d, Key(a), MakeMatmul);
  if (!p.ok()) {
    return absl::Status(p.status().code(),
                        absl::StrCat(Describe(a), " with ", d.version, ": ", p.status().message()));
  }
  return p;
}

/// Checks the sizes and the dtype and loads oneDNN; errors start with Describe(a).
absl::StatusOr<const Dnnl*> Check(const DnnlMatmulArgs& a) {
  if (DnnlDataType(a.dtype) == dnnl_data_type_undef) {
    return absl::InvalidArgumentError(Describe(a) + ": unsupported dtype");
  }
  if (a.batch < 0 || a.m < 0 || a.n < 0 || a.k < 0 || a.batch_stride_a < 0 ||
      a.batch_stride_b < 0) {
    return absl::InvalidArgumentError(Describe(a) + ": sizes must be >= 0");
  }
  if (a.activation < kDnnlActivationNone || a.activation > kDnnlActivationGeluTanh) {
    return absl::InvalidArgumentError(
        absl::StrCat(Describe(a), ": unknown activation code ", a.activation));
  }
  // k = 0 makes C the bias alone, which oneDNN does not take: without an activation it is
  // copied (FillWithBias); with one, the compile declines a static k = 0 to the generated
  // kernel, and a k that is 0 only at the call is refused, as cuBLASLt's epilogue refuses it.
  if (a.k == 0 && a.activation != kDnnlActivationNone && a.batch * a.m * a.n > 0) {
    return absl::InvalidArgumentError(Describe(a) + ": k must be at least 1 with an activation");
  }
  auto d = GetDnnl();
  if (!d.ok()) {
    return absl::Status(d.status().code(), Describe(a) + ": " + std::string(d.status().message()));
  }
  return d;
}

/// C = bias on every row (or zeros): the product over k = 0, which oneDNN does not take.
void FillWithBias(const DnnlMatmulArgs& a) {
  const size_t row = static_cast<size_t>(a.n) * (a.dtype == kDnnlFloat32 ? 4 : 2);
  auto* c = static_cast<char*>(a.c);
  for (int64_t r = 0; r < a.batch * a.m; ++r, c += row) {
    if (a.bias) {
      std::memcpy(c, a.bias, row);
    } else {
      std::memset(c, 0, row);
    }
  }
}

}  // namespace

absl::StatusOr<std::string> DnnlPrepareMatmul(const DnnlMatmulArgs& a) {
  auto d = Check(a);
  if (!d.ok()) return d.status();
  if (a.batch == 0 || a.m == 0 || a.n == 0 || a.k == 0) return (*d)->version + " (no product)";
  auto p = Prepare(**d, a);
  if (!p.ok()) return p.status();
  auto impl = FastImplementation(**d, **p);
  if (!impl.ok()) {
    return absl::UnimplementedError(Describe(a) + ": " + std::string(impl.status().message()));
  }
  return impl;
}

absl::Status DnnlMatmul(const DnnlMatmulArgs& a) {
  auto d = Check(a);
  if (!d.ok()) return d.status();
  if (a.batch == 0 || a.m == 0 || a.n == 0) return absl::OkStatus();
  if (a.k == 0) {
    FillWithBias(a);
    return absl::OkStatus();
  }
  auto p = Prepare(**d, a);
  if (!p.ok()) return p.status();
  return ExecuteForward(**d, **p, a.a, a.b, a.bias, a.c, Describe(a));
}

}  // namespace cinn_like::runtime::x86

extern "C" int cinn_like_dnnl_matmul_epilogue(const void* a, const void* b, const void* bias,
                                              void* c,
                                              CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_PARAM)
                                                  int64_t activation,
                                              void* /*stream*/) {
  namespace x86 = cinn_like::runtime::x86;
  const cinn_like::runtime::MatmulArgList<int64_t> list{CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_VALUE)
                                                            activation};
  x86::DnnlMatmulArgs args{};
  args.a = a;
  args.b = b;
  args.bias = list.has_bias ? bias : nullptr;
  args.c = c;
  cinn_like::runtime::SetMatmulSizes(list, args);
  args.activation = list.activation;
  return cinn_like::runtime::ReturnStatus(x86::DnnlMatmul(args));
}

extern "C" int cinn_like_dnnl_matmul(const void* a, const void* b, const void* bias, void* c,
                                     CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_PARAM) void* stream) {
  return cinn_like_dnnl_matmul_epilogue(a, b, bias, c,
                                        CINN_LIKE_MATMUL_ARGS(CINN_LIKE_ARG_VALUE)
                                            cinn_like::runtime::x86::kDnnlActivationNone,
                                        stream);
}
