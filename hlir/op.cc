/// \file The op registry and its explicit registration.
#include "hlir/op.h"

#include <glog/logging.h>

#include <mutex>

#include "absl/strings/str_cat.h"

namespace cinn_like::hlir {

const char* OpPatternName(OpPattern p) {
  switch (p) {
    case OpPattern::kElementwise:
      return "elementwise";
    case OpPattern::kBroadcast:
      return "broadcast";
    case OpPattern::kInjective:
      return "injective";
    case OpPattern::kReduction:
      return "reduction";
    case OpPattern::kOutFusible:
      return "out_fusible";
    case OpPattern::kOpaque:
      return "opaque";
  }
  return "?";
}

ir::Type ToIrType(DType t) {
  switch (t) {
    case DType::kBool:
      return ir::Bool();
    case DType::kInt8:
      return ir::Int(8);
    case DType::kInt16:
      return ir::Int(16);
    case DType::kInt32:
      return ir::Int(32);
    case DType::kInt64:
      return ir::Int(64);
    case DType::kUInt8:
      return ir::UInt(8);
    case DType::kFloat16:
      return ir::Float16();
    case DType::kBFloat16:
      return ir::BFloat16();
    case DType::kFloat32:
      return ir::Float(32);
    case DType::kFloat64:
      return ir::Float(64);
  }
  return ir::Float(32);
}

const OpRegistry& OpRegistry::Global() {
  static std::once_flag once;
  static OpRegistry* registry = nullptr;
  std::call_once(once, [] {
    registry = new OpRegistry();
    RegisterAllOps(*registry);
  });
  return *registry;
}

void RegisterAllOps(OpRegistry& registry) {
  RegisterElementwiseOps(registry);
  RegisterReductionOps(registry);
  RegisterMatmulOps(registry);
  RegisterShapeOps(registry);
  RegisterConstantOps(registry);
  RegisterConvOps(registry);
  RegisterConvBackwardOps(registry);
  RegisterIndexOps(registry);
  RegisterIndexAddOp(registry);
  RegisterAttentionOps(registry);
  RegisterScanOps(registry);
  RegisterRandomOps(registry);
}

void OpRegistry::Register(OpDef def) {
  CHECK(def.infer && def.reference) << "op " << def.name << " needs inference and a reference";
  std::string name = def.name;
  CHECK(ops_.emplace(name, std::move(def)).second) << "op " << name << " registered twice";
}

absl::StatusOr<const OpDef*> OpRegistry::Find(const std::string& name) const {
  auto it = ops_.find(name);
  if (it != ops_.end()) return &it->second;
  // Suggest names sharing the first letters, the usual typo.
  std::string similar;
  for (auto& [known, def] : ops_) {
    if (!name.empty() && known.compare(0, 2, name, 0, 2) == 0) {
      absl::StrAppend(&similar, similar.empty() ? "" : ", ", known);
    }
  }
  return absl::NotFoundError(absl::StrCat("unknown op '", name, "'",
                                          similar.empty() ? "" : "; similar ops: " + similar, " (",
                                          ops_.size(), " ops are registered)"));
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> names;
  for (auto& [name, def] : ops_) names.push_back(name);
  return names;
}

absl::StatusOr<std::vector<TensorDesc>> OpRegistry::Infer(const std::string& op,
                                                          const std::vector<TensorDesc>& inputs,
                                                          const AttributeMap& attrs) const {
  auto def = Find(op);
  if (!def.ok()) return def.status();
  int n = static_cast<int>(inputs.size());
  if (n < (*def)->min_inputs || ((*def)->max_inputs >= 0 && n > (*def)->max_inputs)) {
    std::string expected =
        (*def)->min_inputs == (*def)->max_inputs
            ? std::to_string((*def)->min_inputs)
            : absl::StrCat((*def)->min_inputs, " to ",
                           (*def)->max_inputs < 0 ? "any" : std::to_string((*def)->max_inputs));
    return absl::InvalidArgumentError(
        absl::StrCat("op ", op, ": takes ", expected, " inputs, got ", n));
  }
  auto out = (*def)->infer(inputs, attrs);
  CHECK(!out.ok() || (*def)->num_outputs < 0 ||
        static_cast<int>(out->size()) == (*def)->num_outputs)
      << "op " << op << " inferred " << out->size() << " outputs, declares " << (*def)->num_outputs;
  if (!out.ok()) return out;
  for (size_t i = 0; i < out->size(); ++i) {
    absl::Status s = CheckTensorSize((*out)[i], absl::StrCat("op ", op, ": output ", i));
    if (!s.ok()) return s;
  }
  return out;
}

}  // namespace cinn_like::hlir
