// Stream-ordered allocation and the pool's statistics and controls.
#include <algorithm>
#include <cstring>

#include "stream_ops.hpp"

using namespace polyhal;

namespace {

halError requirePoolDevice(int ordinal, Device** device, const char* operation) {
    const int count = static_cast<int>(runtime().devices.size());
    if (ordinal < 0 || ordinal >= count) {
        return fail(HAL_ERROR_INVALID_DEVICE, "{}: device {} does not exist ({} devices)",
                    operation, ordinal, count);
    }
    *device = runtime().devices[ordinal].get();
    return HAL_SUCCESS;
}

halError requireSwitch(uint64_t value, const char* operation) {
    if (value <= 1) return HAL_SUCCESS;
    return fail(HAL_ERROR_INVALID_VALUE, "{}: a switch attribute takes 0 or 1, not {}", operation,
                value);
}

}  // namespace

extern "C" {

HAL_API halError halMallocAsync(void** ptr, size_t size, halStream handle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (halError e = requireOutput(ptr, op, "ptr")) return e;
        if (size == 0) return fail(HAL_ERROR_INVALID_VALUE, "{}: size is 0", op);
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        trace::noteBytes(size);
        if (capturing(stream)) return captureMallocAsync(stream, size, ptr, op);
        if (halError e = allocateBlock(stream, size, op, ptr)) return e;
        check::inStreamOrder(stream, op, {*ptr, size, check::AccessMode::kWrite});
        return HAL_SUCCESS;
    });
}

HAL_API halError halFreeAsync(void* ptr, halStream handle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        if (ptr == nullptr) return fail(HAL_ERROR_INVALID_VALUE, "{}: ptr is NULL", op);
        if (capturing(stream)) return captureFreeAsync(stream, ptr, op);
        if (halError e = refuseGraphOwned(ptr, op)) return e;
        // The pool looks the block up once; only a refusal looks further, to say whose it is.
        const halError freed = freeBlock(stream, ptr, op);
        if (freed != HAL_ERROR_INVALID_VALUE) return freed;
        allocator::Allocation allocation;
        for (const auto& device : runtime().devices) {
            if (device.get() != stream->device && device->pool->find(ptr, &allocation)) {
                return fail(HAL_ERROR_INVALID_VALUE,
                            "{}: {} belongs to device {}'s pool, the stream to device {}", op, ptr,
                            device->ordinal, stream->device->ordinal);
            }
        }
        return freed;
    });
}

HAL_API halError halRecordStream(void* ptr, halStream handle) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        if (ptr == nullptr) return fail(HAL_ERROR_INVALID_VALUE, "{}: ptr is NULL", op);
        halStream_t* stream = nullptr;
        if (halError e = resolveStream(handle, &stream, op)) return e;
        recordUse(stream, ptr);
        return HAL_SUCCESS;
    });
}

HAL_API halError halMemPoolGetStats(int ordinal, halMemPoolStats* stats) {
    return apiCall(__func__, CallPolicy::kHostOnly, [&, op = __func__] {
        if (halError e = requireOutput(stats, op, "stats")) return e;
        const size_t minimum = offsetof(halMemPoolStats, bytesInUse) + sizeof(stats->bytesInUse);
        if (stats->size < minimum) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "{}: stats->size is {}; set it to sizeof(halMemPoolStats) ({})", op,
                        stats->size, sizeof(halMemPoolStats));
        }
        Device* device = nullptr;
        if (halError e = requirePoolDevice(ordinal, &device, op)) return e;
        const allocator::PoolStats pool = device->pool->stats();
        halMemPoolStats full{};
        full.size = sizeof(full);
        full.bytesInUse = pool.bytesInUse;
        full.peakBytesInUse = pool.peakBytesInUse;
        full.bytesReserved = pool.bytesReserved;
        full.peakBytesReserved = pool.peakBytesReserved;
        full.bytesCached = pool.bytesCached;
        full.bytesPending = pool.bytesPending;
        full.reusedSameStream = pool.reusedSameStream;
        full.reusedProvenOrder = pool.reusedProvenOrder;
        full.reusedObservedComplete = pool.reusedObservedComplete;
        full.newSegments = pool.newSegments;
        full.oomSynchronized = pool.oomSynchronized;
        full.backendAllocations = pool.backendAllocations;
        full.backendFrees = pool.backendFrees;
        const size_t size = std::min(stats->size, sizeof(full));
        std::memcpy(stats, &full, size);
        stats->size = size;
        return HAL_SUCCESS;
    });
}

HAL_API halError halMemPoolTrim(int ordinal, size_t bytesToKeep) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        Device* device = nullptr;
        if (halError e = requirePoolDevice(ordinal, &device, op)) return e;
        trace::poolTrimming(device, bytesToKeep);
        return device->pool->trim(bytesToKeep);
    });
}

HAL_API halError halMemPoolSetAttribute(int ordinal, halMemPoolAttribute attribute,
                                        uint64_t value) {
    return apiCall(__func__, CallPolicy::kReachesDevice, [&, op = __func__] {
        Device* device = nullptr;
        if (halError e = requirePoolDevice(ordinal, &device, op)) return e;
        allocator::PoolAttributes attributes = device->pool->attributes();
        switch (enumBits(attribute)) {
        case HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD: attributes.releaseThreshold = value; break;
        case HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER:
            if (halError e = requireSwitch(value, op)) return e;
            attributes.reuseProvenOrder = value != 0;
            break;
        case HAL_MEMPOOL_ATTR_REUSE_OBSERVED_COMPLETION:
            if (halError e = requireSwitch(value, op)) return e;
            attributes.reuseObservedCompletion = value != 0;
            break;
        default:
            return fail(HAL_ERROR_INVALID_VALUE, "{}: unknown attribute {}", op,
                        enumBits(attribute));
        }
        device->pool->setAttributes(attributes);
        return HAL_SUCCESS;
    });
}

HAL_API halError halMemPoolGetAttribute(int ordinal, halMemPoolAttribute attribute,
                                        uint64_t* value) {
    return apiCall(__func__, CallPolicy::kHostOnly, [&, op = __func__] {
        if (halError e = requireOutput(value, op, "value")) return e;
        Device* device = nullptr;
        if (halError e = requirePoolDevice(ordinal, &device, op)) return e;
        const allocator::PoolAttributes attributes = device->pool->attributes();
        switch (enumBits(attribute)) {
        case HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD:
            *value = attributes.releaseThreshold;
            return HAL_SUCCESS;
        case HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER:
            *value = attributes.reuseProvenOrder ? 1 : 0;
            return HAL_SUCCESS;
        case HAL_MEMPOOL_ATTR_REUSE_OBSERVED_COMPLETION:
            *value = attributes.reuseObservedCompletion ? 1 : 0;
            return HAL_SUCCESS;
        default:
            return fail(HAL_ERROR_INVALID_VALUE, "{}: unknown attribute {}", op,
                        enumBits(attribute));
        }
    });
}

}  // extern "C"
