// Device memory returned to the vendor on a thread of its device, so that no entry waits for it.
//
// The vendors release in stream order only memory of their memory pools. A free of other memory
// waits for the whole device: cuMemFree, and clr's hipFreeAsync, which hands memory no HIP pool
// holds to hipFree and its SyncAllStreams (ROCm/clr hipamd/src/hip_mempool.cpp:164-172,
// hipamd/src/hip_memory.cpp:80); NVIDIA documents cuMemFreeAsync for stream-ordered allocations
// only. memAllocDevice's memory is of that other kind: it must stay exportable with
// cuIpcGetMemHandle, which takes memory "created with cuMemAlloc", and HIP shares the mechanism.
// Called from memFreeDevice, such a free would make halFree, halMemPoolTrim and the pool's release
// threshold wait for every stream, and wait forever for a stream held by a host function the caller
// opens afterwards.
//
// memFreeDevice's contract (plugin.h) is that no submitted work uses the memory any more, so no
// event has to complete first: the memory is queued, and the device's free thread, started on
// the first free, makes the device current once and frees what is queued with the vendor's plain
// free, waiting for the device there instead. A free costs the caller a lock and a wake-up.
//
// Memory queued here is the program's again, so memGetInfo counts it free (torch.cuda's
// empty_cache followed by mem_get_info must show the release); for that the queue learns each
// allocation's size when it is made.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_DEFERRED_FREES_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_DEFERRED_FREES_HPP_

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "gpu_common/engine/vendor_call.hpp"

namespace polyhal::gpu {

template <class Api>
class DeferredFrees {
  public:
    DeferredFrees() = default;
    DeferredFrees(const DeferredFrees&) = delete;
    DeferredFrees& operator=(const DeferredFrees&) = delete;
    ~DeferredFrees() { stop(); }

    // Notes the size of `pointer`, memory just allocated, for queuedBytes. Without host memory
    // for the note, the memory counts as used until the free thread has freed it.
    void allocated(void* pointer, size_t size) noexcept {
        const std::lock_guard<std::mutex> lock(mutex_);
        try {
            sizes_.emplace(pointer, size);
        } catch (const std::bad_alloc&) {
        }
    }

    // Queues `pointer`, memory of the device whose context is `context`, for the free thread.
    // Where no thread can be started or the queue cannot grow (no host memory), frees at once,
    // waiting for the device, with the caller's current context (the device's).
    halError free(typename Api::Context context, void* pointer) noexcept {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            const size_t size = forget(pointer);
            if (startThread(context) && enqueue(pointer, size)) {
                queued_.notify_one();
                return HAL_SUCCESS;
            }
        }
        return call<Api>(Api::symbols.memFree, Api::toDevicePointer(pointer));
    }

    // Bytes queued and not yet returned to the vendor.
    size_t queuedBytes() const noexcept {
        const std::lock_guard<std::mutex> lock(mutex_);
        return queuedBytes_;
    }

    // Returns once everything queued before the call has been freed: an allocation that finds the
    // device exhausted waits for it before trying again.
    void drain() noexcept {
        std::unique_lock<std::mutex> lock(mutex_);
        const uint64_t target = queuedCount_;
        freed_.wait(lock, [&] { return freedCount_ >= target; });
    }

    // Frees what is queued and ends the thread, before the device's context goes (deviceClose).
    void stop() noexcept {
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            stopping_ = true;
        }
        queued_.notify_one();
        if (thread_.joinable()) thread_.join();
    }

  private:
    // Under mutex_. std::thread reports a thread it cannot start by throwing.
    bool startThread(typename Api::Context context) noexcept {
        if (thread_.joinable()) return true;
        if (stopping_) return false;
        try {
            thread_ = std::thread([this, context] { run(context); });
        } catch (const std::system_error&) {
            return false;
        }
        return true;
    }

    // Under mutex_: the size noted for `pointer` (0 when none was), and the note dropped.
    size_t forget(void* pointer) noexcept {
        const auto it = sizes_.find(pointer);
        if (it == sizes_.end()) return 0;
        const size_t size = it->second;
        sizes_.erase(it);
        return size;
    }

    // Under mutex_.
    bool enqueue(void* pointer, size_t size) noexcept {
        try {
            pending_.push_back({pointer, size});
        } catch (const std::bad_alloc&) {
            return false;
        }
        ++queuedCount_;
        queuedBytes_ += size;
        return true;
    }

    // The two lists trade places, so their storage is reused and a free allocates nothing once
    // the queue has grown to its usual length.
    void run(typename Api::Context context) noexcept {
        typename Api::Context previous{};
        bool switched = false;
        const halError entered = Api::enterContext(context, &previous, &switched);
        std::vector<Queued> batch;
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            queued_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
            if (pending_.empty()) break;
            batch.swap(pending_);
            lock.unlock();
            for (const Queued& queued : batch) release(queued.pointer, entered);
            lock.lock();
            freedCount_ += batch.size();
            for (const Queued& queued : batch) queuedBytes_ -= queued.size;
            batch.clear();
            freed_.notify_all();
        }
        lock.unlock();
        if (switched) Api::leaveContext(previous);
    }

    // Nobody is left to return a failure to; only a faulted or dying device fails here.
    static void release(void* pointer, halError entered) noexcept {
        const auto& memFree = Api::symbols.memFree;
        const typename Api::Result result = memFree.address(Api::toDevicePointer(pointer));
        if (result == Api::kSuccess) return;
        const char* name = nullptr;
        const char* text = nullptr;
        Api::describe(result, &name, &text);
        plugin::log(HAL_LOG_WARN, "%s(%p) on the free thread%s: %s (%s)", memFree.name, pointer,
                    entered == HAL_SUCCESS ? "" : ", the device not current", name, text);
    }

    struct Queued {
        void* pointer;
        size_t size;
    };

    mutable std::mutex mutex_;
    std::condition_variable queued_;
    std::condition_variable freed_;
    std::unordered_map<void*, size_t> sizes_;
    std::vector<Queued> pending_;
    size_t queuedBytes_ = 0;
    uint64_t queuedCount_ = 0;
    uint64_t freedCount_ = 0;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_DEFERRED_FREES_HPP_
