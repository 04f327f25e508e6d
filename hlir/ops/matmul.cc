/// \file matmul (batched, with transposes, batch dims broadcast as torch.matmul does for
/// operands of rank >= 2; optionally a bias and an activation as its epilogue, see
/// ops::MatmulEpilogue) and linear (x W^T + b, PyTorch's layout). Both are out-fusible:
/// elementwise epilogues may fuse into them. matmul's attribute allow_tf32 (default false)
/// permits a GPU library to round float32 operands to TF32 on tensor cores (float32
/// accumulation): for operands exact in TF32 (cast from 16 bits) or a product rounded to 16 bits
/// afterwards; the reference and generated code compute in float32 either way.
#include "absl/strings/str_cat.h"
#include "hlir/op.h"
#include "hlir/ops/compute_util.h"
#include "hlir/ops/op_util.h"

namespace cinn_like::hlir {
namespace {

using ops::DTypeClass;

struct MatmulDims {
  Dim m, k, k2, n;
};

/// The (m, k) of x and (k, n) of y after the transposes.
MatmulDims Dims(const Shape& x, const Shape& y, bool tx, bool ty) {
  size_t rx = x.size(), ry = y.size();
  MatmulDims d;
  d.m = tx ? x[rx - 1] : x[rx - 2];
  d.k = tx ? x[rx - 2] : x[rx - 1];
  d.k2 = ty ? y[ry - 1] : y[ry - 2];
  d.n = ty ? y[ry - 2] : y[ry - 1];
  return d;
}

absl::StatusOr<std::vector<TensorDesc>> InferMatmul(const std::vector<TensorDesc>& in,
                                                    const AttributeMap& attrs) {
  const std::string op = "matmul";
  auto epilogue = ops::GetMatmulEpilogue(in.size(), attrs);
  if (!epilogue.ok()) return epilogue.status();
  for (int i = 0; i < 2; ++i) {
    absl::Status s = ops::CheckDType(op, i, in[i], DTypeClass::kNumeric);
    if (!s.ok()) return s;
    if (in[i].shape.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("op matmul: input ", i, " (", in[i].ToString(),
                                                     ") must have rank 2 or more"));
    }
  }
  absl::Status s = ops::CheckSameDType(op, in);
  if (!s.ok()) return s;
  auto tx = GetBool(attrs, "transpose_x", op, false);
  if (!tx.ok()) return tx.status();
  auto ty = GetBool(attrs, "transpose_y", op, false);
  if (!ty.ok()) return ty.status();
  auto tf32 = GetBool(attrs, "allow_tf32", op, false);
  if (!tf32.ok()) return tf32.status();
  MatmulDims d = Dims(in[0].shape, in[1].shape, *tx, *ty);
  if (d.k != d.k2) {
    return absl::InvalidArgumentError(
        absl::StrCat("op matmul: inner dims differ: x ", in[0].ToString(),
                     *tx ? " (transposed)" : "", " has k = ", d.k.ToString(), ", y ",
                     in[1].ToString(), *ty ? " (transposed)" : "", " has k = ", d.k2.ToString()));
  }
  Shape bx(in[0].shape.begin(), in[0].shape.end() - 2),
      by(in[1].shape.begin(), in[1].shape.end() - 2);
  auto batch = BroadcastShapes(bx, by);
  if (!batch.ok()) {
    return absl::InvalidArgumentError("op matmul: batch dims: " +
                                      std::string(batch.status().message()));
  }
  Shape out = *batch;
  out.push_back(d.m);
  out.push_back(d.n);
  if (epilogue->bias && in[2].shape != Shape{d.n}) {
    return absl::InvalidArgumentError(absl::StrCat("op matmul: bias ", in[2].ToString(),
                                                   " must have shape [", d.n.ToString(), "]"));
  }
  if (!epilogue->op.empty() && !IsFloat(in[0].dtype)) {
    return absl::InvalidArgumentError(
        absl::StrCat("op matmul: activation on ", in[0].ToString(), " needs a float type"));
  }
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

/// The epilogue on the reference's product `o`: bias, then the activation op's reference.
absl::Status ReferenceEpilogue(const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                               HostTensor& o) {
  auto e = ops::GetMatmulEpilogue(in.size(), attrs);
  if (!e.ok()) return e.status();
  if (e->bias) {
    const int64_t n = o.shape.back();
    for (int64_t i = 0; i < o.size(); ++i) o.data[i] += in[2]->data[i % n];
  }
  return ops::ReferenceActivation(*e, o);
}

absl::Status ReferenceMatmul(const std::vector<const HostTensor*>& in, const AttributeMap& attrs,
                             std::vector<HostTensor>& outs) {
  bool tx = *GetBool(attrs, "transpose_x", "matmul", false);
  bool ty = *GetBool(attrs, "transpose_y", "matmul", false);
  const HostTensor &x = *in[0], &y = *in[1];
  HostTensor& o = outs[0];
  int rx = x.rank(), ry = y.rank(), ro = o.rank();
  int64_t m = o.shape[ro - 2], n = o.shape[ro - 1];
  int64_t k = tx ? x.shape[rx - 2] : x.shape[rx - 1];
  std::vector<int64_t> batch(o.shape.begin(), o.shape.end() - 2);
  std::vector<int64_t> xb(x.shape.begin(), x.shape.end() - 2),
      yb(y.shape.begin(), y.shape.end() - 2);
  int64_t b = 0;
  ForEachIndex(batch, [&](const std::vector<int64_t>& idx) {
    const double* xp = x.data.data() + BroadcastIndex(xb, idx) * x.shape[rx - 2] * x.shape[rx - 1];
    const double* yp = y.data.data() + BroadcastIndex(yb, idx) * y.shape[ry - 2] * y.shape[ry - 1];
    double* op = o.data.data() + b++ * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += xp[tx ? p * m + i : i * k + p] * yp[ty ? j * k + p : p * n + j];
        }
        op[i * n + j] = acc;
      }
    }
  });
  return ReferenceEpilogue(in, attrs, o);
}

