// Device and pinned host memory, copies and memsets.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "api.hpp"

using namespace polyhal;

namespace {

// Cross-backend device-to-device copies travel through a host buffer of at most this size.
constexpr size_t kStagingChunk = 8u << 20;
constexpr size_t kHostAlignment = 4096;

const char* kindName(halMemcpyKind kind) {
    switch (kind) {
        case HAL_MEMCPY_HOST_TO_HOST: return "HAL_MEMCPY_HOST_TO_HOST";
        case HAL_MEMCPY_HOST_TO_DEVICE: return "HAL_MEMCPY_HOST_TO_DEVICE";
        case HAL_MEMCPY_DEVICE_TO_HOST: return "HAL_MEMCPY_DEVICE_TO_HOST";
        case HAL_MEMCPY_DEVICE_TO_DEVICE: return "HAL_MEMCPY_DEVICE_TO_DEVICE";
        default: return "HAL_MEMCPY_DEFAULT";
    }
}

// Where one operand of a copy or memset lives, as far as polyhal knows.
struct Operand {
    const void* pointer = nullptr;
    Device* owner = nullptr;  // the device whose pool holds it
    bool pinnedHost = false;  // from halMallocHost
    bool imported = false;    // another process's memory (halIpcOpenMemHandle)
    uintptr_t base = 0;       // the allocation containing it, when known
    size_t size = 0;

    Device* device() const { return owner; }
    bool known() const { return owner != nullptr || pinnedHost; }
    bool knownDevice() const { return owner != nullptr; }
    bool knownHost() const { return pinnedHost; }
};

Operand locate(const void* pointer) {
    Operand operand;
    operand.pointer = pointer;
    for (const auto& device : runtime().devices) {
        allocator::Allocation allocation;
        if (device->pool->find(pointer, &allocation)) {
            operand.owner = device.get();
            operand.base = reinterpret_cast<uintptr_t>(allocation.base);
            operand.size = allocation.size;
            return operand;
        }
    }
    if (const auto imported = runtime().ipcImports.find(pointer)) {
        operand.owner = imported->device;
        operand.imported = true;
        operand.base = imported->base;
        operand.size = imported->size;
        return operand;
    }
    if (const auto host = runtime().hostAllocations.find(pointer)) {
        operand.pinnedHost = true;
        operand.base = host->base;
        operand.size = host->size;
    }
    return operand;
}

// Checks that `count` bytes from the operand stay inside its allocation.
halError checkBounds(const char* operation, const char* role, const Operand& operand,
                     size_t count) {
    if (!operand.known()) return HAL_SUCCESS;
    const size_t offset = reinterpret_cast<uintptr_t>(operand.pointer) - operand.base;
    if (count <= operand.size - offset) return HAL_SUCCESS;
    return fail(HAL_ERROR_INVALID_VALUE,
                "{}: {} bytes at {} run past the end of its allocation (offset {} of {} bytes)",
                operation, count, role, offset, operand.size);
}

// The direction of a copy: inferred for HAL_MEMCPY_DEFAULT, checked against what polyhal knows
// of each pointer otherwise. Pointers polyhal did not allocate are taken as the kind says.
halError resolveKind(const char* operation, uint32_t kindBits, const Operand& dst,
                     const Operand& src, halMemcpyKind* resolved) {
    if (kindBits > HAL_MEMCPY_DEFAULT) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: {} is not a halMemcpyKind", operation,
                    static_cast<int32_t>(kindBits));
    }
    const auto kind = static_cast<halMemcpyKind>(kindBits);
    if (kind == HAL_MEMCPY_DEFAULT) {
        const bool fromDevice = src.knownDevice();
        const bool toDevice = dst.knownDevice();
        *resolved = fromDevice ? (toDevice ? HAL_MEMCPY_DEVICE_TO_DEVICE : HAL_MEMCPY_DEVICE_TO_HOST)
                               : (toDevice ? HAL_MEMCPY_HOST_TO_DEVICE : HAL_MEMCPY_HOST_TO_HOST);
        return HAL_SUCCESS;
    }
    const bool fromDevice = kind == HAL_MEMCPY_DEVICE_TO_HOST || kind == HAL_MEMCPY_DEVICE_TO_DEVICE;
    const bool toDevice = kind == HAL_MEMCPY_HOST_TO_DEVICE || kind == HAL_MEMCPY_DEVICE_TO_DEVICE;
    const auto contradicts = [](bool saysDevice, const Operand& operand) {
        return saysDevice ? operand.knownHost() : operand.knownDevice();
    };
    if (contradicts(fromDevice, src) || contradicts(toDevice, dst)) {
        const Operand& wrong = contradicts(fromDevice, src) ? src : dst;
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: {} says {} is {} memory, but {} was allocated as {} memory; pass "
                    "HAL_MEMCPY_DEFAULT to infer the direction",
                    operation, kindName(kind), &wrong == &src ? "src" : "dst",
                    wrong.knownDevice() ? "host" : "device", wrong.pointer,
                    wrong.knownDevice() ? "device" : "pinned host");
    }
    *resolved = kind;
    return HAL_SUCCESS;
}

