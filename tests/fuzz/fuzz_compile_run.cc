/// \file Fuzz target: whole compiles on x86, structure-aware. The bytes choose a Program of one
/// to three ops, each taken from the op table (tests/op_cases.h) or by name from the op registry,
/// then mutated: dtypes, shapes (ranks 0 to 4, sizes 0, 1, primes, symbols bound to 0 or more),
/// attributes at their edges, added or dropped attributes and inputs, ops chained on earlier
/// outputs. The Program goes through its JSON form to cinn_like_compile (what a framework calls),
/// runs on random inputs through the C API and is compared with the reference interpreter, with
/// the op table's tolerances (per dtype; oscillating ops and quadratures as the table has
/// them). An error status (at build, compile or call) is fine; a crash, a sanitizer report or a
/// result off by more than the tolerance is a finding: the target aborts, printing the program.
/// The bytes pick op cases by their index in the table, so a new op case gives every saved
/// input (corpus and crashers) another program: a fixed finding's regression test is the op case
/// or program test added with its fix; its crasher file stays as one more input.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "cinn_like/c_api.h"
#include "frontend/net_builder.h"
#include "frontend/program_json.h"
#include "hlir/op.h"
#include "hlir/reference_interpreter.h"
#include "ir/flags.h"
#include "tests/fuzz/fuzz_input.h"
#include "tests/op_cases.h"

