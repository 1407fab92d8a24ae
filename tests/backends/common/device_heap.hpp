// Device memory of a double: a memory file mapped twice. The addresses handed out lie in a
// mapping without any access, so host code that touches device memory directly faults at once;
// the double reads and writes the same bytes through its own alias mapping.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_DEVICE_HEAP_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_DEVICE_HEAP_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace polyhal::doubles {

class DeviceHeap {
  public:
    // Reserves `capacity` bytes (rounded up to pages); pages are backed only once written.
    explicit DeviceHeap(size_t capacity);
    ~DeviceHeap();
    DeviceHeap(const DeviceHeap&) = delete;
    DeviceHeap& operator=(const DeviceHeap&) = delete;

    // A 256-byte aligned range of `size` bytes, or nullptr when the heap is exhausted.
    void* allocate(size_t size);
    // Releases an allocation; false if `address` is not the start of a live one.
    bool release(void* address);
    // Releases every allocation.
    void releaseAll();

    // Is `address` the start of a live allocation? Then *size is its size.
    bool startsAllocation(const void* address, size_t* size) const;
    // The memory file and the offset of `address` (which the heap covers) in it: what another
    // process maps to share the memory.
    int file() const noexcept { return file_; }
    size_t offsetOf(const void* address) const noexcept {
        return static_cast<size_t>(static_cast<const char*>(address) - visible_);
    }

    // Does [address, address + size) lie inside one live allocation?
    bool holds(const void* address, size_t size) const;
    // Is `address` inside this heap's address range at all (live or not)?
    bool covers(const void* address) const noexcept;
    // The alias through which the double touches `address` (which the heap covers).
    void* alias(const void* address) const noexcept;

    size_t capacity() const noexcept { return capacity_; }
    size_t available() const;

  private:
    int file_ = -1;
    size_t capacity_ = 0;
    char* visible_ = nullptr;  // handed out, PROT_NONE
    char* alias_ = nullptr;    // the double's own view
    mutable std::mutex mutex_;
    std::map<size_t, size_t> live_;  // offset -> size
    size_t used_ = 0;
};

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_DEVICE_HEAP_HPP_
