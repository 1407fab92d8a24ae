// Device and pinned host memory, copies and memsets.
#include <cstdlib>
#include <cstring>
#include <memory>

#include "api_host_memory.hpp"
#include "command_runner.hpp"
#include "copy_plan.hpp"
#include "stream_ops.hpp"

using namespace polyhal;

namespace {

constexpr size_t kHostAlignment = 4096;

// halMemcpy3DAsync's work, shared with the 2-D and synchronous forms.
halError copyBoxAsync(const halMemcpy3DParams& box, halStream handle, const char* operation) {
    halStream_t* stream = nullptr;
    if (halError e = resolveStream(handle, &stream, operation)) return e;
    if (isEmpty(box)) return HAL_SUCCESS;
    CopyPlan plan;
    if (halError e = planBox(operation, box, &plan)) return e;
    trace::noteBytes(box.width * box.height * box.depth);
    return runBox(stream, box, plan, operation);
}

// halMemcpy3D's work: on the default stream of synchronousCopyDevice, then waits for it.
halError copyBox(const halMemcpy3DParams& box, const char* operation) {
    if (isEmpty(box)) return HAL_SUCCESS;
    CopyPlan plan;
    if (halError e = planBox(operation, box, &plan)) return e;
    trace::noteBytes(box.width * box.height * box.depth);
    Device* owner = synchronousCopyDevice(plan);
    if (halError e = drainSourceDevice(plan, owner, operation)) return e;
    halStream_t* stream = nullptr;
    if (halError e = defaultStream(owner, &stream)) return e;
    if (capturing(stream)) return refuseInCapture(stream, operation);
    if (halError e = runBox(stream, box, plan, operation)) return e;
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
    if (runtime().hostRegistrations.find(ptr)) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: {} is host memory registered with halHostRegister; unregister it with "
                    "halHostUnregister and free it as it was allocated",
                    operation, ptr);
    }
    if (where.knownHost()) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: {} is pinned host memory from halMallocHost; free it with halFreeHost",
                    operation, ptr);
    }
    if (where.managed()) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: {} is inside managed memory; pass the pointer halMallocManaged returned",
                    operation, ptr);
    }
    return fail(HAL_ERROR_INVALID_VALUE,
                "{}: {} is not a live pool allocation (never allocated by polyhal, or freed "
                "already)",
                operation, ptr);
}

// May the plugin set `target` itself? plugin.h hands it device memory and managed memory of its
// own device only, or any host memory when the device reaches host memory directly.
bool pluginCanSet(const Device* device, const Operand& target) {
    return target.device() == device || target.managedBy == device ||
           device->supports(HAL_DEVICE_CAP_HOST_ACCESSIBLE);
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
        check::inStreamOrder(stream, operation, {dst, count, check::AccessMode::kWrite});
        std::memset(dst, value, count);
        return HAL_SUCCESS;
    }
    auto pending = std::make_unique<HostMemset>(HostMemset{dst, value, count});
    const std::array<check::Access, 1> accesses{{{dst, count, check::AccessMode::kWrite}}};
    return submit(stream, operation, accesses, [&] {
        const halError status =
            device->vtable->launchHostFunc(stream->native, runHostMemset, pending.get());
        if (status == HAL_SUCCESS) pending.release();  // runHostMemset owns it from now on
        return status;
    });
}

}  // namespace

extern "C" {

HAL_API halError halMalloc(void** ptr, size_t size) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        if (halError e = requireOutput(ptr, op, "ptr")) return e;
        if (size == 0) return fail(HAL_ERROR_INVALID_VALUE, "{}: size is 0", op);
        Device* device = currentDevice();
        halStream_t* stream = nullptr;
        if (halError e = defaultStream(device, &stream)) return e;
        trace::noteBytes(size);
        trace::notePool(device);
        void* memory = nullptr;
        if (halError e = allocateBlock(stream, size, op, &memory)) return e;
        // The block may have been freed in the default stream's order with work still queued
        // there; every stream may use halMalloc's memory at once, so that work must be done.
        if (halError e = synchronizeStream(stream, op)) {
            freeBlock(stream, memory, op);
            return e;
        }
        *ptr = memory;
        return HAL_SUCCESS;
    });
}

HAL_API halError halFree(void* ptr) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        if (ptr == nullptr) return HAL_SUCCESS;
        if (const auto freed = freeManaged(ptr, op)) return *freed;
        const Operand where = locate(ptr);
        Device* device = where.device();
        if (device == nullptr || where.imported) return refuseFree(op, ptr);
        if (halError e = refuseGraphOwned(ptr, op)) return e;
        halStream_t* stream = nullptr;
        if (halError e = defaultStream(device, &stream)) return e;
        trace::notePool(device);
        return freeBlock(stream, ptr, op);
    });
}

HAL_API halError halMallocHost(void** ptr, size_t size) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        if (halError e = requireOutput(ptr, op, "ptr")) return e;
        if (size == 0) return fail(HAL_ERROR_INVALID_VALUE, "{}: size is 0", op);
        Device* device = currentDevice();
        void* memory = nullptr;
        if (device->vtable->memAllocHost != nullptr) {
            if (halError e = checked(device->vtable->memAllocHost(device->native, size, &memory),
                                     device, op)) {
                return e;
            }
        } else {
            // aligned_alloc wants a multiple of the alignment; a size that cannot be rounded up
            // would wrap to a tiny block.
            const size_t rounded = (size + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
            memory = rounded >= size ? std::aligned_alloc(kHostAlignment, rounded) : nullptr;
            if (memory == nullptr) {
                return fail(HAL_ERROR_OUT_OF_MEMORY, "{}: cannot allocate {} bytes", op, size);
            }
        }
        runtime().hostAllocations.insert({reinterpret_cast<uintptr_t>(memory), size, device});
        check::allocated(nullptr, memory, size, op);
        *ptr = memory;
        return HAL_SUCCESS;
    });
}