namespace cinn_like::fuzz {
namespace {

using frontend::NetBuilder;
using frontend::Var;
using hlir::Attribute;
using testing::Domain;
using testing::OpCase;

/// Every tensor of a generated program stays this small, so a run takes milliseconds.
constexpr int64_t kMaxElements = 1 << 12;

const std::vector<OpCase>& Cases() {
  static const std::vector<OpCase> cases = testing::AllOpCases();
  return cases;
}

/// Every attribute the op table uses, by name, for adding one an op does not expect.
const std::vector<std::pair<std::string, Attribute>>& AttributePool() {
  static const auto pool = [] {
    std::map<std::string, Attribute> seen;
    for (const OpCase& c : Cases()) {
      for (const auto& [name, value] : c.attrs) seen.emplace(name, value);
    }
    return std::vector<std::pair<std::string, Attribute>>(seen.begin(), seen.end());
  }();
  return pool;
}

const std::vector<hlir::DType> kDTypes = {
    hlir::DType::kBool,    hlir::DType::kInt8,   hlir::DType::kInt16,   hlir::DType::kInt32,
    hlir::DType::kInt64,   hlir::DType::kUInt8,  hlir::DType::kFloat16, hlir::DType::kBFloat16,
    hlir::DType::kFloat32, hlir::DType::kFloat64};
const std::vector<int64_t> kSizes = {0, 1, 1, 2, 3, 4, 5, 7, 8, 13, 17, 31, 64};
const std::vector<std::string> kSymbols = {"n", "m"};
const std::vector<int64_t> kIntEdges = {0,
                                        1,
                                        -1,
                                        2,
                                        -2,
                                        3,
                                        4,
                                        5,
                                        7,
                                        -5,
                                        64,
                                        1000,
                                        int64_t{1} << 31,
                                        -(int64_t{1} << 31),
                                        int64_t{1} << 32,
                                        int64_t{1} << 40,
                                        int64_t{1} << 62,
                                        std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min()};
const std::vector<double> kFloatEdges = {0.0,
                                         -0.0,
                                         1.0,
                                         -1.0,
                                         0.5,
                                         1e-30,
                                         1e30,
                                         1e308,
                                         -1e308,
                                         std::numeric_limits<double>::infinity(),
                                         -std::numeric_limits<double>::infinity(),
                                         std::numeric_limits<double>::quiet_NaN(),
                                         2147483648.0,
                                         9.3e18};
const std::vector<std::string> kStrings = {
    "",      "none",  "tanh",    "floor",    "trunc",   "bool",    "int8", "int16", "int32",
    "int64", "uint8", "float16", "bfloat16", "float32", "float64", "NCHW", "x"};
const std::vector<Domain> kDomains = {Domain::kUniform,  Domain::kPositive, Domain::kHalves,
                                      Domain::kSmallInt, Domain::kWithNaN,  Domain::kWide,
                                      Domain::kIndex,    Domain::kNearOne,  Domain::kUnit,
                                      Domain::kSpecial,  Domain::kIntEdges};

int64_t MutateInt(int64_t v, FuzzInput& in) {
  switch (in.Range(0, 2)) {
    case 0:
      return in.Pick(kIntEdges);
    case 1:
      return v + in.Range(-3, 3);
    default:
      return static_cast<int64_t>(in.Bits(8));
  }
}

double MutateFloat(FuzzInput& in) { return in.OneIn(4) ? in.Double() : in.Pick(kFloatEdges); }

Attribute MutateAttribute(const Attribute& a, FuzzInput& in) {
  if (auto* b = std::get_if<bool>(&a)) return !*b;
  if (auto* i = std::get_if<int64_t>(&a)) return MutateInt(*i, in);
  if (std::holds_alternative<double>(a)) return MutateFloat(in);
  if (std::holds_alternative<std::string>(a)) return in.Pick(kStrings);
  if (auto* list = std::get_if<std::vector<int64_t>>(&a)) {
    std::vector<int64_t> v = *list;
    switch (in.Range(0, 3)) {
      case 0:
        if (!v.empty()) v.pop_back();
        break;
      case 1:
        v.push_back(in.Pick(kIntEdges));
        break;
      case 2:
        v.clear();
        break;
      default:
        if (!v.empty()) {
          int64_t& e = v[in.Range(0, static_cast<int64_t>(v.size()) - 1)];
          e = MutateInt(e, in);
        }
    }
    return v;
  }
  std::vector<double> v = std::get<std::vector<double>>(a);
  if (in.Bool() && !v.empty()) {
    v[in.Range(0, static_cast<int64_t>(v.size()) - 1)] = MutateFloat(in);
  } else if (in.Bool()) {
    v.push_back(MutateFloat(in));
  } else if (!v.empty()) {
    v.pop_back();
  }
  return v;
}

hlir::Shape RandomShape(FuzzInput& in) {
  hlir::Shape s;
  int rank = static_cast<int>(in.Range(0, 4));
  for (int d = 0; d < rank; ++d) {
    s.push_back(in.OneIn(6) ? hlir::Dim::Symbol(in.Pick(kSymbols))
                            : hlir::Dim::Known(in.Pick(kSizes)));
  }
  return s;
}

hlir::Shape MutateShape(hlir::Shape s, FuzzInput& in) {
  switch (in.Range(0, 3)) {
    case 0:
      return RandomShape(in);
    case 1:
      if (!s.empty()) {
        s[in.Range(0, static_cast<int64_t>(s.size()) - 1)] = hlir::Dim::Known(in.Pick(kSizes));
      }
      return s;
    case 2:
      if (!s.empty()) s.pop_back();
      return s;
    default:
      s.insert(s.begin(), hlir::Dim::Known(in.Pick(kSizes)));
      return s;
  }
}

/// The case `c` with the mutations the bytes choose.
void MutateCase(OpCase& c, FuzzInput& in) {
  if (in.OneIn(16)) c.op = in.Pick(hlir::OpRegistry::Global().Names());
  if (in.OneIn(16) && !c.shapes.empty()) {
    c.shapes.pop_back();
    c.dtypes.pop_back();
    c.domains.pop_back();
  } else if (in.OneIn(16)) {
    c.shapes.push_back(c.shapes.empty() ? RandomShape(in) : c.shapes.back());
    c.dtypes.push_back(c.dtypes.empty() ? in.Pick(kDTypes) : c.dtypes.back());
    c.domains.push_back(Domain::kUniform);
  }
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    if (in.OneIn(6)) c.dtypes[i] = in.Pick(kDTypes);
    if (in.OneIn(4)) c.shapes[i] = MutateShape(c.shapes[i], in);
    if (in.OneIn(12)) c.domains[i] = in.Pick(kDomains);
  }
  for (auto& [name, value] : c.attrs) {
    if (in.OneIn(4)) value = MutateAttribute(value, in);
  }
  if (in.OneIn(10) && !c.attrs.empty()) {
    auto it = c.attrs.begin();
    std::advance(it, in.Range(0, static_cast<int64_t>(c.attrs.size()) - 1));
    c.attrs.erase(it);
  }
  if (in.OneIn(10)) {
    const auto& [name, value] = in.Pick(AttributePool());
    c.attrs[name] = in.Bool() ? value : MutateAttribute(value, in);
  }
}

/// Concrete sizes of `shape` with the symbols bound; -1 when a symbol is unbound.
std::vector<int64_t> Bind(const hlir::Shape& shape, const std::map<std::string, int64_t>& symbols) {
  std::vector<int64_t> dims;
  for (const hlir::Dim& d : shape) {
    auto it = d.is_symbolic() ? symbols.find(d.symbol) : symbols.end();
    dims.push_back(!d.is_symbolic() ? d.value : it == symbols.end() ? -1 : it->second);
  }
  return dims;
}

/// Whether a tensor of these sizes is small enough to run (no overflow on the way).
bool Small(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || d > kMaxElements) return false;
    n *= d;
    if (n > kMaxElements) return false;
  }
  return true;
}

