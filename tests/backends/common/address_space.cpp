#include "address_space.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <type_traits>
#include <utility>

namespace polyhal::doubles {

namespace {

// The entry of `ranges` (base -> size, or a value with a size) whose bytes include `pointer`, or
// {nullptr, {}}.
template <typename Value>
std::pair<const void*, Value> containing(const std::map<const void*, Value>& ranges,
                                         const void* pointer) {
    auto next = ranges.upper_bound(pointer);
    if (next == ranges.begin()) return {nullptr, {}};
    const auto& [base, value] = *std::prev(next);
    size_t size = 0;
    if constexpr (std::is_same_v<Value, size_t>) {
        size = value;
    } else {
        size = value.size;
    }
    if (static_cast<const char*>(pointer) >= static_cast<const char*>(base) + size) {
        return {nullptr, {}};
    }
    return {base, value};
}

// Do `count` bytes from `pointer` stay inside the `size` bytes from `base`?
bool fits(const void* base, size_t size, const void* pointer, size_t count) {
    return static_cast<const char*>(pointer) + count <= static_cast<const char*>(base) + size;
}

}  // namespace

void AddressSpace::addDevices(size_t count, size_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!heaps_.empty()) return;
    for (size_t i = 0; i < count; ++i) heaps_.push_back(std::make_unique<DeviceHeap>(capacity));
}

int AddressSpace::deviceCount() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return static_cast<int>(heaps_.size());
}

DeviceHeap& AddressSpace::heap(int device) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return *heaps_[static_cast<size_t>(device)];
}

bool AddressSpace::locate(const void* pointer, size_t count, Place* place) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t d = 0; d < heaps_.size(); ++d) {
        const DeviceHeap& heap = *heaps_[d];
        if (!heap.covers(pointer)) continue;
        if (!heap.holds(pointer, count)) return false;
        *place = Place{Place::kDevice, static_cast<int>(d), heap.alias(pointer)};
        return true;
    }
    bool inside = false;
    int device = -1;
    void* alias = nullptr;
    if (imports_.find(pointer, count, &inside, &device, &alias)) {
        if (!inside) return false;
        *place = Place{Place::kDevice, device, alias};
        return true;
    }
    // Bytes running past a page-locked or managed allocation are pageable memory to the driver.
    if (const auto [base, locked] = containing(pinned_, pointer);
        base != nullptr && fits(base, locked.size, pointer, count)) {
        *place = Place{Place::kPinned, -1, const_cast<void*>(pointer)};
        return true;
    }
    if (const auto [base, size] = containing(managed_, pointer);
        base != nullptr && fits(base, size, pointer, count)) {
        *place = Place{Place::kManaged, -1, const_cast<void*>(pointer)};
        return true;
    }
    *place = Place{Place::kPageable, -1, const_cast<void*>(pointer)};
    return true;
}

int AddressSpace::deviceOf(const void* pointer) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t d = 0; d < heaps_.size(); ++d) {
        if (heaps_[d]->covers(pointer)) return static_cast<int>(d);
    }
    return -1;
}

void* AddressSpace::allocatePinned(size_t size) {
    // A size that cannot be rounded up to whole pages is more than any host has.
    if (size > SIZE_MAX - 4095) return nullptr;
    void* allocated = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    if (allocated == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    pinned_.emplace(allocated, PageLocked{size, false});
    return allocated;
}

bool AddressSpace::freePinned(void* pointer) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = pinned_.find(pointer);
        if (it == pinned_.end() || it->second.registered) return false;
        pinned_.erase(it);
    }
    std::free(pointer);
    return true;
}

bool AddressSpace::registerHost(void* pointer, size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto* first = static_cast<const char*>(pointer);
    if (containing(pinned_, pointer).first != nullptr) return false;
    const auto next = pinned_.upper_bound(pointer);
    if (next != pinned_.end() && static_cast<const char*>(next->first) < first + size) return false;
    pinned_.emplace(pointer, PageLocked{size, true});
    return true;
}

bool AddressSpace::unregisterHost(void* pointer) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = pinned_.find(pointer);
    if (it == pinned_.end() || !it->second.registered) return false;
    pinned_.erase(it);
    return true;
}

void* AddressSpace::allocateManaged(size_t size) {
    // Managed memory is page-granular on both vendors' drivers.
    if (size > SIZE_MAX - 4095) return nullptr;
    void* allocated = std::aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    if (allocated == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    managed_.emplace(allocated, size);
    return allocated;
}

bool AddressSpace::freeManaged(void* pointer) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (managed_.erase(pointer) == 0) return false;
    }
    std::free(pointer);
    return true;
}

void submitCopy(Stream& stream, const Place& to, const Place& from, size_t count) {
    submitCopy2D(stream, to, count, from, count, count, 1);
}

void copyRows(void* target, size_t toPitch, const void* source, size_t fromPitch, size_t width,
              size_t height) {
    for (size_t row = 0; row < height; ++row) {
        std::memmove(static_cast<unsigned char*>(target) + row * toPitch,
                     static_cast<const unsigned char*>(source) + row * fromPitch, width);
    }
}

void submitCopy2D(Stream& stream, const Place& to, size_t toPitch, const Place& from,
                  size_t fromPitch, size_t width, size_t height) {
    const auto copyRows = [toPitch, fromPitch, width, height](void* target, const void* source) {
        polyhal::doubles::copyRows(target, toPitch, source, fromPitch, width, height);
    };
    if (from.kind == Place::kPageable && to.kind != Place::kPageable) {
        const auto* source = static_cast<const unsigned char*>(from.host);
        auto staged = std::make_shared<std::vector<unsigned char>>(
            source, source + fromPitch * (height - 1) + width);
        stream.submit([copyRows, target = to.host, staged] { copyRows(target, staged->data()); });
        return;
    }
    stream.submit([copyRows, target = to.host, source = from.host] { copyRows(target, source); });
    if (to.kind == Place::kPageable) stream.mark()->wait();
}

void submitFill(Stream& stream, const Place& to, unsigned char value, size_t count) {
    stream.submit([target = to.host, value, count] { std::memset(target, value, count); });
}

}  // namespace polyhal::doubles
