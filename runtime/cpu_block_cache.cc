/// \file The CPU block cache: blocks in use by address, kept blocks in the order they were freed.
#include "runtime/cpu_block_cache.h"

#include <cstdlib>
#include <list>
#include <mutex>
#include <unordered_map>

namespace cinn_like::runtime {
namespace {

constexpr size_t kAlignment = 64;

struct Block {
  void* ptr;
  size_t bytes;  // rounded
};

class BlockCache {
 public:
  static BlockCache& Get() {
    static BlockCache* cache = new BlockCache;  // never destroyed: blocks may be freed at exit
    return *cache;
  }

  void* Alloc(size_t bytes) {
    if (bytes > SIZE_MAX - kAlignment) return nullptr;
    const size_t rounded = (std::max<size_t>(bytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
    if (rounded < kCpuBlockKeptMin) return std::aligned_alloc(kAlignment, rounded);
    std::lock_guard<std::mutex> lock(mu_);
    for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {  // the most recently freed first
      if (it->bytes != rounded) continue;
      void* p = it->ptr;
      kept_bytes_ -= rounded;
      kept_.erase(std::next(it).base());
      in_use_[p] = rounded;
      return p;
    }
    void* p = std::aligned_alloc(kAlignment, rounded);
    if (p) in_use_[p] = rounded;
    return p;
  }

  void Free(void* ptr) {
    if (!ptr) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = in_use_.find(ptr);
    if (it == in_use_.end()) {  // a small block
      std::free(ptr);
      return;
    }
    kept_.push_back({ptr, it->second});
    kept_bytes_ += it->second;
    in_use_.erase(it);
    while (kept_bytes_ > kCpuBlocksKeptMax) {
      kept_bytes_ -= kept_.front().bytes;
      std::free(kept_.front().ptr);
      kept_.pop_front();
    }
  }

  size_t KeptBytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return kept_bytes_;
  }

 private:
  std::mutex mu_;
  std::unordered_map<void*, size_t> in_use_;  // the large blocks handed out, by address
  std::list<Block> kept_;                     // freed large blocks, least recently freed first
  size_t kept_bytes_ = 0;
};

}  // namespace

void* CpuBlockAlloc(size_t bytes) { return BlockCache::Get().Alloc(bytes); }
void CpuBlockFree(void* ptr) { BlockCache::Get().Free(ptr); }
size_t CpuBlocksKeptBytes() { return BlockCache::Get().KeptBytes(); }

}  // namespace cinn_like::runtime
