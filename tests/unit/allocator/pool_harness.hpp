// Drives a DevicePool over the fake device the way the core drives it over a plugin: every
// helper calls the backend and the pool hooks in the order device_pool.h prescribes.
#ifndef POLYHAL_TESTS_ALLOCATOR_POOL_HARNESS_HPP_
#define POLYHAL_TESTS_ALLOCATOR_POOL_HARNESS_HPP_

#include <fake_device.hpp>
#include <polyhal/allocator/device_pool.hpp>
#include <polyhal/allocator/event_clock.hpp>

#include <cstdint>
#include <deque>

namespace polyhal::allocator::testing {

constexpr size_t kKiB = size_t{1} << 10;
constexpr size_t kMiB = size_t{1} << 20;

struct TestStream {
    FakeDevice::Stream* device;
    Stream* pool;
};

struct TestEvent {
    FakeDevice::Event* device;
    EventClock clock;
};

class PoolHarness {
  public:
    explicit PoolHarness(uint64_t capacity = UINT64_MAX) : device(capacity), pool(device) {}

    TestStream stream() {
        FakeDevice::Stream* backend = device.createStream();
        return {backend, pool.addStream(backend)};
    }
    halError destroy(TestStream stream) {
        const halError result = pool.removeStream(stream.pool);
        device.destroyStream(stream.device);
        return result;
    }

    halError tryAllocate(size_t size, TestStream stream, void** ptr) {
        return pool.allocate(size, stream.pool, ptr);
    }
    // Returns nullptr when the allocation fails.
    void* allocate(size_t size, TestStream stream) {
        void* ptr = nullptr;
        return pool.allocate(size, stream.pool, &ptr) == HAL_SUCCESS ? ptr : nullptr;
    }
    halError free(void* ptr, TestStream stream) { return pool.free(ptr, stream.pool); }

    // An operation on `stream` that reads or writes `ptr` (a copy, a kernel argument).
    FakeDevice::OpId use(void* ptr, TestStream stream) {
        const FakeDevice::OpId op = device.submit(stream.device);
        pool.recordUse(ptr, stream.pool, pool.submitted(stream.pool));
        return op;
    }
    // An operation that touches no pool memory.
    FakeDevice::OpId work(TestStream stream) {
        const FakeDevice::OpId op = device.submit(stream.device);
        pool.submitted(stream.pool);
        return op;
    }

    TestEvent& event() {
        events_.emplace_back();
        events_.back().device = device.createUserEvent();
        return events_.back();
    }
    void record(TestEvent& event, TestStream stream) {
        EventClock::Recording recording(event.clock);
        VectorClock clock = pool.capture(stream.pool);
        device.record(event.device, stream.device);
        recording.commit(clock);
    }
    void wait(TestStream stream, TestEvent& event) {
        const uint64_t record = event.clock.generation();
        device.wait(stream.device, event.device);
        event.clock.applyIfCurrent(
            record, [&](const VectorClock& clock) { pool.streamWaited(stream.pool, clock); });
    }
    bool query(TestEvent& event) {
        const uint64_t record = event.clock.generation();
        if (device.query(event.device) != HAL_SUCCESS) return false;
        event.clock.completeOnce(record,
                                 [&](const VectorClock& clock) { pool.observeCompleted(clock); });
        return true;
    }
    void synchronize(TestEvent& event) {
        const uint64_t record = event.clock.generation();
        device.synchronize(event.device);
        event.clock.completeOnce(record,
                                 [&](const VectorClock& clock) { pool.synchronized(clock); });
    }
    void synchronize(TestStream stream) {
        VectorClock clock = pool.capture(stream.pool);
        device.synchronizeStream(stream.device);
        pool.synchronized(clock);
    }
    void synchronizeDevice() {
        VectorClock clock = pool.captureDevice();
        device.synchronizeDevice();
        pool.synchronized(clock);
    }

    FakeDevice device;
    DevicePool pool;

  private:
    std::deque<TestEvent> events_;
};

}  // namespace polyhal::allocator::testing

#endif  // POLYHAL_TESTS_ALLOCATOR_POOL_HARNESS_HPP_
