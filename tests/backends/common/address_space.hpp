// The unified address space of a double: each device's heap (device_heap.hpp), the page-locked
// host memory (allocated, or registered from the program's own) and managed memory, so that any
// pointer can be told apart as device, page-locked, managed or pageable memory, and the copy and
// fill rules the CUDA and HIP documentation share.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_ADDRESS_SPACE_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_ADDRESS_SPACE_HPP_

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
    // kManaged: one address the host and every device use (cuMemAllocManaged with
    // CU_MEM_ATTACH_GLOBAL, hipMallocManaged); the double keeps it in host memory.
    enum Kind { kDevice, kPinned, kManaged, kPageable } kind;
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
    // False if `pointer` is not the start of a page-locked allocation (registered memory is not).
    bool freePinned(void* pointer);

    // Page-locks the program's [pointer, pointer + size) (cuMemHostRegister, hipHostRegister):
    // false, registering nothing, if any byte of it is page-locked already.
    bool registerHost(void* pointer, size_t size);
    // False if `pointer` does not start a registered range.
    bool unregisterHost(void* pointer);

    void* allocateManaged(size_t size);
    // False if `pointer` is not the start of a managed allocation.
    bool freeManaged(void* pointer);

  private:
    struct PageLocked {
        size_t size;
        bool registered;  // the program's memory, not the double's
    };

    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<DeviceHeap>> heaps_;
    std::map<const void*, PageLocked> pinned_;
    std::map<const void*, size_t> managed_;
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

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_ADDRESS_SPACE_HPP_