/// Whether values near each other are read alike (no truncation, rounding or indexing).
bool Continuous(Domain d) {
  switch (d) {
    case Domain::kHalves:
    case Domain::kSmallInt:
    case Domain::kIndex:
    case Domain::kIntEdges:
      return false;
    default:
      return true;
  }
}

[[noreturn]] void Finding(const std::string& what, const std::string& program,
                          const std::map<std::string, int64_t>& symbols, uint64_t seed) {
  std::fprintf(stderr, "fuzz_compile_run: %s\nsymbols:", what.c_str());
  for (const auto& [name, value] : symbols)
    std::fprintf(stderr, " %s=%lld", name.c_str(), static_cast<long long>(value));
  std::fprintf(stderr, "\ninput seed: %llu\nprogram:\n%s\n", static_cast<unsigned long long>(seed),
               program.c_str());
  std::abort();
}

/// Whether float `v` is one `FillDomain` makes for a continuous domain `d`: an op case's
/// tolerance holds on its domain only (sin of -500 in float16 turns one ulp of its input, 0.25,
/// into any value).
bool InDomain(double v, Domain d) {
  switch (d) {
    case Domain::kPositive:
      return v >= 0.1 && v <= 3;
    case Domain::kWide:
      return v >= -300 && v <= 300;
    case Domain::kHuge:
      return std::fabs(v) <= 1e20;
    case Domain::kLarge:
      return std::fabs(v) >= 300 && std::fabs(v) <= 3e6;
    case Domain::kNearOne:
      return v >= 0.5 && v <= 1.5;
    case Domain::kUnit:
      return v > -1 && v < 1;
    case Domain::kWithNaN:
      return std::isnan(v) || (v >= -2 && v <= 2);
    case Domain::kSpecial:
      return !std::isfinite(v) || (v >= -2 && v <= 2);
    default:
      return v >= -2 && v <= 2;
  }
}

