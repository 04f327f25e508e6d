/// \file Program <-> JSON with nlohmann::json.
#include "frontend/program_json.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/str_cat.h"
#include "hlir/shape.h"

namespace cinn_like::frontend {
namespace {

using nlohmann::json;

/// The largest known dim: no tensor has more elements (lowered code indexes with int32).
constexpr uint64_t kMaxDim = hlir::kMaxElements;

json FloatToJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json ShapeToJson(const hlir::Shape& s) {
  json out = json::array();
  for (auto& d : s) {
    if (d.is_symbolic()) {
      out.push_back(d.symbol);
    } else {
      out.push_back(d.value);
    }
  }
  return out;
}

json AttrToJson(const hlir::Attribute& a) {
  struct Visitor {
    json operator()(bool v) const { return json{{"bool", v}}; }
    json operator()(int64_t v) const { return json{{"int", v}}; }
    json operator()(double v) const { return json{{"float", FloatToJson(v)}}; }
    json operator()(const std::string& v) const { return json{{"string", v}}; }
    json operator()(const std::vector<int64_t>& v) const { return json{{"ints", v}}; }
    json operator()(const std::vector<double>& v) const {
      json list = json::array();
      for (double d : v) list.push_back(FloatToJson(d));
      return json{{"floats", list}};
    }
    json operator()(const hlir::Shape& v) const { return json{{"shape", ShapeToJson(v)}}; }
  };
  return std::visit(Visitor{}, a);
}

/// Reading with errors that carry the JSON path.
class Reader {
 public:
  absl::Status Error(const std::string& path, const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("program JSON: ", path, ": ", what));
  }

  /// Fails unless `v` is an object (an input's or an instruction's description).
  absl::Status Object(const json& v, const std::string& path) {
    if (v.is_object()) return absl::OkStatus();
    return Error(path, "expected an object, got " + Got(v));
  }

  absl::StatusOr<const json*> Field(const json& obj, const std::string& key,
                                    const std::string& path, json::value_t type) {
    absl::Status object = Object(obj, path);
    if (!object.ok()) return object;
    if (!obj.contains(key)) return Error(path, "missing field '" + key + "'");
    const json& v = obj.at(key);
    bool ok = v.type() == type || (type == json::value_t::number_integer && v.is_number_unsigned());
    if (!ok)
      return Error(path + "." + key, std::string("expected ") + TypeName(type) + ", got " + Got(v));
    return &v;
  }

  /// What a value is, for messages: its JSON type and, for a scalar, its text (a long string
  /// cut short): "number 2.5", "string \"abc\"", "an array".
  static std::string Got(const json& v) {
    if (v.is_array()) return "an array";
    if (v.is_object()) return "an object";
    if (v.is_null()) return "null";
    std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return std::string(v.type_name()) + " " + text;
  }

  /// An integer that fits int64_t (JSON integers above 2^63 - 1 are read as unsigned).
  absl::StatusOr<int64_t> Int64(const json& v, const std::string& path) {
    if (v.is_number_unsigned() &&
        v.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Error(path, "expected an integer that fits int64, got " + Got(v));
    }
    if (!v.is_number_integer()) return Error(path, "expected an integer, got " + Got(v));
    return v.get<int64_t>();
  }

  static const char* TypeName(json::value_t t) {
    switch (t) {
      case json::value_t::array:
        return "an array";
      case json::value_t::object:
        return "an object";
      case json::value_t::string:
        return "a string";
      case json::value_t::number_integer:
        return "an integer";
      default:
        return "another type";
    }
  }

  absl::StatusOr<double> Float(const json& v, const std::string& path) {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string& s = v.get_ref<const std::string&>();
      if (s == "nan") return NAN;
      if (s == "inf") return INFINITY;
      if (s == "-inf") return -INFINITY;
    }
    return Error(path, "expected a number or \"inf\", \"-inf\", \"nan\", got " + Got(v));
  }