// One synchronous copy step on `device`'s default stream.
halError copyOnDevice(Device* device, void* dst, const void* src, size_t count,
                      halMemcpyKind kind, const char* operation) {
    halStream_t* stream = nullptr;
    if (halError e = defaultStream(device, &stream)) return e;
    if (halError e = checked(device->vtable->memcpyAsync(stream->native, dst, src, count, kind),
                             device, operation)) {
        return e;
    }
    noteSubmitted(stream, {dst, src});
    return synchronizeStream(stream, operation);
}

// A copy with an operand on a device the stream's device cannot copy to or from itself (another
// backend, or no peer path): synchronous, through host memory when both ends are devices.
halError copyAcrossDevices(void* dst, Device* dstDevice, const void* src, Device* srcDevice,
                           size_t count, const char* operation) {
    if (srcDevice == nullptr) {
        return copyOnDevice(dstDevice, dst, src, count, HAL_MEMCPY_HOST_TO_DEVICE, operation);
    }
    if (dstDevice == nullptr) {
        return copyOnDevice(srcDevice, dst, src, count, HAL_MEMCPY_DEVICE_TO_HOST, operation);
    }
    const size_t chunk = std::min(count, kStagingChunk);
    std::unique_ptr<unsigned char[]> staging(new unsigned char[chunk]);
    for (size_t offset = 0; offset < count; offset += chunk) {
        const size_t bytes = std::min(chunk, count - offset);
        if (halError e = copyOnDevice(srcDevice, staging.get(),
                                      static_cast<const unsigned char*>(src) + offset, bytes,
                                      HAL_MEMCPY_DEVICE_TO_HOST, operation)) {
            return e;
        }
        if (halError e = copyOnDevice(dstDevice, static_cast<unsigned char*>(dst) + offset,
                                      staging.get(), bytes, HAL_MEMCPY_HOST_TO_DEVICE,
                                      operation)) {
            return e;
        }
    }
    return HAL_SUCCESS;
}

// Can `stream` copy between two devices through their backend's peer path? plugin.h takes a
// stream of either device.
bool peerCopyPossible(const halStream_t* stream, const Device* dstDevice,
                      const Device* srcDevice) {
    return dstDevice != nullptr && srcDevice != nullptr &&
           dstDevice->backend == srcDevice->backend &&
           (stream->device == dstDevice || stream->device == srcDevice) &&
           stream->device->supports(HAL_DEVICE_CAP_PEER_COPY);
}

// The pool of the device that does not own `stream` cannot see a use on `stream`. So that the
// operand on that device is not handed out again before the copy has read or written it, that
// device's default stream waits for the copy, and the use is recorded there. Returns false,
// having done nothing, where the backend refuses a step.
bool holdForPeerCopy(halStream_t* stream, Device* other, const void* operand) {
    Device* device = stream->device;
    halStream_t* otherStream = nullptr;
    halPluginEvent copied = nullptr;
    if (defaultStream(other, &otherStream) != HAL_SUCCESS ||
        device->vtable->eventCreate(device->native, HAL_EVENT_DISABLE_TIMING, &copied) !=
            HAL_SUCCESS) {
        return false;
    }
    const bool held = device->vtable->eventRecord(copied, stream->native) == HAL_SUCCESS &&
                      other->vtable->streamWaitEvent(otherStream->native, copied) == HAL_SUCCESS;
    device->vtable->eventDestroy(copied);  // a wait already enqueued on it still holds
    if (held) noteSubmitted(otherStream, {operand});
    return held;
}