void RunOne(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  std::map<std::string, int64_t> symbols;
  for (const std::string& s : kSymbols) symbols[s] = in.Pick(kSizes);
  const uint64_t seed = in.Bits(4);
  cinn_like_set_flag("cinn_like_fusion", in.OneIn(4) ? "false" : "true");

  // The program: ops chained on earlier outputs or on fresh inputs.
  NetBuilder b;
  std::vector<Var> vars;
  std::map<std::string, Domain> domains;  // per graph input
  std::vector<std::string> sum_like_ops;
  // Values computed from an oscillating op's output, or a quadrature's, take that op's looser
  // comparison, as in the op table (testing::Oscillating, testing::ByQuadrature).
  std::set<std::string> oscillating, by_quadrature;
  std::vector<std::pair<Var, Domain>> chained;  // an earlier output and the domain it feeds
  const int num_ops = static_cast<int>(in.Range(1, 3));
  std::vector<Var> last;
  for (int k = 0; k < num_ops; ++k) {
    OpCase c = in.Pick(Cases());
    MutateCase(c, in);
    std::vector<Var> args;
    for (size_t i = 0; i < c.shapes.size(); ++i) {
      // An earlier output feeds only an input of a continuous domain: one the op reads as a
      // discrete value (a truncated degree, an index, round's ties) is compared only on the
      // values its domain makes, since a last-bit difference upstream legitimately flips it.
      const Domain domain = i < c.domains.size() ? c.domains[i] : Domain::kUniform;
      if (!vars.empty() && Continuous(domain) && in.OneIn(3)) {
        args.push_back(in.Pick(vars));
        chained.push_back({args.back(), domain});
        continue;
      }
      std::string name = "in" + std::to_string(domains.size());
      args.push_back(b.CreateInput(c.dtypes[i], c.shapes[i], name));
      domains[name] = domain;
    }
    last = b.Op(c.op, args, c.attrs);
    if (!b.status().ok()) return;  // an inference error is a fine answer
    if (testing::SumLike(c.op)) sum_like_ops.push_back(c.op);
    auto reads = [&](const std::set<std::string>& names) {
      return std::any_of(args.begin(), args.end(),
                         [&](const Var& a) { return names.count(a.name) > 0; });
    };
    const bool osc = testing::Oscillating(c.op) || reads(oscillating);
    const bool quad = testing::ByQuadrature(c.op) || reads(by_quadrature);
    for (const Var& v : last) {
      if (osc) oscillating.insert(v.name);
      if (quad) by_quadrature.insert(v.name);
    }
    vars.insert(vars.end(), last.begin(), last.end());
  }
  // A float output is as exact as the least precise float op on the way to it (float32 cast to
  // float64 carries float32's error): the loosest tolerance of the program's float values.
  testing::Tolerance chain{0, 0};
  for (const Var& v : vars) {
    if (!Small(Bind(v.desc.shape, symbols))) return;
    if (!hlir::IsFloat(v.desc.dtype)) continue;
    const testing::Tolerance t = testing::ToleranceFor(v.desc.dtype);
    chain = {std::max(chain.rtol, t.rtol), std::max(chain.atol, t.atol)};
  }
  std::set<std::string> marked;
  auto mark = [&](const Var& v) {
    if (marked.insert(v.name).second) b.MarkOutput(v);
  };
  for (const Var& v : last) mark(v);
  if (!vars.empty() && vars.size() > last.size() && in.OneIn(3)) mark(vars[0]);
  for (const auto& [v, domain] : chained) mark(v);  // its values are checked against the domain
  auto program = b.Build();
  if (!program.ok()) return;
  const std::string json = frontend::ProgramToJson(*program);

  cinn_like_module module = nullptr;
  if (cinn_like_compile(json.c_str(), "x86", "f", &module) != 0) return;
  std::unique_ptr<cinn_like_module_s, void (*)(cinn_like_module)> owner(module,
                                                                        cinn_like_module_free);
  cinn_like_function fn = nullptr;
  if (cinn_like_module_lookup(module, "f", &fn) != 0) {
    Finding(std::string("lookup failed after a compile: ") + cinn_like_get_last_error(), json,
            symbols, seed);
  }

  // Inputs, the reference on them and on their magnitudes, then the call.
  auto graph = frontend::BuildGraph(*program);
  if (!graph.ok()) Finding("BuildGraph failed after a compile", json, symbols, seed);
  std::mt19937_64 rng(seed);
  std::vector<std::unique_ptr<testing::TypedTensor>> owned;
  std::vector<DLTensor*> args;
  std::vector<hlir::HostTensor> ref_in, abs_in;
  for (int v : graph->inputs()) {
    const hlir::Value& value = graph->values()[v];
    std::vector<int64_t> dims = Bind(value.desc.shape, symbols);
    owned.push_back(std::make_unique<testing::TypedTensor>(hlir::ToIrType(value.desc.dtype), dims));
    testing::FillDomain(*owned.back(), domains[value.name], rng);
    hlir::HostTensor h(value.desc.dtype, dims);
    for (int64_t k = 0; k < h.size(); ++k) h.data[k] = owned.back()->Get(k);
    ref_in.push_back(h);
    for (double& x : h.data) x = std::fabs(x);
    abs_in.push_back(h);
    args.push_back(owned.back()->dl());
  }
  std::vector<testing::TypedTensor*> outs;
  for (int v : graph->outputs()) {
    const hlir::Value& value = graph->values()[v];
    owned.push_back(std::make_unique<testing::TypedTensor>(hlir::ToIrType(value.desc.dtype),
                                                           Bind(value.desc.shape, symbols)));
    for (int64_t k = 0; k < owned.back()->size(); ++k) owned.back()->Set(k, -12345);  // poison
    outs.push_back(owned.back().get());
    args.push_back(owned.back()->dl());
  }
  int rc = cinn_like_call(fn, args.data(), static_cast<int32_t>(args.size()), nullptr);
  auto want = hlir::RunReference(*graph, ref_in);
  // The reference refusing its inputs (an index out of range, say) leaves nothing to compare,
  // whatever the call did; a call failing where the reference ran is a finding, and so is the
  // reference failing inside itself (an internal error: an exception from a library routine).
  if (absl::IsInternal(want.status())) Finding(want.status().ToString(), json, symbols, seed);
  if (!want.ok()) return;
  if (rc != 0) {
    Finding(std::string("the call failed where the reference ran: ") + cinn_like_get_last_error(),
            json, symbols, seed);
  }
  // An earlier output is compared downstream only where its values lie in the domain it feeds.
  for (const auto& [v, domain] : chained) {
    for (size_t o = 0; o < want->size(); ++o) {
      if (graph->values()[graph->outputs()[o]].name != v.name) continue;
      if (!hlir::IsFloat((*want)[o].dtype)) continue;
      for (double x : (*want)[o].data) {
        if (!InDomain(x, domain)) return;
      }
    }
  }
  auto scale = sum_like_ops.empty() ? want : hlir::RunReference(*graph, abs_in);
  if (!scale.ok()) scale = want;
  for (size_t o = 0; o < want->size(); ++o) {
    const hlir::HostTensor& w = (*want)[o];
    const std::string& name = graph->values()[graph->outputs()[o]].name;
    testing::Tolerance tol = testing::ToleranceFor(w.dtype);
    if (hlir::IsFloat(w.dtype))
      tol = {std::max(tol.rtol, chain.rtol), std::max(tol.atol, chain.atol)};
    if (by_quadrature.count(name) && w.dtype == hlir::DType::kFloat64) tol.rtol *= 10;
    double amplitude = 0;  // an oscillating value's error is its amplitude's, near a zero too
    for (int64_t k = 0; oscillating.count(name) && k < w.size(); ++k) {
      if (std::isfinite(w.data[k])) amplitude = std::max(amplitude, std::fabs(w.data[k]));
    }
    for (int64_t k = 0; k < w.size(); ++k) {
      double g = outs[o]->Get(k), e = w.data[k];
      double s = std::max({std::fabs(e), std::fabs((*scale)[o].data[k]), amplitude});
      bool ok = (std::isnan(g) && std::isnan(e)) || g == e ||
                (std::isfinite(e) && std::fabs(g - e) <= tol.atol + tol.rtol * s);
      if (!ok) {
        for (size_t i = 0; i < ref_in.size(); ++i) {  // the inputs' first values, to reproduce
          std::fprintf(stderr, "input %zu:", i);
          for (int64_t j = 0; j < std::min<int64_t>(ref_in[i].size(), 16); ++j) {
            std::fprintf(stderr, " %.17g", ref_in[i].data[j]);
          }
          std::fprintf(stderr, "\n");
        }
        char values[96];
        std::snprintf(values, sizeof(values), ": got %.17g, want %.17g", g, e);
        Finding("output " + std::to_string(o) + " element " + std::to_string(k) + values, json,
                symbols, seed);
      }
    }
  }
}

}  // namespace
}  // namespace cinn_like::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FLAGS_cinn_like_cache = false;     // every input compiled: a cache hit would skip what is fuzzed
  cinn_like::fuzz::AttributePool();  // the op table and the registry, before the first input
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cinn_like::fuzz::RunOne(data, size);
  return 0;
}
