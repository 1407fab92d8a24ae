// Copy planning: where operands live, which way a copy goes, and the path that carries it.
#ifndef POLYHAL_HAL_SRC_COPY_PLAN_HPP_
#define POLYHAL_HAL_SRC_COPY_PLAN_HPP_

#include <array>
#include <cstddef>
#include <cstdint>

#include "api.hpp"

namespace polyhal {

// Where one operand of a copy or memset lives, as far as polyhal knows.
struct Operand {
    const void* pointer = nullptr;
    Device* owner = nullptr;      // the device whose pool holds it
    bool pinnedHost = false;      // from halMallocHost or registered with halHostRegister
    Device* managedBy = nullptr;  // from halMallocManaged on this device: host and device memory
    bool imported = false;        // another process's memory (halIpcOpenMemHandle)
    uintptr_t base = 0;           // the allocation containing it, when known
    size_t size = 0;

    Device* device() const { return owner; }
    bool known() const { return owner != nullptr || pinnedHost || managed(); }
    bool knownDevice() const { return owner != nullptr; }
    bool knownHost() const { return pinnedHost; }
    bool managed() const { return managedBy != nullptr; }
};

Operand locate(const void* pointer);

struct CopyPlan {
    Operand dst, src;
    halMemcpyKind kind;
};

// Checks a linear copy's arguments and plans it: both operands located, the kind resolved
// (inferred for HAL_MEMCPY_DEFAULT) and `count` bytes inside each operand's allocation.
halError planCopy(const char* operation, void* dst, size_t dstMax, const void* src, size_t count,
                  uint32_t kindBits, CopyPlan* plan);

// Checks a non-empty box as planCopy checks a linear copy, over the bytes each end spans.
halError planBox(const char* operation, const halMemcpy3DParams& box, CopyPlan* plan);

// What the race detector sees of a box planBox accepted: the bytes it spans at each end, the
// destination written and the source read.
std::array<check::Access, 2> boxAccesses(const halMemcpy3DParams& box);

// Reads a caller's halMemcpy3DParams (checking its size) into `box`.
halError readBox(const char* operation, const halMemcpy3DParams* params, halMemcpy3DParams* box);

inline bool isEmpty(const halMemcpy3DParams& box) {
    return box.width == 0 || box.height == 0 || box.depth == 0;
}

// Are the box's bytes one contiguous range at both ends (one linear copy)?
inline bool isContiguous(const halMemcpy3DParams& box) {
    const bool rows = box.dstPitch == box.width && box.srcPitch == box.width;
    const bool slices = box.depth == 1 || (box.dstSlicePitch == box.width * box.height &&
                                           box.srcSlicePitch == box.width * box.height);
    return rows && slices;
}

// Checks a memset's arguments and locates its target.
halError planMemset(const char* operation, void* dst, size_t dstMax, size_t count, Operand* target);

// The device whose default stream runs a synchronous copy: the one owning an end (dst first),
// or the current device.
inline Device* synchronousCopyDevice(const CopyPlan& plan) {
    return plan.dst.device() != nullptr   ? plan.dst.device()
           : plan.src.device() != nullptr ? plan.src.device()
                                          : currentDevice();
}

// A synchronous copy from another device than `owner`, whose default stream runs it, starts
// after the work already submitted to the source device's default stream too (as cudaMemcpy
// between devices): that work may still be writing the source.
halError drainSourceDevice(const CopyPlan& plan, Device* owner, const char* operation);

// Runs a planned copy on `stream` (recorded where the stream is captured), or, where no peer
// path serves it, performs it synchronously through the host (refused in a capture).
halError runCopy(halStream_t* stream, void* dst, const void* src, size_t count,
                 const CopyPlan& plan, const char* operation);

// Runs a planned box on `stream`, the path decided here once for eager and captured work: one
// copy when its bytes are contiguous at both ends, one backend operation where the backend copies
// boxes and both ends are its stream's, else one copy per row, each in stream order like any copy.
halError runBox(halStream_t* stream, const halMemcpy3DParams& box, const CopyPlan& plan,
                const char* operation);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_COPY_PLAN_HPP_