// A copy between two devices of one backend, in `stream`'s order, without host staging.
halError enqueuePeerCopy(halStream_t* stream, void* dst, Device* dstDevice, const void* src,
                         Device* srcDevice, size_t count, const char* operation) {
    Device* device = stream->device;
    if (halError e = checked(device->vtable->memcpyPeerAsync(stream->native, dst,
                                                             dstDevice->native, src,
                                                             srcDevice->native, count),
                             device, operation)) {
        return e;
    }
    noteSubmitted(stream, {dst, src});
    const bool held = device == dstDevice ? holdForPeerCopy(stream, srcDevice, src)
                                          : holdForPeerCopy(stream, dstDevice, dst);
    // The copy is enqueued either way; unheld, it must be over before the call returns.
    return held ? HAL_SUCCESS : synchronizeStream(stream, operation);
}

struct CopyPlan {
    Operand dst, src;
    halMemcpyKind kind;
};

halError planCopy(const char* operation, void* dst, size_t dstMax, const void* src, size_t count,
                  uint32_t kindBits, CopyPlan* plan) {
    if (count > dstMax) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: count ({}) is larger than dstMax ({})",
                    operation, count, dstMax);
    }
    if (count > 0 && (dst == nullptr || src == nullptr)) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: {} is NULL", operation,
                    dst == nullptr ? "dst" : "src");
    }
    plan->dst = locate(dst);
    plan->src = locate(src);
    if (halError e = resolveKind(operation, kindBits, plan->dst, plan->src, &plan->kind)) {
        return e;
    }
    if (halError e = checkBounds(operation, "dst", plan->dst, count)) return e;
    return checkBounds(operation, "src", plan->src, count);
}

// A synchronous copy from another device than `owner`, whose default stream runs it, starts
// after the work already submitted to the source device's default stream too (as cudaMemcpy
// between devices): that work may still be writing the source.
halError drainSourceDevice(const CopyPlan& plan, Device* owner, const char* operation) {
    Device* source = plan.src.device();
    if (source == nullptr || source == owner) return HAL_SUCCESS;
    halStream_t* stream = nullptr;
    if (halError e = defaultStream(source, &stream)) return e;
    return synchronizeStream(stream, operation);
}

// Enqueues a planned copy on `stream`, or, where no peer path serves it, performs it
// synchronously through the host.
halError enqueueCopy(halStream_t* stream, void* dst, const void* src, size_t count,
                     const CopyPlan& plan, const char* operation) {
    Device* dstDevice = plan.dst.device();
    Device* srcDevice = plan.src.device();
    const bool local = (dstDevice == nullptr || dstDevice == stream->device) &&
                       (srcDevice == nullptr || srcDevice == stream->device);
    if (local) {
        if (halError e = checked(stream->device->vtable->memcpyAsync(stream->native, dst, src,
                                                                     count, plan.kind),
                                 stream->device, operation)) {
            return e;
        }
        noteSubmitted(stream, {dst, src});
        return HAL_SUCCESS;
    }
    if (peerCopyPossible(stream, dstDevice, srcDevice)) {
        return enqueuePeerCopy(stream, dst, dstDevice, src, srcDevice, count, operation);
    }
    if (halError e = synchronizeStream(stream, operation)) return e;
    return copyAcrossDevices(dst, dstDevice, src, srcDevice, count, operation);
}

// Bytes from the start of the first of `count` runs, `pitch` bytes apart, to the end of the
// last, each run `length` bytes long; false when they overflow.
bool pitchedSpan(size_t pitch, size_t length, size_t count, size_t* span) {
    size_t upToLast = 0;
    if (__builtin_mul_overflow(pitch, count - 1, &upToLast)) return false;
    return !__builtin_add_overflow(upToLast, length, span);
}

// Bytes a box spans at one end (`pitch`, `slicePitch`), or false when they overflow.
bool boxSpan(const halMemcpy3DParams& box, size_t pitch, size_t slicePitch, size_t* span) {
    size_t slice = 0;
    return pitchedSpan(pitch, box.width, box.height, &slice) &&
           pitchedSpan(slicePitch, slice, box.depth, span);
}

