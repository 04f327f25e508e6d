/// \file The tuner: knobs timed per group, choices remembered in memory and in a file.
#include "cinn_like/autotune.h"

#include <glog/logging.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "backends/compiler.h"
#include "cinn_like/self_check.h"
#include "cinn_like/tensor_transfer.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/group_graph.h"
#include "ir/device_properties.h"
#include "ir/flags.h"
#include "runtime/cinn_like_runtime.h"
#ifdef CINN_LIKE_WITH_CUDA
#include "runtime/cuda/cuda_runtime.h"
#endif

namespace cinn_like {
namespace {

constexpr int kCacheVersion = 1;

struct Choice {
  std::string knob;
  int value = 0;
};

/// FNV-1a, 64 bits, in hex: the same text gives the same key in every process and build.
std::string Fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(h));
  return out;
}

/// The choices: in memory, and in the file of cinn_like_autotune_cache (read once per path,
/// rewritten whole after each new choice: a temporary file, then a rename).
class TuningMemory {
 public:
  static TuningMemory& Global() {
    static TuningMemory* memory = new TuningMemory;
    return *memory;
  }

  std::optional<Choice> Find(const std::string& key) {
    std::lock_guard<std::mutex> lock(mu_);
    Load();
    auto it = choices_.find(key);
    if (it == choices_.end()) return std::nullopt;
    ++stats_.groups_remembered;
    return it->second;
  }

  void Remember(const std::string& key, const Choice& c, int64_t trials) {
    std::lock_guard<std::mutex> lock(mu_);
    Load();
    choices_[key] = c;
    ++stats_.groups_timed;
    stats_.trials += trials;
    if (!path_.empty()) Save();
  }

  void Forget() {
    std::lock_guard<std::mutex> lock(mu_);
    choices_.clear();
    loaded_ = false;
  }

  TuningStats stats() {
    std::lock_guard<std::mutex> lock(mu_);
    return stats_;
  }

 private:
  /// Reads the file when the flag names one not read yet; a missing file is an empty one, a
  /// malformed one is ignored (logged) and replaced at the next save.
  void Load() {
    const std::string path = StringFlag("cinn_like_autotune_cache");
    if (loaded_ && path == path_) return;
    loaded_ = true;
    path_ = path;
    if (path.empty()) return;
    std::ifstream in(path);
    if (!in) return;
    nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || j.value("version", 0) != kCacheVersion ||
        !j.contains("choices") || !j["choices"].is_object()) {
      LOG(WARNING) << "cinn_like_autotune_cache: " << path << " is not a tuning cache of version "
                   << kCacheVersion << "; ignored";
      return;
    }
    for (const auto& [key, c] : j["choices"].items()) {
      if (c.is_object() && c.contains("knob") && c["knob"].is_string() && c.contains("value") &&
          c["value"].is_number_integer()) {
        choices_[key] = Choice{c["knob"].get<std::string>(), c["value"].get<int>()};
      }
    }
  }

  void Save() {
    nlohmann::json choices = nlohmann::json::object();
    for (const auto& [key, c] : choices_) choices[key] = {{"knob", c.knob}, {"value", c.value}};
    const std::string tmp = absl::StrCat(path_, ".tmp.", getpid());
    {
      std::ofstream out(tmp);
      out << nlohmann::json{{"version", kCacheVersion}, {"choices", choices}}.dump(1) << "\n";
      if (!out) {
        LOG(WARNING) << "cinn_like_autotune_cache: cannot write " << tmp;
        return;
      }
    }
    if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
      LOG(WARNING) << "cinn_like_autotune_cache: cannot rename " << tmp << " to " << path_;
      std::remove(tmp.c_str());
    }
  }

  std::mutex mu_;
  bool loaded_ = false;
  std::string path_;
  std::map<std::string, Choice> choices_;
  TuningStats stats_;
};

bool HasSymbolicDims(const hlir::Graph& g) {
  for (const hlir::Value& v : g.values()) {
    for (const hlir::Dim& d : v.desc.shape) {
      if (d.is_symbolic()) return true;
    }
  }
  return false;
}

absl::Status Synchronize(const ir::Target& target) {
#ifdef CINN_LIKE_WITH_CUDA
  if (target.is_nvgpu() && cinn_like_cuda_synchronize() != 0) {
    return absl::InternalError(cinn_like_get_last_error());
  }
#endif
  return absl::OkStatus();
}