absl::StatusOr<std::vector<TensorDesc>> InferLinear(const std::vector<TensorDesc>& in,
                                                    const AttributeMap&) {
  const std::string op = "linear";
  absl::Status s = ops::CheckDType(op, 0, in[0], DTypeClass::kFloat);
  if (!s.ok()) return s;
  s = ops::CheckSameDType(op, in);
  if (!s.ok()) return s;
  if (in[0].shape.empty() || in[1].shape.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("op linear: x (", in[0].ToString(), ") needs rank >= 1 and weight (",
                     in[1].ToString(), ") rank 2 [out_features, in_features]"));
  }
  if (in[0].shape.back() != in[1].shape[1]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op linear: x ", in[0].ToString(), " has ", in[0].shape.back().ToString(),
        " features but weight ", in[1].ToString(), " expects ", in[1].shape[1].ToString()));
  }
  if (in.size() == 3 && in[2].shape != Shape{in[1].shape[0]}) {
    return absl::InvalidArgumentError(absl::StrCat("op linear: bias ", in[2].ToString(),
                                                   " must have shape [", in[1].shape[0].ToString(),
                                                   "]"));
  }
  Shape out = in[0].shape;
  out.back() = in[1].shape[0];
  return std::vector<TensorDesc>{TensorDesc{in[0].dtype, out}};
}

absl::Status ReferenceLinear(const std::vector<const HostTensor*>& in, const AttributeMap&,
                             std::vector<HostTensor>& outs) {
  const HostTensor &x = *in[0], &w = *in[1];
  int64_t k = w.shape[1], n = w.shape[0], rows = k ? x.size() / k : 0;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = in.size() == 3 ? in[2]->data[j] : 0.0;
      for (int64_t p = 0; p < k; ++p) acc += x.data[i * k + p] * w.data[j * k + p];
      outs[0].data[i * n + j] = acc;
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterMatmulOps(OpRegistry& r) {
  OpDef matmul{"matmul", OpPattern::kOutFusible, 2, 3, 1, InferMatmul, ReferenceMatmul};
  matmul.compute = ops::MatmulCompute();
  matmul.extern_compute = ops::MatmulExternCompute();
  matmul.extern_reads_data_only = true;
  r.Register(std::move(matmul));
  OpDef linear{"linear", OpPattern::kOutFusible, 2, 3, 1, InferLinear, ReferenceLinear};
  linear.compute = ops::LinearCompute();
  linear.extern_compute = ops::LinearExternCompute();
  linear.extern_reads_data_only = true;
  r.Register(std::move(linear));
}

}  // namespace cinn_like::hlir
