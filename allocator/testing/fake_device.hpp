// A deterministic, in-process device for unit tests and benchmarks of the pool.
//
// Nothing runs by itself: an operation submitted to a stream finishes only when the test
// advances that stream, or when a synchronisation needs it (the device "catches up" then). So
// every interleaving of host and device is chosen by the test, and the fake can answer, from its
// own graph of operations, whether one operation is ordered before another: the oracle the
// pool's vector clocks are checked against. Memory is address space only; it is never touched.
#ifndef POLYHAL_ALLOCATOR_TESTING_FAKE_DEVICE_HPP_
#define POLYHAL_ALLOCATOR_TESTING_FAKE_DEVICE_HPP_

#include <polyhal/allocator/device_interface.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace polyhal::allocator::testing {

class FakeDevice final : public DeviceInterface {
  public:
    using OpId = size_t;
    static constexpr OpId kNoOp = ~OpId{0};
    struct Stream;
    struct Event;

    struct Counters {
        uint64_t allocations = 0;
        uint64_t frees = 0;
        uint64_t invalidFrees = 0;  // frees of memory this device did not hand out
        uint64_t eventsCreated = 0;
        uint64_t eventsDestroyed = 0;
        uint64_t eventRecords = 0;
        uint64_t eventQueries = 0;
        uint64_t eventSynchronizations = 0;
        uint64_t streamSynchronizations = 0;
    };

    // `capacity`: bytes allocateMemory may hand out at once before HAL_ERROR_OUT_OF_MEMORY.
    explicit FakeDevice(uint64_t capacity = UINT64_MAX);
    ~FakeDevice() override;

    // ---- What a backend offers the core.
    Stream* createStream();
    // Work already submitted still runs when advanced.
    void destroyStream(Stream* stream);
    OpId submit(Stream* stream);  // one operation (a copy, a kernel, ...)
    void wait(Stream* stream, Event* event);
    void record(Event* event, Stream* stream);
    halError query(Event* event);
    void synchronize(Event* event);
    void synchronizeStream(Stream* stream);
    void synchronizeDevice();
    Event* createUserEvent();

    // ---- Progress, chosen by the test.
    // Runs up to `maxOps` operations of `stream` in order, stopping at a wait whose event has
    // not finished. Returns how many ran.
    size_t advance(Stream* stream, size_t maxOps = ~size_t{0});
    // Runs everything that can run.
    void advanceAll();

    // ---- The oracle.
    bool finished(OpId op) const;
    // Whether `op` is ordered (by stream order and waits) before the next operation `stream`
    // would run.
    bool orderedBefore(OpId op, Stream* stream) const;

    Counters counters() const;
    uint64_t bytesAllocated() const;
    void setCapacity(uint64_t capacity);
    // The message of the pool's latest failure (setErrorMessage), for this thread.
    std::string lastErrorMessage() const;

    // ---- DeviceInterface
    halError allocateMemory(size_t size, void** ptr) override;
    halError freeMemory(void* ptr) override;
    halError createEvent(DeviceEvent* event) override;
    void destroyEvent(DeviceEvent event) override;
    halError recordEvent(DeviceEvent event, DeviceStream stream) override;
    halError queryEvent(DeviceEvent event) override;
    halError synchronizeEvent(DeviceEvent event) override;
    void setErrorMessage(const char* message) override;

  private:
    struct Op {
        Stream* stream;
        size_t seq;    // position within its stream
        OpId waitFor;  // a wait: the operation its event captured
        bool done;
    };

    OpId enqueueLocked(Stream* stream, OpId waitFor);
    void runUntilLocked(OpId op);
    bool eventFinishedLocked(const Event* event) const;
    Event* newEventLocked();

    mutable std::mutex mutex_;
    std::vector<Op> ops_;
    std::vector<std::unique_ptr<Stream>> streams_;
    std::vector<std::unique_ptr<Event>> events_;
    std::map<uintptr_t, size_t> memory_;
    uintptr_t nextAddress_;
    uint64_t capacity_;
    uint64_t allocated_ = 0;
    Counters counters_;
};

}  // namespace polyhal::allocator::testing

#endif  // POLYHAL_ALLOCATOR_TESTING_FAKE_DEVICE_HPP_