// Checks a non-empty box as planCopy checks a linear copy, over the bytes each end spans.
halError planBox(const char* operation, const halMemcpy3DParams& box, CopyPlan* plan) {
    if (box.width > box.dstPitch || box.width > box.srcPitch) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: width ({}) is larger than the destination pitch ({}) or the source "
                    "pitch ({}): rows would overlap",
                    operation, box.width, box.dstPitch, box.srcPitch);
    }
    if (box.dst == nullptr || box.src == nullptr) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: {} is NULL", operation,
                    box.dst == nullptr ? "dst" : "src");
    }
    size_t dstSlice = 0, srcSlice = 0, dstSpan = 0, srcSpan = 0;
    if (!pitchedSpan(box.dstPitch, box.width, box.height, &dstSlice) ||
        !pitchedSpan(box.srcPitch, box.width, box.height, &srcSlice) ||
        !boxSpan(box, box.dstPitch, box.dstSlicePitch, &dstSpan) ||
        !boxSpan(box, box.srcPitch, box.srcSlicePitch, &srcSpan)) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: {} slices of {} rows at pitches {} and {} span more bytes than the "
                    "address space",
                    operation, box.depth, box.height, box.dstPitch, box.srcPitch);
    }
    if (box.depth > 1 && (dstSlice > box.dstSlicePitch || srcSlice > box.srcSlicePitch)) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: a slice's rows span {} bytes at the destination and {} at the source, "
                    "more than the slice pitches ({} and {}): slices would overlap",
                    operation, dstSlice, srcSlice, box.dstSlicePitch, box.srcSlicePitch);
    }
    plan->dst = locate(box.dst);
    plan->src = locate(box.src);
    if (halError e = resolveKind(operation, enumBits(box.kind), plan->dst, plan->src,
                                 &plan->kind)) {
        return e;
    }
    if (halError e = checkBounds(operation, "dst", plan->dst, dstSpan)) return e;
    return checkBounds(operation, "src", plan->src, srcSpan);
}

// Reads a caller's halMemcpy3DParams (checking its size) into `box`.
halError readBox(const char* operation, const halMemcpy3DParams* params, halMemcpy3DParams* box) {
    if (params == nullptr || params->size < sizeof(halMemcpy3DParams)) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: params is NULL or params->size ({}) is smaller than "
                    "sizeof(halMemcpy3DParams) ({})",
                    operation, params != nullptr ? params->size : 0, sizeof(halMemcpy3DParams));
    }
    std::memcpy(box, params, sizeof *box);
    box->size = sizeof *box;
    return HAL_SUCCESS;
}

bool isEmpty(const halMemcpy3DParams& box) {
    return box.width == 0 || box.height == 0 || box.depth == 0;
}

// Enqueues a planned box on `stream`: one copy when its bytes are contiguous at both ends, one
// backend operation where the backend copies boxes and both ends are its stream's, else one
// copy per row, each in stream order like any copy.
halError enqueueBox(halStream_t* stream, const halMemcpy3DParams& box, const CopyPlan& plan,
                    const char* operation) {
    const bool rowsContiguous = box.dstPitch == box.width && box.srcPitch == box.width;
    const bool slicesContiguous = box.depth == 1 || (box.dstSlicePitch == box.width * box.height &&
                                                     box.srcSlicePitch == box.width * box.height);
    if (rowsContiguous && slicesContiguous) {
        return enqueueCopy(stream, box.dst, box.src, box.width * box.height * box.depth, plan,
                           operation);
    }
    Device* device = stream->device;
    const bool local = (plan.dst.device() == nullptr || plan.dst.device() == device) &&
                       (plan.src.device() == nullptr || plan.src.device() == device);
    if (local && device->vtable->memcpy3DAsync != nullptr) {
        halMemcpy3DParams resolved = box;
        resolved.kind = plan.kind;
        if (halError e = checked(device->vtable->memcpy3DAsync(stream->native, &resolved),
                                 device, operation)) {
            return e;
        }
        noteSubmitted(stream, {box.dst, box.src});
        return HAL_SUCCESS;
    }
    auto* dst = static_cast<unsigned char*>(box.dst);
    const auto* src = static_cast<const unsigned char*>(box.src);
    for (size_t slice = 0; slice < box.depth; ++slice) {
        for (size_t row = 0; row < box.height; ++row) {
            if (halError e = enqueueCopy(
                    stream, dst + slice * box.dstSlicePitch + row * box.dstPitch,
                    src + slice * box.srcSlicePitch + row * box.srcPitch, box.width, plan,
                    operation)) {
                return e;
            }
        }
    }
    return HAL_SUCCESS;
}

