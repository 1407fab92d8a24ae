// The live handles of a double, each with its kind ("CUstream", "hipEvent_t" ...), so that a use
// of a destroyed, foreign or mistyped handle is caught before it is dereferenced.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_HANDLES_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_HANDLES_HPP_

#include <cstring>
#include <mutex>
#include <unordered_map>

namespace polyhal::doubles {

class HandleRegistry {
  public:
    void add(const void* handle, const char* kind) {
        std::lock_guard<std::mutex> lock(mutex_);
        live_[handle] = kind;
    }
    void remove(const void* handle) {
        std::lock_guard<std::mutex> lock(mutex_);
        live_.erase(handle);
    }
    bool isLive(const void* handle, const char* kind) const {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = live_.find(handle);
        return found != live_.end() && std::strcmp(found->second, kind) == 0;
    }
    size_t count(const char* kind) const {
        std::lock_guard<std::mutex> lock(mutex_);
        size_t live = 0;
        for (const auto& entry : live_) live += std::strcmp(entry.second, kind) == 0;
        return live;
    }
    // Forgets every handle for which `owned(handle, kind)` holds.
    template <class Predicate>
    void removeIf(Predicate owned) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto it = live_.begin(); it != live_.end();) {
            it = owned(it->first, it->second) ? live_.erase(it) : std::next(it);
        }
    }

  private:
    mutable std::mutex mutex_;
    std::unordered_map<const void*, const char*> live_;
};

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_HANDLES_HPP_
