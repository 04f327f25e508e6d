/// \file Program <-> JSON with nlohmann::json.
#include "frontend/program_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace cinn_like::frontend {
namespace {

using nlohmann::json;

json FloatToJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
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
  };
  return std::visit(Visitor{}, a);
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

/// Reading with errors that carry the JSON path.
class Reader {
 public:
  absl::Status Error(const std::string& path, const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("program JSON: ", path, ": ", what));
  }

  absl::StatusOr<const json*> Field(const json& obj, const std::string& key,
                                    const std::string& path, json::value_t type) {
    if (!obj.is_object() || !obj.contains(key)) return Error(path, "missing field '" + key + "'");
    const json& v = obj.at(key);
    bool ok = v.type() == type || (type == json::value_t::number_integer && v.is_number_unsigned());
    if (!ok)
      return Error(path + "." + key,
                   std::string("expected ") + TypeName(type) + ", got " + v.type_name());
    return &v;
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
      std::string s = v.get<std::string>();
      if (s == "nan") return NAN;
      if (s == "inf") return INFINITY;
      if (s == "-inf") return -INFINITY;
    }
    return Error(path, "expected a number or \"inf\", \"-inf\", \"nan\"");
  }

  absl::StatusOr<hlir::Attribute> Attr(const json& v, const std::string& path) {
    if (!v.is_object() || v.size() != 1)
      return Error(path, "an attribute is an object with one kind key");
    const std::string& kind = v.begin().key();
    const json& x = v.begin().value();
    if (kind == "bool" && x.is_boolean()) return hlir::Attribute(x.get<bool>());
    if (kind == "int" && x.is_number_integer()) return hlir::Attribute(x.get<int64_t>());
    if (kind == "string" && x.is_string()) return hlir::Attribute(x.get<std::string>());
    if (kind == "float") {
      auto f = Float(x, path + ".float");
      if (!f.ok()) return f.status();
      return hlir::Attribute(*f);
    }
    if (kind == "ints" && x.is_array()) {
      std::vector<int64_t> out;
      for (auto& e : x) {
        if (!e.is_number_integer()) return Error(path + ".ints", "expected integers");
        out.push_back(e.get<int64_t>());
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
    return Error(path, "unknown attribute kind '" + kind +
                           "' or wrong value (kinds: bool, int, float, string, ints, floats)");
  }

  absl::StatusOr<hlir::Shape> Shape(const json& v, const std::string& path) {
    if (!v.is_array()) return Error(path, "a shape is an array of sizes and symbol names");
    hlir::Shape out;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i].is_number_integer() && v[i].get<int64_t>() >= 0) {
        out.push_back(hlir::Dim::Known(v[i].get<int64_t>()));
      } else if (v[i].is_string() && !v[i].get<std::string>().empty()) {
        out.push_back(hlir::Dim::Symbol(v[i].get<std::string>()));
      } else {
        return Error(absl::StrCat(path, "[", i, "]"), "a dim is a size >= 0 or a symbol name");
      }
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
        return Error(absl::StrCat(path, ".", key, "[", i, "]"), "expected a name");
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
  return j.dump(1);
}

absl::StatusOr<Program> ProgramFromJson(const std::string& text) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  Reader r;
  if (j.is_discarded()) return r.Error("$", "not valid JSON");
  // (json::value throws when the field is there with another type: test the type first.)
  if (!j.is_object() || !j.contains("format") || !j.at("format").is_string() ||
      j.at("format").get<std::string>() != "cinn_like.program") {
    return r.Error("$", "not a cinn_like program (field \"format\" must be \"cinn_like.program\")");
  }
  auto version = r.Field(j, "version", "$", json::value_t::number_integer);
  if (!version.ok()) return version.status();
  int64_t v = (*version)->get<int64_t>();
  if (v < 1 || v > kProgramJsonVersion) {
    return r.Error("$.version",
                   absl::StrCat("version ", v, " is not supported; this build reads versions 1 to ",
                                kProgramJsonVersion));
  }
  Program p;
  auto inputs = r.Field(j, "inputs", "$", json::value_t::array);
  if (!inputs.ok()) return inputs.status();
  for (size_t i = 0; i < (*inputs)->size(); ++i) {
    const json& e = (**inputs)[i];
    std::string path = absl::StrCat("inputs[", i, "]");
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
    std::string path = absl::StrCat("instructions[", i, "]");
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
      if (!attrs.is_object()) return r.Error(path + ".attrs", "expected an object");
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
  return p;
}

}  // namespace cinn_like::frontend