  absl::StatusOr<hlir::Attribute> Attr(const json& v, const std::string& path) {
    if (!v.is_object() || v.size() != 1)
      return Error(path,
                   "an attribute is an object with one kind key ({\"int\": 3}), got " + Got(v));
    const std::string& kind = v.begin().key();
    const json& x = v.begin().value();
    if (kind == "bool" && x.is_boolean()) return hlir::Attribute(x.get<bool>());
    if (kind == "int" && x.is_number_integer()) {
      auto i = Int64(x, path + ".int");
      if (!i.ok()) return i.status();
      return hlir::Attribute(*i);
    }
    if (kind == "string" && x.is_string()) return hlir::Attribute(x.get<std::string>());
    if (kind == "float") {
      auto f = Float(x, path + ".float");
      if (!f.ok()) return f.status();
      return hlir::Attribute(*f);
    }
    if (kind == "ints" && x.is_array()) {
      std::vector<int64_t> out;
      for (size_t i = 0; i < x.size(); ++i) {
        auto e = Int64(x[i], absl::StrCat(path, ".ints[", i, "]"));
        if (!e.ok()) return e.status();
        out.push_back(*e);
      }
      return hlir::Attribute(out);
    }
    if (kind == "floats" && x.is_array()) {
      std::vector<double> out;
      for (size_t i = 0; i < x.size(); ++i) {
        auto f = Float(x[i], absl::StrCat(path, ".floats[", i, "]"));
        if (!f.ok()) return f.status();
        out.push_back(*f);
      }
      return hlir::Attribute(out);
    }
    if (kind == "shape") {
      auto shape = Shape(x, path + ".shape");
      if (!shape.ok()) return shape.status();
      return hlir::Attribute(*shape);
    }
    return Error(path, "unknown attribute kind '" + kind + "' or a value of another type (got " +
                           Got(x) + "; kinds: bool, int, float, string, ints, floats, shape)");
  }

  absl::StatusOr<hlir::Shape> Shape(const json& v, const std::string& path) {
    if (!v.is_array())
      return Error(path, "a shape is an array of sizes and symbol names, got " + Got(v));
    hlir::Shape out;
    for (size_t i = 0; i < v.size(); ++i) {
      const json& d = v[i];
      bool size = d.is_number_unsigned() || (d.is_number_integer() && d.get<int64_t>() >= 0);
      if (size && d.get<uint64_t>() <= kMaxDim) {
        out.push_back(hlir::Dim::Known(d.get<int64_t>()));
      } else if (d.is_string() && !d.get_ref<const std::string&>().empty()) {
        // Text that is no polynomial ("n m") is one opaque symbol, as names always were.
        auto parsed = hlir::Dim::Parse(d.get_ref<const std::string&>());
        const hlir::Dim dim = parsed.ok() ? *parsed : hlir::Dim::Symbol(d.get<std::string>());
        if (!dim.is_symbolic() && (dim.value < 0 || static_cast<uint64_t>(dim.value) > kMaxDim)) {
          return Error(absl::StrCat(path, "[", i, "]"),
                       absl::StrCat("a dim is a size from 0 to ", kMaxDim, ", got ", Got(d)));
        }
        out.push_back(dim);
      } else {
        return Error(absl::StrCat(path, "[", i, "]"),
                     absl::StrCat("a dim is a size from 0 to ", kMaxDim,
                                  " (the int32 index range) or a symbol name, got ", Got(d)));
      }
    }
    return out;
  }

  /// "symbols": {"s0": {"min": 2, "max": 512}}: each a symbol of an input's dims, each bound
  /// in [0, INT32_MAX] (symbolic sizes are 32-bit), min <= max; either may be left out.
  absl::StatusOr<std::map<std::string, SymbolRange>> Symbols(const json& v, const Program& p) {
    if (!v.is_object()) return Error("$.symbols", "expected an object, got " + Got(v));
    const std::set<std::string> bound_symbols = BoundSymbols(p);
    std::map<std::string, SymbolRange> out;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string path = "$.symbols." + it.key();
      if (!it.value().is_object()) return Error(path, "expected an object, got " + Got(it.value()));
      for (auto key = it.value().begin(); key != it.value().end(); ++key) {
        if (key.key() != "min" && key.key() != "max") {
          return Error(path, "unknown key '" + key.key() + "' (a bound is \"min\" or \"max\")");
        }
      }
      SymbolRange range;
      for (auto [key, bound] : {std::pair{"min", &range.min}, std::pair{"max", &range.max}}) {
        if (!it.value().contains(key)) continue;
        auto b = Int64(it.value().at(key), path + "." + key);
        if (!b.ok()) return b.status();
        *bound = *b;
      }
      std::string problem = SymbolRangeProblem(bound_symbols, it.key(), range);
      if (!problem.empty()) return Error(path, problem);
      out[it.key()] = range;
    }
    return out;
  }

  absl::StatusOr<std::vector<std::string>> Names(const json& obj, const std::string& key,
                                                 const std::string& path) {
    auto arr = Field(obj, key, path, json::value_t::array);
    if (!arr.ok()) return arr.status();
    std::vector<std::string> out;
    for (size_t i = 0; i < (*arr)->size(); ++i) {
      const json& e = (**arr)[i];
      if (!e.is_string())
        return Error(absl::StrCat(path, ".", key, "[", i, "]"), "expected a name, got " + Got(e));
      out.push_back(e.get<std::string>());
    }
    return out;
  }
};

}  // namespace