// halMemcpy3DAsync's work, shared with the 2-D and synchronous forms.
halError copyBoxAsync(const halMemcpy3DParams& box, halStream handle, const char* operation) {
    halStream_t* stream = nullptr;
    if (halError e = resolveStream(handle, &stream, operation)) return e;
    if (isEmpty(box)) return HAL_SUCCESS;
    CopyPlan plan;
    if (halError e = planBox(operation, box, &plan)) return e;
    return enqueueBox(stream, box, plan, operation);
}

// halMemcpy3D's work: on the default stream of the device that owns an end (dst first), or of
// the current device, then waits for it.
halError copyBox(const halMemcpy3DParams& box, const char* operation) {
    if (isEmpty(box)) return HAL_SUCCESS;
    CopyPlan plan;
    if (halError e = planBox(operation, box, &plan)) return e;
    Device* owner = plan.dst.device() != nullptr   ? plan.dst.device()
                    : plan.src.device() != nullptr ? plan.src.device()
                                                   : currentDevice();
    if (halError e = drainSourceDevice(plan, owner, operation)) return e;
    halStream_t* stream = nullptr;
    if (halError e = defaultStream(owner, &stream)) return e;
    if (halError e = enqueueBox(stream, box, plan, operation)) return e;
    return synchronizeStream(stream, operation);
}

// The 2-D copy as a box of one slice. `kind` is copied bit for bit, not loaded: it may hold any
// value (enumBits).
halMemcpy3DParams box2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                        size_t height, const halMemcpyKind& kind) {
    halMemcpy3DParams box{};
    box.size = sizeof box;
    box.dst = dst;
    box.dstPitch = dpitch;
    box.src = src;
    box.srcPitch = spitch;
    box.width = width;
    box.height = height;
    box.depth = 1;
    std::memcpy(&box.kind, &kind, sizeof box.kind);
    return box;
}

// The error for freeing something that is not a live pool block.
halError refuseFree(const char* operation, const void* ptr) {
    const Operand where = locate(ptr);
    if (where.imported) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: {} is memory of another process (halIpcOpenMemHandle); close it with "
                    "halIpcCloseMemHandle",
                    operation, ptr);
    }
    if (where.knownHost()) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: {} is pinned host memory from halMallocHost; free it with halFreeHost",
                    operation, ptr);
    }
    return fail(HAL_ERROR_INVALID_VALUE,
                "{}: {} is not a live pool allocation (never allocated by polyhal, or freed "
                "already)",
                operation, ptr);
}

halError planMemset(const char* operation, void* dst, size_t dstMax, size_t count,
                    Operand* target) {
    if (count > dstMax) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: count ({}) is larger than dstMax ({})",
                    operation, count, dstMax);
    }
    if (count > 0 && dst == nullptr) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: dst is NULL", operation);
    }
    *target = locate(dst);
    return checkBounds(operation, "dst", *target, count);
}

// May the plugin set `target` itself? plugin.h hands it device memory of its own device only,
// or any host memory when the device reaches host memory directly.
bool pluginCanSet(const Device* device, const Operand& target) {
    return target.device() == device || device->supports(HAL_DEVICE_CAP_HOST_ACCESSIBLE);
}

struct HostMemset {
    void* dst;
    unsigned char value;
    size_t count;
};

void runHostMemset(void* pending) {
    const std::unique_ptr<HostMemset> job(static_cast<HostMemset*>(pending));
    std::memset(job->dst, job->value, job->count);
}

