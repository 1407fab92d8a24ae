#include "address_space.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>

namespace polyhal::doubles {

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
    auto next = pinned_.upper_bound(pointer);
    if (next != pinned_.begin()) {
        const auto& [base, size] = *std::prev(next);
        if (static_cast<const char*>(pointer) + count <= static_cast<const char*>(base) + size) {
            *place = Place{Place::kPinned, -1, const_cast<void*>(pointer)};
            return true;
        }
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
    pinned_.emplace(allocated, size);
    return allocated;
}

bool AddressSpace::freePinned(void* pointer) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (pinned_.erase(pointer) == 0) return false;
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
