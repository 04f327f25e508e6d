/// \file Encoding and checked decoding of module files.
#include "cinn_like/cache/module_file.h"

#include <nlohmann/json.hpp>

#include <llvm/Config/llvm-config.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/byte_io.h"
#include "runtime/files.h"
#include "runtime/symbols.h"

namespace cinn_like {
namespace {

using runtime::PutBytes;
using Reader = runtime::ByteReader;

}  // namespace

std::string RuntimeAbi() {
  static const std::string abi = [] {
    std::vector<std::string> names;
    for (const auto& [name, address] : runtime::RuntimeSymbols()) names.push_back(name);
    std::sort(names.begin(), names.end());
    return absl::StrCat("runtime ", kRuntimeAbiVersion, " llvm ", LLVM_VERSION_STRING, " ",
                        runtime::Fingerprint(absl::StrJoin(names, ",")));
  }();
  return abi;
}

std::string EncodeModuleImage(const ModuleImage& image) {
  nlohmann::json device = nlohmann::json::array();
  for (const backends::DeviceBinary& d : image.code.device) {
    device.push_back({{"cubin", d.cubin}, {"kernels", d.kernels}});
  }
  const nlohmann::json header = {{"producer", image.producer},
                                 {"runtime", image.runtime},
                                 {"name", image.name},
                                 {"target", image.target},
                                 {"signature", image.signature},
                                 {"key", image.key},
                                 {"host", image.code.host},
                                 {"host_objects", image.code.host_objects.size()},
                                 {"device", device}};
  std::string body;
  PutBytes(&body, header.dump());
  for (const std::string& object : image.code.host_objects) PutBytes(&body, object);
  for (const backends::DeviceBinary& d : image.code.device) PutBytes(&body, d.image);
  return SealRecord(kModuleFile, body);
}

absl::StatusOr<ModuleImage> DecodeModuleImage(std::string_view bytes, const std::string& origin) {
  auto damaged = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat(origin, " is damaged: ", what));
  };
  auto body = OpenRecord(kModuleFile, bytes, origin);
  if (!body.ok()) return body.status();
  Reader in(*body);
  std::string header_text;
  if (!in.Bytes(&header_text)) return damaged("its header runs past the end");
  nlohmann::json header = nlohmann::json::parse(header_text, nullptr, /*allow_exceptions=*/false);
  auto is_string = [&](const char* key) { return header.contains(key) && header[key].is_string(); };
  if (header.is_discarded() || !header.is_object() || !is_string("producer") ||
      !is_string("runtime") || !is_string("name") || !is_string("target") ||
      !is_string("signature") || !is_string("key") || !is_string("host") ||
      !header.contains("host_objects") || !header["host_objects"].is_number_unsigned() ||
      !header.contains("device") || !header["device"].is_array()) {
    return damaged("its header is not the JSON object of a module");
  }
  ModuleImage image;
  image.producer = header["producer"].get<std::string>();
  image.runtime = header["runtime"].get<std::string>();
  image.name = header["name"].get<std::string>();
  image.target = header["target"].get<std::string>();
  image.signature = header["signature"].get<std::string>();
  image.key = header["key"].get<std::string>();
  image.code.host = header["host"].get<std::string>();
  // Each object takes at least its 8-byte size: a count beyond that is a lie, refused before
  // anything is allocated for it.
  const uint64_t objects = header["host_objects"].get<uint64_t>();
  if (objects > (body->size() - in.pos()) / 8) {
    return damaged("its header counts more objects than it has bytes");
  }
  for (uint64_t k = 0; k < objects; ++k) {
    std::string object;
    if (!in.Bytes(&object)) return damaged("a host object runs past the end");
    image.code.host_objects.push_back(std::move(object));
  }
  for (const nlohmann::json& d : header["device"]) {
    if (!d.is_object() || !d.contains("cubin") || !d["cubin"].is_boolean() ||
        !d.contains("kernels") || !d["kernels"].is_array()) {
      return damaged("a device image's description is not {\"cubin\", \"kernels\"}");
    }
    backends::DeviceBinary binary;
    binary.cubin = d["cubin"].get<bool>();
    for (const nlohmann::json& k : d["kernels"]) {
      if (!k.is_string()) return damaged("a kernel name is not a string");
      binary.kernels.push_back(k.get<std::string>());
    }
    if (!in.Bytes(&binary.image)) return damaged("a device image runs past the end");
    image.code.device.push_back(std::move(binary));
  }
  if (in.pos() != body->size()) {
    return damaged("it has bytes its header does not describe");
  }
  return image;
}

}  // namespace cinn_like