/// Seconds per call of `one` compiled with its group's knob at `value`, on `args`: the best of
/// three batches of calls lasting about 2 ms each, after two warm-up calls.
absl::StatusOr<double> TimeValue(const hlir::FusedGraph& one, const ir::Target& target,
                                 const std::string& fname, int value,
                                 std::vector<DLTensor*>& args) {
  auto module = hlir::CompileFusedGraph(one, target, fname, {{0, value}});
  if (!module.ok()) return module.status();
  auto compiler = backends::Compiler::Create(target);
  if (!compiler.ok()) return compiler.status();
  absl::Status st = (*compiler)->Build(*module);
  if (!st.ok()) return st;
  auto fn = (*compiler)->Lookup(fname);
  if (!fn.ok()) return fn.status();
  auto call = [&]() -> absl::Status {
    if ((*fn)(args.data(), static_cast<int32_t>(args.size()), nullptr) != 0) {
      return absl::InternalError(cinn_like_get_last_error());
    }
    return absl::OkStatus();
  };
  using Clock = std::chrono::steady_clock;
  auto batch = [&](int calls) -> absl::StatusOr<double> {
    const auto start = Clock::now();
    for (int i = 0; i < calls; ++i) {
      absl::Status s = call();
      if (!s.ok()) return s;
    }
    absl::Status s = Synchronize(target);
    if (!s.ok()) return s;
    return std::chrono::duration<double>(Clock::now() - start).count() / calls;
  };
  auto once = batch(2);  // warm-up: first-call costs (module load, library plans)
  if (once.ok()) once = batch(1);
  if (!once.ok()) return once.status();
  const int calls = static_cast<int>(std::clamp(2e-3 / std::max(*once, 1e-7), 1.0, 200.0));
  double best = std::numeric_limits<double>::infinity();
  for (int b = 0; b < 3; ++b) {
    auto t = batch(calls);
    if (!t.ok()) return t.status();
    best = std::min(best, *t);
  }
  return best;
}

}  // namespace

TuningStats GetTuningStats() { return TuningMemory::Global().stats(); }

void ForgetTuning() { TuningMemory::Global().Forget(); }

absl::StatusOr<std::map<int, int>> TuneGroups(const hlir::FusedGraph& fused,
                                              const ir::Target& target, const std::string& name) {
  // Which groups have a knob: the tactics of the whole graph with every tactic's own values.
  std::vector<hlir::TacticChoice> tactics;
  auto untuned = hlir::CompileFusedGraph(fused, target, name, {}, &tactics);
  if (!untuned.ok()) return untuned.status();
  std::map<int, hlir::TuningKnob> knobs;
  for (const hlir::TacticChoice& c : tactics) {
    if (c.knob && c.group >= 0 && !knobs.count(c.group)) knobs[c.group] = *c.knob;
  }
  const ir::DeviceProperties& device = ir::DevicePropertiesOf(target);
  const std::string where = absl::StrCat(target.ToString(), " sms=", device.multiprocessors);
  std::map<int, int> values;
  std::string report;
  for (const auto& [group, knob] : knobs) {
    auto one = hlir::GroupGraph(fused, group);
    if (!one.ok()) return one.status();
    if (HasSymbolicDims(one->graph) || one->graph.outputs().empty()) continue;
    const std::string key =
        Fingerprint(absl::StrCat(hlir::StructuralKey(*one), "\n", where, "\n", knob.name));
    if (auto known = TuningMemory::Global().Find(key); known && known->knob == knob.name) {
      values[group] = known->value;
      absl::StrAppend(&report, "group ", group, " (", key, "): ", knob.name, " ", known->value,
                      " remembered\n");
      continue;
    }
    // The group's inputs at random, its outputs zero, on the device; kept for every value.
    SelfCheckOptions random;
    std::vector<hlir::HostTensor> hosts = RandomInputs(one->graph, random);
    for (int v : one->graph.outputs()) {
      std::vector<int64_t> dims;
      for (const hlir::Dim& d : one->graph.values()[v].desc.shape) dims.push_back(d.value);
      hosts.emplace_back(one->graph.values()[v].desc.dtype, dims);
    }
    std::vector<std::unique_ptr<DeviceTensor>> tensors;
    std::vector<DLTensor*> args;
    for (const hlir::HostTensor& h : hosts) {
      auto t = DeviceTensor::Create(h, DeviceOf(target));
      if (!t.ok()) return t.status();
      args.push_back((*t)->dl());
      tensors.push_back(std::move(*t));
    }
    std::optional<std::pair<double, int>> best;
    int64_t trials = 0;
    absl::StrAppend(&report, "group ", group, " (", key, "): ", knob.name);
    for (int value : knob.options) {
      const std::string fname = absl::StrCat(name, "_tune_g", group, "_", value);
      auto seconds = TimeValue(*one, target, fname, value, args);
      ++trials;
      if (!seconds.ok()) {
        LOG(WARNING) << "cinn_like_autotune: " << name << " group " << group << ", " << knob.name
                     << " " << value << ": " << seconds.status();
        absl::StrAppend(&report, " ", value, ": failed;");
        continue;
      }
      absl::StrAppend(&report, " ", value, ": ", *seconds * 1e3, " ms;");
      if (!best || *seconds < best->first) best = std::make_pair(*seconds, value);
    }
    if (!best) {
      absl::StrAppend(&report, " the tactic's own kept\n");
      continue;
    }
    absl::StrAppend(&report, " -> ", best->second, "\n");
    values[group] = best->second;
    TuningMemory::Global().Remember(key, Choice{knob.name, best->second}, trials);
  }
  DumpToFile(name + ".autotune.txt", report);
  return values;
}

}  // namespace cinn_like
