// Copies: operand location, kind resolution, bounds, and the path (local, peer or staged).
#include "copy_plan.hpp"

#include <polyhal/box_rows.hpp>

#include <algorithm>
#include <cstring>
#include <memory>

#include "command_runner.hpp"
#include "stream_ops.hpp"

namespace polyhal {

namespace {

// Cross-backend device-to-device copies travel through a host buffer of at most this size.
constexpr size_t kStagingChunk = 8u << 20;

const char* kindName(halMemcpyKind kind) {
    switch (kind) {
    case HAL_MEMCPY_HOST_TO_HOST: return "HAL_MEMCPY_HOST_TO_HOST";
    case HAL_MEMCPY_HOST_TO_DEVICE: return "HAL_MEMCPY_HOST_TO_DEVICE";
    case HAL_MEMCPY_DEVICE_TO_HOST: return "HAL_MEMCPY_DEVICE_TO_HOST";
    case HAL_MEMCPY_DEVICE_TO_DEVICE: return "HAL_MEMCPY_DEVICE_TO_DEVICE";
    default: return "HAL_MEMCPY_DEFAULT";
    }
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
        *resolved = fromDevice
                        ? (toDevice ? HAL_MEMCPY_DEVICE_TO_DEVICE : HAL_MEMCPY_DEVICE_TO_HOST)
                        : (toDevice ? HAL_MEMCPY_HOST_TO_DEVICE : HAL_MEMCPY_HOST_TO_HOST);
        return HAL_SUCCESS;
    }
    const bool fromDevice =
        kind == HAL_MEMCPY_DEVICE_TO_HOST || kind == HAL_MEMCPY_DEVICE_TO_DEVICE;
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

// Refuses a copy whose `dstBytes` at `dst` and `srcBytes` at `src` share a byte: vendors
// refuse it (OpenCL's CL_MEM_COPY_OVERLAP, Level Zero's ZE_RESULT_ERROR_OVERLAPPING_REGIONS) or
// leave it undefined (CUDA's "the memory areas may not overlap"), and the core refuses it
// before any of them sees it, so that every backend, and a graph captured from the call,
// behaves alike.
halError checkDisjoint(const char* operation, const void* dst, size_t dstBytes, const void* src,
                       size_t srcBytes) {
    const auto to = reinterpret_cast<uintptr_t>(dst);
    const auto from = reinterpret_cast<uintptr_t>(src);
    const bool overlap = to >= from ? to - from < srcBytes : from - to < dstBytes;
    if (!overlap || dstBytes == 0 || srcBytes == 0) return HAL_SUCCESS;
    return fail(HAL_ERROR_INVALID_VALUE,
                "{}: the {} bytes written at dst ({}) overlap the {} bytes read at src ({}); "
                "copy through a separate buffer",
                operation, dstBytes, dst, srcBytes, src);
}

// One synchronous copy step on `device`'s default stream.
halError copyOnDevice(Device* device, void* dst, const void* src, size_t count, halMemcpyKind kind,
                      const char* operation) {
    halStream_t* stream = nullptr;
    if (halError e = defaultStream(device, &stream)) return e;
    if (halError e = submitCommand(stream, CopyCommand{dst, src, count, kind}, operation)) {
        return e;
    }
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
                                      staging.get(), bytes, HAL_MEMCPY_HOST_TO_DEVICE, operation)) {
            return e;
        }
    }
    return HAL_SUCCESS;
}

// Do both ends of `plan` live where the plugin of `stream` copies them itself (its device's
// memory, or host memory)?
bool local(const halStream_t* stream, const CopyPlan& plan) {
    const Device* dst = plan.dst.device();
    const Device* src = plan.src.device();
    return (dst == nullptr || dst == stream->device) && (src == nullptr || src == stream->device);
}

halError refuseAcrossDevices(halStream_t* stream, const char* operation) {
    return refuseInCapture(stream, operation,
                           "a copy between devices, or through the host, cannot be captured");
}

// Can `stream` copy between two devices through their backend's peer path? plugin.h takes a
// stream of either device.
bool peerCopyPossible(const halStream_t* stream, const Device* dstDevice, const Device* srcDevice) {
    return dstDevice != nullptr && srcDevice != nullptr &&
           dstDevice->backend == srcDevice->backend &&
           (stream->device == dstDevice || stream->device == srcDevice) &&
           stream->device->supports(HAL_DEVICE_CAP_PEER_COPY);
}

// A copy between two devices of one backend, in `stream`'s order, without host staging.
halError enqueuePeerCopy(halStream_t* stream, void* dst, Device* dstDevice, const void* src,
                         Device* srcDevice, size_t count, const char* operation) {
    Device* device = stream->device;
    if (halError e = submit(stream, operation, check::copyAccesses(dst, src, count), [&] {
            return device->vtable->memcpyPeerAsync(stream->native, dst, dstDevice->native, src,
                                                   srcDevice->native, count);
        })) {
        return e;
    }
    const bool held = device == dstDevice ? holdOnDevice(stream, srcDevice, src)
                                          : holdOnDevice(stream, dstDevice, dst);
    // The copy is enqueued either way; unheld, it must be over before the call returns.
    return held ? HAL_SUCCESS : synchronizeStream(stream, operation);
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

}  // namespace

