#include "device_heap.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>

namespace polyhal::doubles {
namespace {

constexpr size_t kAlignment = 256;

size_t roundUp(size_t value, size_t multiple) {
    return (value + multiple - 1) / multiple * multiple;
}

[[noreturn]] void fatal(const char* what) {
    std::perror(what);
    std::abort();
}

}  // namespace

DeviceHeap::DeviceHeap(size_t capacity)
    : capacity_(roundUp(capacity, static_cast<size_t>(sysconf(_SC_PAGESIZE)))) {
    file_ = memfd_create("driver-double-device-memory", MFD_CLOEXEC);
    if (file_ < 0) fatal("memfd_create");
    if (ftruncate(file_, static_cast<off_t>(capacity_)) != 0) fatal("ftruncate");
    void* visible = mmap(nullptr, capacity_, PROT_NONE, MAP_SHARED, file_, 0);
    void* alias = mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_SHARED, file_, 0);
    if (visible == MAP_FAILED || alias == MAP_FAILED) fatal("mmap");
    visible_ = static_cast<char*>(visible);
    alias_ = static_cast<char*>(alias);
}

DeviceHeap::~DeviceHeap() {
    munmap(visible_, capacity_);
    munmap(alias_, capacity_);
    close(file_);
}

// First fit over the gaps between live allocations, lowest address first.
void* DeviceHeap::allocate(size_t size) {
    const size_t rounded = roundUp(size == 0 ? 1 : size, kAlignment);
    std::lock_guard<std::mutex> lock(mutex_);
    size_t candidate = 0;
    for (const auto& [offset, length] : live_) {
        if (offset - candidate >= rounded) break;
        candidate = offset + roundUp(length, kAlignment);
    }
    if (candidate + rounded > capacity_) return nullptr;
    live_.emplace(candidate, size);
    used_ += rounded;
    return visible_ + candidate;
}

bool DeviceHeap::release(void* address) {
    if (!covers(address)) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = live_.find(static_cast<size_t>(static_cast<char*>(address) - visible_));
    if (found == live_.end()) return false;
    const auto [offset, size] = *found;
    used_ -= roundUp(size == 0 ? 1 : size, kAlignment);
    live_.erase(found);
    // Give whole pages back, so released memory does not stay resident.
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t begin = roundUp(offset, page);
    const size_t end = (offset + size) / page * page;
    if (end > begin)
        fallocate(file_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(begin),
                  static_cast<off_t>(end - begin));
    return true;
}

void DeviceHeap::releaseAll() {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.clear();
    used_ = 0;
}

bool DeviceHeap::startsAllocation(const void* address, size_t* size) const {
    if (!covers(address)) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = live_.find(offsetOf(address));
    if (found == live_.end()) return false;
    *size = found->second;
    return true;
}

bool DeviceHeap::holds(const void* address, size_t size) const {
    if (!covers(address)) return false;
    const size_t offset = static_cast<size_t>(static_cast<const char*>(address) - visible_);
    std::lock_guard<std::mutex> lock(mutex_);
    auto next = live_.upper_bound(offset);
    if (next == live_.begin()) return false;
    const auto& [start, length] = *std::prev(next);
    return offset + size <= start + length;
}

bool DeviceHeap::covers(const void* address) const noexcept {
    const char* byte = static_cast<const char*>(address);
    return byte >= visible_ && byte < visible_ + capacity_;
}

void* DeviceHeap::alias(const void* address) const noexcept {
    return alias_ + (static_cast<const char*>(address) - visible_);
}

size_t DeviceHeap::available() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return capacity_ - used_;
}

}  // namespace polyhal::doubles