// Sets host memory that the stream's device cannot reach, on the host in the stream's order: in
// a host function where the backend runs them, else once the stream has drained.
halError enqueueHostMemset(halStream_t* stream, void* dst, unsigned char value, size_t count,
                           const char* operation) {
    Device* device = stream->device;
    if (!device->supports(HAL_DEVICE_CAP_HOST_FUNCTIONS)) {
        if (halError e = synchronizeStream(stream, operation)) return e;
        std::memset(dst, value, count);
        return HAL_SUCCESS;
    }
    auto pending = std::make_unique<HostMemset>(HostMemset{dst, value, count});
    if (halError e = checked(device->vtable->launchHostFunc(stream->native, runHostMemset,
                                                            pending.get()),
                             device, operation)) {
        return e;
    }
    pending.release();  // runHostMemset owns it now
    noteSubmitted(stream);
    return HAL_SUCCESS;
}

}  // namespace

extern "C" {

HAL_API halError halMalloc(void** ptr, size_t size) {
    return apiCall([&] {
        if (halError e = requireOutput(ptr, "halMalloc", "ptr")) return e;
        if (size == 0) return fail(HAL_ERROR_INVALID_VALUE, "halMalloc: size is 0");
        Device* device = currentDevice();
        halStream_t* stream = nullptr;
        if (halError e = defaultStream(device, &stream)) return e;
        void* memory = nullptr;
        if (halError e = device->pool->allocate(size, stream->poolStream, &memory)) return e;
        // The block may have been freed in the default stream's order with work still queued
        // there; every stream may use halMalloc's memory at once, so that work must be done.
        if (halError e = synchronizeStream(stream, "halMalloc")) {
            device->pool->free(memory, stream->poolStream);
            return e;
        }
        *ptr = memory;
        return HAL_SUCCESS;
    });
}

HAL_API halError halFree(void* ptr) {
    return apiCall([&] {
        if (ptr == nullptr) return HAL_SUCCESS;
        const Operand where = locate(ptr);
        Device* device = where.device();
        if (device == nullptr || where.imported) return refuseFree("halFree", ptr);
        halStream_t* stream = nullptr;
        if (halError e = defaultStream(device, &stream)) return e;
        return device->pool->free(ptr, stream->poolStream);
    });
}

HAL_API halError halMallocHost(void** ptr, size_t size) {
    return apiCall([&] {
        if (halError e = requireOutput(ptr, "halMallocHost", "ptr")) return e;
        if (size == 0) return fail(HAL_ERROR_INVALID_VALUE, "halMallocHost: size is 0");
        Device* device = currentDevice();
        void* memory = nullptr;
        if (device->vtable->memAllocHost != nullptr) {
            if (halError e = checked(device->vtable->memAllocHost(device->native, size, &memory),
                                     device, "halMallocHost")) {
                return e;
            }
        } else {
            // aligned_alloc wants a multiple of the alignment; a size that cannot be rounded up
            // would wrap to a tiny block.
            const size_t rounded = (size + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
            memory = rounded >= size ? std::aligned_alloc(kHostAlignment, rounded) : nullptr;
            if (memory == nullptr) {
                return fail(HAL_ERROR_OUT_OF_MEMORY, "halMallocHost: cannot allocate {} bytes",
                            size);
            }
        }
        runtime().hostAllocations.insert({reinterpret_cast<uintptr_t>(memory), size, device});
        *ptr = memory;
        return HAL_SUCCESS;
    });
}

HAL_API halError halFreeHost(void* ptr) {
    return apiCall([&] {
        if (ptr == nullptr) return HAL_SUCCESS;
        const auto allocation = runtime().hostAllocations.eraseExact(ptr);
        if (!allocation) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "halFreeHost: {} is not the start of a live halMallocHost allocation",
                        ptr);
        }
        Device* device = allocation->device;
        if (device->vtable->memFreeHost == nullptr) {
            std::free(ptr);
            return HAL_SUCCESS;
        }
        return checked(device->vtable->memFreeHost(device->native, ptr), device, "halFreeHost");
    });
}

HAL_API halError halMemcpyAsync(void* dst, size_t dstMax, const void* src, size_t count,
                                halMemcpyKind kind, halStream handle) {
    return apiCall([&] {
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, "halMemcpyAsync")) return e;
        CopyPlan plan;
        if (halError e = planCopy("halMemcpyAsync", dst, dstMax, src, count, enumBits(kind),
                                  &plan)) {
            return e;
        }
        if (count == 0) return HAL_SUCCESS;
        return enqueueCopy(stream, dst, src, count, plan, "halMemcpyAsync");
    });
}

