// The unified address space of a double: each device's heap (device_heap.hpp) and the page-locked
// host allocations, so that any pointer can be told apart as device, page-locked or pageable
// memory, and the copy and fill rules the CUDA and HIP documentation share.
#ifndef POLYHAL_TESTS_DRIVERS_COMMON_ADDRESS_SPACE_HPP_
#define POLYHAL_TESTS_DRIVERS_COMMON_ADDRESS_SPACE_HPP_

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "device_heap.hpp"
#include "ipc_mappings.hpp"
#include "timeline.hpp"

namespace polyhal::doubles {

// Where a pointer of a copy or fill lies.
struct Place {
    enum Kind { kDevice, kPinned, kPageable } kind;
    int device;  // for kDevice
    void* host;  // where the double reads or writes it
};

class AddressSpace {
  public:
    // Creates `count` devices of `capacity` bytes each (once).
    void addDevices(size_t count, size_t capacity);
    int deviceCount() const;
    DeviceHeap& heap(int device) const;

    // Classifies [pointer, pointer + count). False when it lies in a device heap but not inside
    // one live allocation (freed, or out of bounds).
    bool locate(const void* pointer, size_t count, Place* place) const;
    // The device whose heap covers `pointer`, or -1.
    int deviceOf(const void* pointer) const;

    // Device memory of other processes (the IPC calls), located as device memory.
    IpcMappings& imports() { return imports_; }

    void* allocatePinned(size_t size);
    // False if `pointer` is not the start of a page-locked allocation.
    bool freePinned(void* pointer);

  private:
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<DeviceHeap>> heaps_;
    std::map<const void*, size_t> pinned_;
    IpcMappings imports_;
};

// `height` rows of `width` bytes, row starts `toPitch` and `fromPitch` bytes apart, at once.
void copyRows(void* target, size_t toPitch, const void* source, size_t fromPitch, size_t width,
              size_t height);

// A copy in `stream`'s order, with the host synchronisation both vendors document: from pageable
// host memory the source is staged at the call and the transfer runs in stream order; to
// pageable host memory (and between host buffers) the call returns once the copy has completed;
// otherwise the call returns at once.
void submitCopy(Stream& stream, const Place& to, const Place& from, size_t count);

// A pitched copy (`height` rows of `width` bytes, row starts `toPitch` and `fromPitch` bytes
// apart) with submitCopy's host synchronisation; the places locate the rows' whole spans.
void submitCopy2D(Stream& stream, const Place& to, size_t toPitch, const Place& from,
                  size_t fromPitch, size_t width, size_t height);

// A fill in stream order; `to` must be device or page-locked memory.
void submitFill(Stream& stream, const Place& to, unsigned char value, size_t count);

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_DRIVERS_COMMON_ADDRESS_SPACE_HPP_
