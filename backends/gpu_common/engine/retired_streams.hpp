// Destroyed streams kept for reuse, where the vendor reads an event's stream after the stream may
// be gone.
//
// ROCm's hipEventRecord keeps a pointer to the stream in the event, and hipEventQuery and
// hipEventSynchronize read that stream (its capture status) with no check that it still exists:
// an event whose last record was on a stream destroyed since reads freed memory, and polyhal
// queries events after their streams are destroyed (its pool does, and so may any program, as
// CUDA allows). Where the vendor does that (Api::kEventQueriesReadTheirStream), a destroyed
// stream is kept, and the next stream created on its device with the same priority takes it
// back once it is idle. The vendor's streams then live until their device is closed, and there
// are never more of them, for a device and a priority, than polyhal streams of that device and
// priority were alive at once (plus those still busy when one was created).
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_RETIRED_STREAMS_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_RETIRED_STREAMS_HPP_

#include <memory>
#include <mutex>

#include "gpu_common/engine/kept_list.hpp"
#include "gpu_common/engine/objects.hpp"

namespace polyhal::gpu {

template <class Api>
class RetiredStreams {
  public:
    static void add(std::unique_ptr<Stream<Api>> stream) noexcept {
        const std::lock_guard<std::mutex> lock(mutex_);
        stream->nextRetired = head_;
        head_ = stream.release();
    }

    // A retired stream of `device` with `priority` whose work has finished, or nullptr. Called
    // with the device current.
    static std::unique_ptr<Stream<Api>> take(const Device<Api>* device, int priority) noexcept {
        const std::lock_guard<std::mutex> lock(mutex_);
        for (Stream<Api>** link = &head_; *link != nullptr; link = &(*link)->nextRetired) {
            Stream<Api>* stream = *link;
            if (stream->device != device || stream->priority != priority ||
                Api::symbols.streamQuery.address(stream->native) != Api::kSuccess) {
                continue;
            }
            *link = stream->nextRetired;
            stream->nextRetired = nullptr;
            return std::unique_ptr<Stream<Api>>(stream);
        }
        return nullptr;
    }

    // At a device's close, when no event of it is used any more: destroys its kept streams once
    // their work has finished, with the device current.
    static void closeDevice(const Device<Api>* device) noexcept {
        Stream<Api>* closing = nullptr;
        {
            const std::lock_guard<std::mutex> lock(mutex_);
            closing = unlinkWhere(&head_, &Stream<Api>::nextRetired,
                                  [device](const auto& stream) { return stream.device == device; });
        }
        releaseEach(closing, &Stream<Api>::nextRetired, [](Stream<Api>* kept) {
            const std::unique_ptr<Stream<Api>> stream(kept);
            (void)Api::symbols.streamSynchronize.address(stream->native);
            (void)Api::symbols.streamDestroy.address(stream->native);
        });
    }

  private:
    static inline std::mutex mutex_;
    static inline Stream<Api>* head_ = nullptr;
};

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_RETIRED_STREAMS_HPP_
