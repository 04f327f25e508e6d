/// \file Printing of IR types, and the index type of the lowering on this thread.
#include "ir/type.h"

namespace cinn_like::ir {
namespace {

Type& CurrentIndexType() {
  thread_local Type current = Int(32);
  return current;
}

}  // namespace

Type IndexType() { return CurrentIndexType(); }

IndexTypeScope::IndexTypeScope(Type t) : saved_(CurrentIndexType()) { CurrentIndexType() = t; }

IndexTypeScope::~IndexTypeScope() { CurrentIndexType() = saved_; }

std::string Type::ToString() const {
  std::string s;
  switch (code_) {
    case Code::kInt:
      s = "int" + std::to_string(bits_);
      break;
    case Code::kUInt:
      s = "uint" + std::to_string(bits_);
      break;
    case Code::kFloat:
      s = "float" + std::to_string(bits_);
      break;
    case Code::kBFloat:
      s = "bfloat" + std::to_string(bits_);
      break;
    case Code::kBool:
      s = "bool";
      break;
    case Code::kHandle:
      return "handle";
    case Code::kString:
      return "string";
    case Code::kVoid:
      return "void";
  }
  if (lanes_ > 1) s += "x" + std::to_string(lanes_);
  return s;
}

}  // namespace cinn_like::ir