HAL_API halError halMemcpy(void* dst, size_t dstMax, const void* src, size_t count,
                           halMemcpyKind kind) {
    return apiCall([&] {
        CopyPlan plan;
        if (halError e =
                planCopy("halMemcpy", dst, dstMax, src, count, enumBits(kind), &plan)) {
            return e;
        }
        if (count == 0) return HAL_SUCCESS;
        Device* owner = plan.dst.device() != nullptr   ? plan.dst.device()
                        : plan.src.device() != nullptr ? plan.src.device()
                                                       : currentDevice();
        if (halError e = drainSourceDevice(plan, owner, "halMemcpy")) return e;
        halStream_t* stream = nullptr;
        if (halError e = defaultStream(owner, &stream)) return e;
        if (halError e = enqueueCopy(stream, dst, src, count, plan, "halMemcpy")) return e;
        return synchronizeStream(stream, "halMemcpy");
    });
}

HAL_API halError halMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                  size_t width, size_t height, halMemcpyKind kind,
                                  halStream stream) {
    return apiCall([&] {
        return copyBoxAsync(box2D(dst, dpitch, src, spitch, width, height, kind), stream,
                            "halMemcpy2DAsync");
    });
}

HAL_API halError halMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch,
                             size_t width, size_t height, halMemcpyKind kind) {
    return apiCall([&] {
        return copyBox(box2D(dst, dpitch, src, spitch, width, height, kind), "halMemcpy2D");
    });
}

HAL_API halError halMemcpy3DAsync(const halMemcpy3DParams* params, halStream stream) {
    return apiCall([&] {
        halMemcpy3DParams box;
        if (halError e = readBox("halMemcpy3DAsync", params, &box)) return e;
        return copyBoxAsync(box, stream, "halMemcpy3DAsync");
    });
}

HAL_API halError halMemcpy3D(const halMemcpy3DParams* params) {
    return apiCall([&] {
        halMemcpy3DParams box;
        if (halError e = readBox("halMemcpy3D", params, &box)) return e;
        return copyBox(box, "halMemcpy3D");
    });
}

HAL_API halError halMemsetAsync(void* dst, size_t dstMax, int value, size_t count,
                                halStream handle) {
    return apiCall([&] {
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, "halMemsetAsync")) return e;
        Operand target;
        if (halError e = planMemset("halMemsetAsync", dst, dstMax, count, &target)) return e;
        if (target.device() != nullptr && target.device() != stream->device) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "halMemsetAsync: dst belongs to device {}, the stream to device {}",
                        target.device()->ordinal, stream->device->ordinal);
        }
        if (count == 0) return HAL_SUCCESS;
        const auto byte = static_cast<unsigned char>(value);
        if (!pluginCanSet(stream->device, target)) {
            return enqueueHostMemset(stream, dst, byte, count, "halMemsetAsync");
        }
        if (halError e = checked(stream->device->vtable->memsetAsync(stream->native, dst, byte,
                                                                     count),
                                 stream->device, "halMemsetAsync")) {
            return e;
        }
        noteSubmitted(stream, {dst});
        return HAL_SUCCESS;
    });
}

HAL_API halError halMemset(void* dst, size_t dstMax, int value, size_t count) {
    return apiCall([&] {
        Operand target;
        if (halError e = planMemset("halMemset", dst, dstMax, count, &target)) return e;
        if (count == 0) return HAL_SUCCESS;
        Device* device = target.device() != nullptr ? target.device() : currentDevice();
        halStream_t* stream = nullptr;
        if (halError e = defaultStream(device, &stream)) return e;
        const auto byte = static_cast<unsigned char>(value);
        if (!pluginCanSet(device, target)) {
            // Synchronous anyway: no host function needed.
            if (halError e = synchronizeStream(stream, "halMemset")) return e;
            std::memset(dst, byte, count);
            return HAL_SUCCESS;
        }
        if (halError e = checked(device->vtable->memsetAsync(stream->native, dst, byte, count),
                                 device, "halMemset")) {
            return e;
        }
        noteSubmitted(stream, {dst});
        return synchronizeStream(stream, "halMemset");
    });
}

}  // extern "C"