std::array<check::Access, 2> boxAccesses(const halMemcpy3DParams& box) {
    size_t dstSpan = 0, srcSpan = 0;  // planBox found that neither overflows
    boxSpan(box, box.dstPitch, box.dstSlicePitch, &dstSpan);
    boxSpan(box, box.srcPitch, box.srcSlicePitch, &srcSpan);
    return {check::Access{box.dst, dstSpan, check::AccessMode::kWrite},
            check::Access{box.src, srcSpan, check::AccessMode::kRead}};
}

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
    // Registered memory is pinned as halMallocHost's is. Managed memory is taken for host memory
    // when a copy's kind is inferred (the plugin accepts it as either), and contradicts no kind.
    const Runtime& rt = runtime();
    for (const AddressRanges* ranges : {&rt.hostAllocations, &rt.hostRegistrations}) {
        if (const auto host = ranges->find(pointer)) {
            operand.pinnedHost = true;
            operand.base = host->base;
            operand.size = host->size;
            return operand;
        }
    }
    if (const auto managed = rt.managedAllocations.find(pointer)) {
        operand.managedBy = managed->device;
        operand.base = managed->base;
        operand.size = managed->size;
    }
    return operand;
}

halError planCopy(const char* operation, void* dst, size_t dstMax, const void* src, size_t count,
                  uint32_t kindBits, CopyPlan* plan) {
    if (count > dstMax) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: count ({}) is larger than dstMax ({})", operation,
                    count, dstMax);
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
    if (halError e = checkBounds(operation, "src", plan->src, count)) return e;
    return checkDisjoint(operation, dst, count, src, count);
}

halError drainSourceDevice(const CopyPlan& plan, Device* owner, const char* operation) {
    Device* source = plan.src.device();
    if (source == nullptr || source == owner) return HAL_SUCCESS;
    halStream_t* stream = nullptr;
    if (halError e = defaultStream(source, &stream)) return e;
    return synchronizeStream(stream, operation);
}

halError runCopy(halStream_t* stream, void* dst, const void* src, size_t count,
                 const CopyPlan& plan, const char* operation) {
    Device* dstDevice = plan.dst.device();
    Device* srcDevice = plan.src.device();
    if (local(stream, plan)) {
        return runCommand(stream, CopyCommand{dst, src, count, plan.kind}, operation);
    }
    if (capturing(stream)) return refuseAcrossDevices(stream, operation);
    if (peerCopyPossible(stream, dstDevice, srcDevice)) {
        return enqueuePeerCopy(stream, dst, dstDevice, src, srcDevice, count, operation);
    }
    if (halError e = synchronizeStream(stream, operation)) return e;
    return copyAcrossDevices(dst, dstDevice, src, srcDevice, count, operation);
}

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
    if (halError e =
            resolveKind(operation, enumBits(box.kind), plan->dst, plan->src, &plan->kind)) {
        return e;
    }
    if (halError e = checkBounds(operation, "dst", plan->dst, dstSpan)) return e;
    if (halError e = checkBounds(operation, "src", plan->src, srcSpan)) return e;
    // From each end's first byte to its last: rows of one end between rows of the other overlap
    // too, as a Level Zero region copy and cudaMemcpy3D count them.
    return checkDisjoint(operation, box.dst, dstSpan, box.src, srcSpan);
}

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

halError runBox(halStream_t* stream, const halMemcpy3DParams& box, const CopyPlan& plan,
                const char* operation) {
    if (isContiguous(box)) {
        return runCopy(stream, box.dst, box.src, box.width * box.height * box.depth, plan,
                       operation);
    }
    if (local(stream, plan) && stream->device->vtable->memcpy3DAsync != nullptr) {
        BoxCommand command{box};
        command.box.kind = plan.kind;
        return runCommand(stream, command, operation);
    }
    auto* dst = static_cast<unsigned char*>(box.dst);
    const auto* src = static_cast<const unsigned char*>(box.src);
    return forEachBoxRow(box, [&](size_t dstOffset, size_t srcOffset) {
        return runCopy(stream, dst + dstOffset, src + srcOffset, box.width, plan, operation);
    });
}

halError planMemset(const char* operation, void* dst, size_t dstMax, size_t count,
                    Operand* target) {
    if (count > dstMax) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: count ({}) is larger than dstMax ({})", operation,
                    count, dstMax);
    }
    if (count > 0 && dst == nullptr) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: dst is NULL", operation);
    }
    *target = locate(dst);
    return checkBounds(operation, "dst", *target, count);
}

}  // namespace polyhal
