/// \file The Programs that measure how compile time grows with size
/// (tests/bench/compile_time_bench.cc).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "frontend/net_builder.h"

namespace cinn_like::bench {

/// `length` mixed elementwise ops (add, mul, sub, exp, tanh) on a float32 [rows, 256] tensor: a
/// chain where some ops also read a value a few steps back, and one op in five reads a new
/// input (a [rows, 256] tensor or a [256] row broadcast over it). One output, the last value.
/// On x86 [64, 256] makes parallel loops (outlined bodies), [8, 256] serial loops in the entry.
inline absl::StatusOr<frontend::Program> MakeChain(int length, int64_t rows = 64) {
  using hlir::DType;
  frontend::NetBuilder b;
  frontend::Var x = b.CreateInput(DType::kFloat32, hlir::MakeShape({rows, 256}), "x");
  std::vector<frontend::Var> values = {x};
  auto back = [&](int k) { return values[values.size() > size_t(k) ? values.size() - k : 0]; };
  for (int i = 0; i < length; ++i) {
    const frontend::Var& v = values.back();
    frontend::Var next;
    switch (i % 10) {
      case 0:
        next = b.Add(
            v, b.CreateInput(DType::kFloat32, hlir::MakeShape({rows, 256}), absl::StrCat("w", i)));
        break;
      case 1:
      case 6:
        next = b.Tanh(v);
        break;
      case 2:
        next = b.Mul(v, back(2));
        break;
      case 3:
      case 8:
        next = b.Exp(v);
        break;
      case 4:
        next = b.Sub(v, back(3));
        break;
      case 5:
        next =
            b.Mul(v, b.CreateInput(DType::kFloat32, hlir::MakeShape({256}), absl::StrCat("b", i)));
        break;
      case 7:
        next = b.Add(v, v);
        break;
      default:
        next = b.Sub(v, back(4));
        break;
    }
    values.push_back(next);
  }
  b.MarkOutput(values.back());
  return b.Build();
}

/// `count` float32 [4, 256] inputs joined along axis 0 by one concat.
inline absl::StatusOr<frontend::Program> MakeConcat(int count) {
  frontend::NetBuilder b;
  std::vector<frontend::Var> inputs;
  for (int i = 0; i < count; ++i) {
    inputs.push_back(
        b.CreateInput(hlir::DType::kFloat32, hlir::MakeShape({4, 256}), absl::StrCat("x", i)));
  }
  b.MarkOutput(b.Concat(inputs, 0));
  return b.Build();
}

/// "chain" (rows 64), "chain8" (rows 8) or "concat" of `size`.
inline absl::StatusOr<frontend::Program> MakeProgram(const std::string& kind, int size) {
  if (kind == "chain") return MakeChain(size);
  if (kind == "chain8") return MakeChain(size, 8);
  if (kind == "concat") return MakeConcat(size);
  return absl::InvalidArgumentError("unknown program kind '" + kind + "' (chain, chain8, concat)");
}

}  // namespace cinn_like::bench
