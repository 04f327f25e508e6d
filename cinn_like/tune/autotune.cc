/// \file The tuner: knobs timed per group, choices remembered in memory and in a file.
#include "cinn_like/tune/autotune.h"

#include <glog/logging.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "cinn_like/tune/group_timing.h"
#include "hlir/graph_compiler.h"
#include "hlir/pass/group_graph.h"
#include "ir/compile_options.h"
#include "ir/device_properties.h"
#include "ir/flags.h"
#include "runtime/files.h"

namespace cinn_like {
namespace {

constexpr int kCacheVersion = 1;

struct Choice {
  std::string knob;
  int value = 0;
};

/// Whether `text` is what a save may replace: a tuning cache, perhaps damaged or of another
/// version (a JSON object, or the start of one, that has a "choices" member). Anything else (a
/// user's file that the flag names by mistake) is left alone.
bool LooksLikeTuningCache(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{' &&
         text.find("\"choices\"") != std::string::npos;
}

/// The choices in a cache file's JSON, or an empty map (logged) for anything that is not a
/// tuning cache of this version: nothing in a malformed file is trusted.
std::map<std::string, Choice> ParseChoices(const std::string& text, const std::string& path) {
  std::map<std::string, Choice> out;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const bool valid = !j.is_discarded() && j.is_object() && j.contains("version") &&
                     j["version"].is_number_integer() && j["version"] == kCacheVersion &&
                     j.contains("choices") && j["choices"].is_object();
  if (!valid) {
    LOG(WARNING) << "cinn_like_autotune_cache: " << path << " is not a tuning cache of version "
                 << kCacheVersion << "; ignored";
    return out;
  }
  for (const auto& [key, c] : j["choices"].items()) {
    if (!c.is_object() || !c.contains("knob") || !c["knob"].is_string() || !c.contains("value") ||
        !c["value"].is_number_integer()) {
      continue;
    }
    const int64_t value = c["value"].get<int64_t>();
    if (value <= 0 || value > std::numeric_limits<int>::max()) continue;  // no knob's value
    out[key] = Choice{c["knob"].get<std::string>(), static_cast<int>(value)};
  }
  return out;
}

/// The choices: in memory, and in the file of cinn_like_autotune_cache (read when the flag
/// first names it; before each write read again and merged, so that processes sharing the
/// file keep each other's choices; written to a temporary file, then renamed).
class TuningMemory {
 public:
  static TuningMemory& Global() {
    static TuningMemory* memory = new TuningMemory;
    return *memory;
  }

  /// The choice of `key` when one is known for `knob` with a value among `options`; a choice
  /// the tactic does not offer (another build's, a hand-edited file's) is not used.
  std::optional<Choice> Find(const std::string& key, const hlir::TuningKnob& knob) {
    std::lock_guard<std::mutex> lock(mu_);
    Load();
    auto it = choices_.find(key);
    if (it == choices_.end() || it->second.knob != knob.name ||
        std::find(knob.options.begin(), knob.options.end(), it->second.value) ==
            knob.options.end()) {
      return std::nullopt;
    }
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
  /// Reads the file when the flag names one not read yet (another path: the choices held are
  /// forgotten, they were another file's); a missing file is an empty one.
  void Load() {
    const std::string path = StringFlag("cinn_like_autotune_cache");
    if (loaded_ && path == path_) return;
    if (loaded_) choices_.clear();
    loaded_ = true;
    path_ = path;
    if (path.empty()) return;
    if (auto text = runtime::ReadWholeFile(path)) choices_ = ParseChoices(*text, path);
  }

  void Save() {
    // Only a tuning cache is replaced: not a device, a directory, a FIFO, a link or a file of
    // another format.
    if (absl::Status replaceable = runtime::CheckReplaceable(path_); !replaceable.ok()) {
      LOG(WARNING) << "cinn_like_autotune_cache: " << replaceable.message();
      return;
    }
    // What other processes wrote since: theirs are kept too.
    if (auto text = runtime::ReadWholeFile(path_); text && !text->empty()) {
      if (!LooksLikeTuningCache(*text)) {
        LOG(WARNING) << "cinn_like_autotune_cache: refusing to overwrite " << path_
                     << ": it is not a tuning cache";
        return;
      }
      for (auto& [key, c] : ParseChoices(*text, path_)) choices_.emplace(key, c);
    }
    nlohmann::json choices = nlohmann::json::object();
    for (const auto& [key, c] : choices_) choices[key] = {{"knob", c.knob}, {"value", c.value}};
    absl::Status written = runtime::WriteFileAtomically(
        path_, nlohmann::json{{"version", kCacheVersion}, {"choices", choices}}.dump(1) + "\n");
    if (!written.ok()) LOG(WARNING) << "cinn_like_autotune_cache: " << written.message();
  }

  std::mutex mu_;
  bool loaded_ = false;
  std::string path_;
  std::map<std::string, Choice> choices_;
  TuningStats stats_;
};

/// Seconds per call of `one` compiled with its group's knob at `value`, on `args`
/// (SecondsPerCall).
absl::StatusOr<double> TimeValue(const hlir::FusedGraph& one, const ir::Target& target,
                                 const std::string& fname, const std::string& knob, int value,
                                 std::vector<DLTensor*>& args) {
  std::vector<hlir::TacticChoice> tactics;
  auto module = hlir::CompileFusedGraph(one, target, fname, {{0, value}}, &tactics);
  if (!module.ok()) return module.status();
  // The group alone must get the knob the whole graph offered, at `value`: else the time is
  // of another kernel.
  const bool applied = std::any_of(tactics.begin(), tactics.end(), [&](const auto& c) {
    return c.knob && c.knob->name == knob && c.knob->value == value;
  });
  if (!applied) {
    return absl::FailedPreconditionError(
        absl::StrCat("compiled alone, the group does not take ", knob, " ", value));
  }
  auto built = BuildFunction(*module, target, fname);
  if (!built.ok()) return built.status();
  return SecondsPerCall(*built, target, args);
}

}  // namespace

TuningStats GetTuningStats() { return TuningMemory::Global().stats(); }

void ForgetTuning() { TuningMemory::Global().Forget(); }

absl::StatusOr<std::map<int, int>> TuneGroups(const hlir::FusedGraph& fused,
                                              const std::vector<hlir::TacticChoice>& tactics,
                                              const ir::Target& target, const std::string& name) {
  // Which groups have a knob, and its value with every tactic's own choice.
  std::map<int, hlir::TuningKnob> knobs;
  for (const hlir::TacticChoice& c : tactics) {
    if (c.knob && c.group >= 0 && !knobs.count(c.group)) knobs[c.group] = *c.knob;
  }
  const ir::DeviceProperties& device = ir::DevicePropertiesOf(target);
  // What else decides a kernel's speed: the device's size and vector width, and the flags
  // that change generated code.
  const std::string where = absl::StrCat(target.ToString(), " sms=", device.multiprocessors,
                                         " vector_bytes=", device.vector_bytes,
                                         " fast_math=", ir::CurrentCompileOptions().fast_math,
                                         " extern_libs=", ir::CurrentCompileOptions().extern_libs);
  std::map<int, int> values;
  std::string report;
  for (const auto& [group, knob] : knobs) {
    auto one = hlir::GroupGraph(fused, group);
    if (!one.ok()) {  // a group that cannot stand alone keeps its tactic's own value
      VLOG(1) << "cinn_like_autotune: " << name << " group " << group << ": " << one.status();
      continue;
    }
    if (!CanTimeAlone(*one).ok()) continue;
    const std::string key =
        runtime::Fingerprint(absl::StrCat(hlir::StructuralKey(*one), "\n", where, "\n", knob.name));
    if (auto known = TuningMemory::Global().Find(key, knob)) {
      if (known->value != knob.value) values[group] = known->value;
      absl::StrAppend(&report, "group ", group, " (", key, "): ", knob.name, " ", known->value,
                      " remembered\n");
      continue;
    }
    // The group's inputs at random, its outputs zero, on the device; kept for every value.
    absl::StatusOr<GroupArgs> placed = PlaceGroupArgs(one->graph, target);
    if (!placed.ok()) {  // no memory for the group's tensors now: its tactic's own value
      LOG(WARNING) << "cinn_like_autotune: " << name << " group " << group << ": "
                   << placed.status();
      continue;
    }
    std::vector<DLTensor*>& args = placed->args;
    std::optional<std::pair<double, int>> best;
    int64_t trials = 0;
    absl::StrAppend(&report, "group ", group, " (", key, "): ", knob.name);
    for (int value : knob.options) {
      const std::string fname = absl::StrCat(name, "_tune_g", group, "_", value);
      auto seconds = TimeValue(*one, target, fname, knob.name, value, args);
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
    if (best->second != knob.value) values[group] = best->second;
    TuningMemory::Global().Remember(key, Choice{knob.name, best->second}, trials);
  }
  DumpToFile(name + ".autotune.txt", report);
  return values;
}

}  // namespace cinn_like
