/// \file AttentionKernelSpec's name: written and read in one place.
#include "ir/attention_kernel_spec.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace cinn_like::ir {
namespace {

constexpr const char* kForward = "cinn_like_attention_";
constexpr const char* kGrad = "cinn_like_attention_grad_";

bool IsElement(const std::string& d) { return d == "float32" || d == "float16" || d == "bfloat16"; }

/// The number after a one-letter tag ("d64" -> 64), or false.
bool Tagged(const std::string& part, char tag, int* value) {
  return part.size() > 1 && part[0] == tag && absl::SimpleAtoi(part.substr(1), value);
}

absl::Status NameError(bool grad, const std::string& name, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(
      grad ? "attention backward kernel " : "attention kernel ", name, ": ", why, " (expected ",
      grad ? kGrad : kForward, "<dtype>_<mask>_d<D>_q<BM>_k<BN>[_tc][_drop])"));
}

}  // namespace

std::string AttentionKernelSpec::Name() const {
  return absl::StrCat(grad ? kGrad : kForward, dtype, "_", mask, "_", TilePart(),
                      tensor_cores ? "_tc" : "", dropout ? "_drop" : "");
}

bool AttentionKernelSpec::IsAttention(const std::string& name) {
  return absl::StartsWith(name, kForward);
}

bool AttentionKernelSpec::IsAttentionGrad(const std::string& name) {
  return absl::StartsWith(name, kGrad);
}

absl::StatusOr<AttentionKernelSpec> AttentionKernelSpec::Parse(const std::string& name) {
  AttentionKernelSpec spec;
  spec.grad = IsAttentionGrad(name);
  absl::string_view rest = name;
  std::vector<std::string> parts;
  if (absl::ConsumePrefix(&rest, spec.grad ? kGrad : kForward)) {
    parts = absl::StrSplit(rest, '_');
  }
  spec.dropout = parts.size() >= 6 && parts.back() == "drop";
  if (spec.dropout) parts.pop_back();
  spec.tensor_cores = parts.size() == 6 && parts[5] == "tc";
  if (spec.tensor_cores) parts.pop_back();
  if (parts.size() != 5 || !Tagged(parts[2], 'd', &spec.head_dim) ||
      !Tagged(parts[3], 'q', &spec.rows) || !Tagged(parts[4], 'k', &spec.keys)) {
    return NameError(spec.grad, name, "malformed name");
  }
  if (!IsElement(parts[0])) return NameError(spec.grad, name, "element dtype " + parts[0]);
  if (parts[1] != "none" && parts[1] != "bool" && !IsElement(parts[1])) {
    return NameError(spec.grad, name, "mask dtype " + parts[1]);
  }
  spec.dtype = parts[0];
  spec.mask = parts[1];
  return spec;
}

absl::Status AttentionKernelSpec::Error(const std::string& why) const {
  return NameError(grad, Name(), why);
}

}  // namespace cinn_like::ir
