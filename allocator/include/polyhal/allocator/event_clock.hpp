// What an event's latest record captured, in the pool's happens-before terms. The core keeps one
// in each event object.
//
// The clock is taken before each backend call and applied after it succeeds, so polyhal never
// claims more ordering than the device gave. Queries, synchronisations and waits apply the clock
// in place instead of copying it (they run often), and only if no record of the event began
// since they read the generation, nor was under way then: otherwise they claim nothing, which is
// always safe. A record whose completion the pool has already been told about is not applied
// again.
//
// Why "began", not "was published": a backend wait, query or synchronisation acts on the
// backend's latest record of the event, and a record reaches the backend before its clock is
// published here. Checking only the published generation let a wait that overlapped a newer
// record (another thread recording the same event on another stream) apply the old record's
// clock although the backend had made the stream wait for the new record's stream: the pool
// then reused a block on a stream that was not ordered after its last use. On the CPU backend
// two stream workers then wrote the same block with no happens-before edge between them
// (ThreadSanitizer's report); on any backend it is a real early reuse, whatever the memory
// model. Records of one event are therefore serialised (Recording), and each one announces
// itself before its backend call.
#ifndef POLYHAL_ALLOCATOR_EVENT_CLOCK_HPP_
#define POLYHAL_ALLOCATOR_EVENT_CLOCK_HPP_

#include <polyhal/allocator/vector_clock.hpp>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <utility>

namespace polyhal::allocator {

class EventClock {
  public:
    // One record of the event, from before its backend call until its clock is published:
    //     EventClock::Recording recording(event.clock);
    //     capture the stream's clock; backend eventRecord;
    //     on success: recording.commit(captured);
    // Records of one event run one at a time. A recording dropped without commit (the backend
    // call failed) leaves the event as it was.
    class Recording {
      public:
        explicit Recording(EventClock& clock) : clock_(clock), lock_(clock.recordMutex_) {
            clock_.started_.fetch_add(1, std::memory_order_acq_rel);
        }
        Recording(const Recording&) = delete;
        Recording& operator=(const Recording&) = delete;
        ~Recording() {
            if (!committed_) clock_.started_.fetch_sub(1, std::memory_order_acq_rel);
        }

        // The backend record succeeded: `captured` is the stream's clock taken before it. It is
        // swapped in, so `captured` comes back holding the previous clock's storage for reuse.
        void commit(VectorClock& captured) {
            std::lock_guard<std::mutex> lock(clock_.mutex_);
            std::swap(clock_.clock_, captured);
            clock_.published_.store(clock_.started_.load(std::memory_order_relaxed),
                                    std::memory_order_release);
            committed_ = true;
        }

      private:
        EventClock& clock_;
        std::lock_guard<std::mutex> lock_;
        bool committed_ = false;
    };

    // Identifies the latest record; read it before the backend call. 0 while a record is under
    // way (or none was made): nothing will be claimed then.
    uint64_t generation() const {
        const uint64_t published = published_.load(std::memory_order_acquire);
        return started_.load(std::memory_order_acquire) == published ? published : 0;
    }

    // Calls fn(clock) if record `generation` is still the latest and no record began since.
    template <typename Fn>
    void applyIfCurrent(uint64_t generation, Fn&& fn) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (isCurrent(generation)) fn(clock_);
    }

    // Calls fn(clock) once per record: after a query or synchronisation found record
    // `generation` complete. Cheap when the pool already knows.
    template <typename Fn>
    void completeOnce(uint64_t generation, Fn&& fn) {
        if (generation == 0 || observed_.load(std::memory_order_acquire) == generation) return;
        std::lock_guard<std::mutex> lock(mutex_);
        if (!isCurrent(generation)) return;
        fn(clock_);
        observed_.store(generation, std::memory_order_release);
    }

  private:
    // A record that began after the backend call was made may have been what the backend
    // acted on; a record announces itself (started_) before its own backend call, so seeing
    // started_ unchanged after the call proves the call acted on record `generation`.
    bool isCurrent(uint64_t generation) const {
        return generation != 0 && started_.load(std::memory_order_acquire) == generation;
    }

    std::mutex recordMutex_;  // held by a Recording for the whole record
    std::mutex mutex_;
    VectorClock clock_;
    std::atomic<uint64_t> started_{0};    // records begun (the one under way included)
    std::atomic<uint64_t> published_{0};  // generation of the latest record (0: never recorded)
    std::atomic<uint64_t> observed_{0};   // latest generation the pool saw complete
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_EVENT_CLOCK_HPP_