std::string ProgramToJson(const Program& program) {
  json j;
  j["format"] = "cinn_like.program";
  j["version"] = kProgramJsonVersion;
  j["inputs"] = json::array();
  for (auto& in : program.inputs) {
    j["inputs"].push_back(json{{"name", in.name},
                               {"dtype", hlir::DTypeName(in.desc.dtype)},
                               {"shape", ShapeToJson(in.desc.shape)}});
  }
  j["instructions"] = json::array();
  for (auto& inst : program.instructions) {
    json attrs = json::object();
    for (auto& [name, value] : inst.attrs) attrs[name] = AttrToJson(value);
    j["instructions"].push_back(json{
        {"op", inst.op}, {"inputs", inst.inputs}, {"outputs", inst.outputs}, {"attrs", attrs}});
  }
  j["outputs"] = program.outputs;
  if (!program.symbols.empty()) {
    json symbols = json::object();
    for (const auto& [name, range] : program.symbols) {
      symbols[name] = json{{"min", range.min}, {"max", range.max}};
    }
    j["symbols"] = symbols;
  }
  return j.dump(1);
}

absl::StatusOr<Program> ProgramFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  Reader r;
  if (j.is_discarded()) return r.Error("$", "not valid JSON");
  const bool tagged = j.is_object() && j.contains("format") && j.at("format").is_string() &&
                      j.at("format").get_ref<const std::string&>() == "cinn_like.program";
  if (!tagged) {
    return r.Error("$", "not a cinn_like program (field \"format\" must be \"cinn_like.program\")");
  }
  auto version = r.Field(j, "version", "$", json::value_t::number_integer);
  if (!version.ok()) return version.status();
  auto v = r.Int64(**version, "$.version");
  if (!v.ok()) return v.status();
  if (*v < 1 || *v > kProgramJsonVersion) {
    return r.Error("$.version", absl::StrCat("version ", *v,
                                             " is not supported; this build reads versions 1 to ",
                                             kProgramJsonVersion));
  }
  Program p;
  auto inputs = r.Field(j, "inputs", "$", json::value_t::array);
  if (!inputs.ok()) return inputs.status();
  for (size_t i = 0; i < (*inputs)->size(); ++i) {
    const json& e = (**inputs)[i];
    std::string path = absl::StrCat("$.inputs[", i, "]");
    auto name = r.Field(e, "name", path, json::value_t::string);
    if (!name.ok()) return name.status();
    auto dtype_name = r.Field(e, "dtype", path, json::value_t::string);
    if (!dtype_name.ok()) return dtype_name.status();
    auto dtype = hlir::ParseDType((*dtype_name)->get<std::string>());
    if (!dtype.ok()) return r.Error(path + ".dtype", std::string(dtype.status().message()));
    if (!e.contains("shape")) return r.Error(path, "missing field 'shape'");
    auto shape = r.Shape(e.at("shape"), path + ".shape");
    if (!shape.ok()) return shape.status();
    p.inputs.push_back(InputDecl{(*name)->get<std::string>(), hlir::TensorDesc{*dtype, *shape}});
  }
  auto insts = r.Field(j, "instructions", "$", json::value_t::array);
  if (!insts.ok()) return insts.status();
  for (size_t i = 0; i < (*insts)->size(); ++i) {
    const json& e = (**insts)[i];
    std::string path = absl::StrCat("$.instructions[", i, "]");
    Instruction inst;
    auto op = r.Field(e, "op", path, json::value_t::string);
    if (!op.ok()) return op.status();
    inst.op = (*op)->get<std::string>();
    auto in = r.Names(e, "inputs", path);
    if (!in.ok()) return in.status();
    inst.inputs = *in;
    auto out = r.Names(e, "outputs", path);
    if (!out.ok()) return out.status();
    inst.outputs = *out;
    if (e.contains("attrs")) {
      const json& attrs = e.at("attrs");
      if (!attrs.is_object())
        return r.Error(path + ".attrs", "expected an object, got " + Reader::Got(attrs));
      for (auto it = attrs.begin(); it != attrs.end(); ++it) {
        auto a = r.Attr(it.value(), path + ".attrs." + it.key());
        if (!a.ok()) return a.status();
        inst.attrs[it.key()] = *a;
      }
    }
    p.instructions.push_back(std::move(inst));
  }
  auto outs = r.Names(j, "outputs", "$");
  if (!outs.ok()) return outs.status();
  p.outputs = *outs;
  if (j.contains("symbols")) {
    auto symbols = r.Symbols(j.at("symbols"), p);
    if (!symbols.ok()) return symbols.status();
    p.symbols = *symbols;
  }
  return p;
}

}  // namespace cinn_like::frontend