HAL_API halError halFreeHost(void* ptr) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        if (ptr == nullptr) return HAL_SUCCESS;
        const auto allocation = runtime().hostAllocations.eraseExact(ptr);
        if (!allocation && runtime().hostRegistrations.find(ptr)) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: {} is host memory registered with halHostRegister, not from "
                        "halMallocHost; unregister it with halHostUnregister",
                        op, ptr);
        }
        if (!allocation) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: {} is not the start of a live halMallocHost allocation", op, ptr);
        }
        check::freed(nullptr, ptr, op);
        Device* device = allocation->device;
        if (device->vtable->memFreeHost == nullptr) {
            std::free(ptr);
            return HAL_SUCCESS;
        }
        return checked(device->vtable->memFreeHost(device->native, ptr), device, op);
    });
}

HAL_API halError halMemcpyAsync(void* dst, size_t dstMax, const void* src, size_t count,
                                halMemcpyKind kind, halStream handle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        CopyPlan plan;
        if (halError e = planCopy(op, dst, dstMax, src, count, enumBits(kind), &plan)) {
            return e;
        }
        if (count == 0) return HAL_SUCCESS;
        trace::noteBytes(count);
        return runCopy(stream, dst, src, count, plan, op);
    });
}

HAL_API halError halMemcpy(void* dst, size_t dstMax, const void* src, size_t count,
                           halMemcpyKind kind) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        CopyPlan plan;
        if (halError e = planCopy(op, dst, dstMax, src, count, enumBits(kind), &plan)) {
            return e;
        }
        if (count == 0) return HAL_SUCCESS;
        trace::noteBytes(count);
        Device* owner = synchronousCopyDevice(plan);
        if (halError e = drainSourceDevice(plan, owner, op)) return e;
        halStream_t* stream = nullptr;
        if (halError e = defaultStream(owner, &stream)) return e;
        if (capturing(stream)) return refuseInCapture(stream, op);
        if (halError e = runCopy(stream, dst, src, count, plan, op)) return e;
        return synchronizeStream(stream, op);
    });
}

HAL_API halError halMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                  size_t width, size_t height, halMemcpyKind kind,
                                  halStream stream) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        return copyBoxAsync(box2D(dst, dpitch, src, spitch, width, height, kind), stream, op);
    });
}

HAL_API halError halMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                             size_t height, halMemcpyKind kind) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        return copyBox(box2D(dst, dpitch, src, spitch, width, height, kind), op);
    });
}

HAL_API halError halMemcpy3DAsync(const halMemcpy3DParams* params, halStream stream) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        halMemcpy3DParams box;
        if (halError e = readBox(op, params, &box)) return e;
        return copyBoxAsync(box, stream, op);
    });
}

HAL_API halError halMemcpy3D(const halMemcpy3DParams* params) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        halMemcpy3DParams box;
        if (halError e = readBox(op, params, &box)) return e;
        return copyBox(box, op);
    });
}

HAL_API halError halMemsetAsync(void* dst, size_t dstMax, int value, size_t count,
                                halStream handle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        Operand target;
        if (halError e = planMemset(op, dst, dstMax, count, &target)) return e;
        if (target.device() != nullptr && target.device() != stream->device) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: dst belongs to device {}, the stream to device {}", op,
                        target.device()->ordinal, stream->device->ordinal);
        }
        if (count == 0) return HAL_SUCCESS;
        trace::noteBytes(count);
        const auto byte = static_cast<unsigned char>(value);
        if (pluginCanSet(stream->device, target)) {
            return runCommand(stream, MemsetCommand{dst, byte, count}, op);
        }
        if (capturing(stream)) {
            return refuseInCapture(stream, op,
                                   "a memset of host memory the device cannot reach cannot be "
                                   "captured");
        }
        return enqueueHostMemset(stream, dst, byte, count, op);
    });
}

HAL_API halError halMemset(void* dst, size_t dstMax, int value, size_t count) {
    return apiCall(__func__, CallPolicy::kWaitsForDevice, [&, op = __func__] {
        Operand target;
        if (halError e = planMemset(op, dst, dstMax, count, &target)) return e;
        if (count == 0) return HAL_SUCCESS;
        trace::noteBytes(count);
        Device* device = target.device() != nullptr ? target.device() : currentDevice();
        halStream_t* stream = nullptr;
        if (halError e = defaultStream(device, &stream)) return e;
        const auto byte = static_cast<unsigned char>(value);
        if (!pluginCanSet(device, target)) {
            // Synchronous anyway: no host function needed.
            if (halError e = synchronizeStream(stream, op)) return e;
            check::inStreamOrder(stream, op, {dst, count, check::AccessMode::kWrite});
            std::memset(dst, byte, count);
            return HAL_SUCCESS;
        }
        if (halError e = submitCommand(stream, MemsetCommand{dst, byte, count}, op)) return e;
        return synchronizeStream(stream, op);
    });
}

}  // extern "C"
