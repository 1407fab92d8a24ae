// A deterministic, in-process device for unit tests and benchmarks of the pool (implementation).
#include "fake_device.hpp"

#include <unordered_map>

namespace polyhal::allocator::testing {

struct FakeDevice::Stream {
    std::vector<OpId> ops;
    size_t next = 0;  // the first operation not run yet
    bool destroyed = false;
};

struct FakeDevice::Event {
    bool recorded = false;
    OpId point = kNoOp;  // the last operation captured; kNoOp: nothing to wait for
    bool destroyed = false;
};

namespace {
thread_local std::string lastMessage;
// Far from any address the process uses, 2 MiB aligned; the pool never dereferences it.
constexpr uintptr_t kFirstAddress = uintptr_t{0x7e} << 40;
constexpr uintptr_t kAlignment = uintptr_t{2} << 20;
}  // namespace

FakeDevice::FakeDevice(uint64_t capacity) : nextAddress_(kFirstAddress), capacity_(capacity) {}
FakeDevice::~FakeDevice() = default;

FakeDevice::Stream* FakeDevice::createStream() {
    std::lock_guard<std::mutex> lock(mutex_);
    streams_.push_back(std::make_unique<Stream>());
    return streams_.back().get();
}

void FakeDevice::destroyStream(Stream* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    stream->destroyed = true;
}

FakeDevice::OpId FakeDevice::enqueueLocked(Stream* stream, OpId waitFor) {
    const OpId id = ops_.size();
    ops_.push_back(Op{stream, stream->ops.size(), waitFor, false});
    stream->ops.push_back(id);
    return id;
}

FakeDevice::OpId FakeDevice::submit(Stream* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    return enqueueLocked(stream, kNoOp);
}

void FakeDevice::wait(Stream* stream, Event* event) {
    std::lock_guard<std::mutex> lock(mutex_);
    enqueueLocked(stream, event->recorded ? event->point : kNoOp);
}

void FakeDevice::record(Event* event, Stream* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    event->recorded = true;
    event->point = stream->ops.empty() ? kNoOp : stream->ops.back();
}

bool FakeDevice::eventFinishedLocked(const Event* event) const {
    return !event->recorded || event->point == kNoOp || ops_[event->point].done;
}

halError FakeDevice::query(Event* event) {
    std::lock_guard<std::mutex> lock(mutex_);
    return eventFinishedLocked(event) ? HAL_SUCCESS : HAL_ERROR_NOT_READY;
}

void FakeDevice::runUntilLocked(OpId op) {
    Stream* stream = ops_[op].stream;
    while (!ops_[op].done) {
        const OpId next = stream->ops[stream->next];
        if (ops_[next].waitFor != kNoOp) runUntilLocked(ops_[next].waitFor);
        ops_[next].done = true;
        ++stream->next;
    }
}

void FakeDevice::synchronize(Event* event) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (event->recorded && event->point != kNoOp) runUntilLocked(event->point);
}

void FakeDevice::synchronizeStream(Stream* stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counters_.streamSynchronizations;
    if (!stream->ops.empty()) runUntilLocked(stream->ops.back());
}

void FakeDevice::synchronizeDevice() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++counters_.streamSynchronizations;
    for (const auto& stream : streams_) {
        if (!stream->ops.empty()) runUntilLocked(stream->ops.back());
    }
}

FakeDevice::Event* FakeDevice::newEventLocked() {
    events_.push_back(std::make_unique<Event>());
    ++counters_.eventsCreated;
    return events_.back().get();
}

FakeDevice::Event* FakeDevice::createUserEvent() {
    std::lock_guard<std::mutex> lock(mutex_);
    return newEventLocked();
}

size_t FakeDevice::advance(Stream* stream, size_t maxOps) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t ran = 0;
    while (ran < maxOps && stream->next < stream->ops.size()) {
        Op& op = ops_[stream->ops[stream->next]];
        if (op.waitFor != kNoOp && !ops_[op.waitFor].done) break;
        op.done = true;
        ++stream->next;
        ++ran;
    }
    return ran;
}

void FakeDevice::advanceAll() {
    bool progress = true;
    while (progress) {
        progress = false;
        std::vector<Stream*> streams;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (const auto& stream : streams_) streams.push_back(stream.get());
        }
        for (Stream* stream : streams) progress = advance(stream) > 0 || progress;
    }
}

bool FakeDevice::finished(OpId op) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return ops_[op].done;
}

bool FakeDevice::orderedBefore(OpId op, Stream* stream) const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stream->ops.empty()) return false;
    // Reaching operation `seq` of a stream reaches every earlier one of that stream, so it is
    // enough to track the highest position reached per stream.
    std::unordered_map<const Stream*, size_t> reached;  // one past the highest reached
    std::vector<std::pair<const Stream*, size_t>> work{{stream, stream->ops.size()}};
    while (!work.empty()) {
        const auto [current, end] = work.back();
        work.pop_back();
        size_t& reach = reached[current];
        const size_t from = reach;
        if (end <= from) continue;
        reach = end;
        for (size_t seq = from; seq < end; ++seq) {
            const OpId awaited = ops_[current->ops[seq]].waitFor;
            if (awaited != kNoOp) work.push_back({ops_[awaited].stream, ops_[awaited].seq + 1});
        }
    }
    auto it = reached.find(ops_[op].stream);
    return it != reached.end() && ops_[op].seq < it->second;
}

FakeDevice::Counters FakeDevice::counters() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return counters_;
}

uint64_t FakeDevice::bytesAllocated() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return allocated_;
}

void FakeDevice::setCapacity(uint64_t capacity) {
    std::lock_guard<std::mutex> lock(mutex_);
    capacity_ = capacity;
}

std::string FakeDevice::lastErrorMessage() const {
    return lastMessage;
}

halError FakeDevice::allocateMemory(size_t size, void** ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (size > capacity_ - allocated_ || allocated_ > capacity_) {
        lastMessage = "fake device: out of memory";
        return HAL_ERROR_OUT_OF_MEMORY;
    }
    const uintptr_t address = nextAddress_;
    nextAddress_ += (size + kAlignment - 1) / kAlignment * kAlignment;
    memory_.emplace(address, size);
    allocated_ += size;
    ++counters_.allocations;
    *ptr = reinterpret_cast<void*>(address);
    return HAL_SUCCESS;
}

halError FakeDevice::freeMemory(void* ptr) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = memory_.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == memory_.end()) {
        ++counters_.invalidFrees;
        lastMessage = "fake device: free of memory it did not allocate";
        return HAL_ERROR_INVALID_VALUE;
    }
    allocated_ -= it->second;
    memory_.erase(it);
    ++counters_.frees;
    return HAL_SUCCESS;
}

halError FakeDevice::createEvent(DeviceEvent* event) {
    std::lock_guard<std::mutex> lock(mutex_);
    *event = newEventLocked();
    return HAL_SUCCESS;
}

void FakeDevice::destroyEvent(DeviceEvent event) {
    std::lock_guard<std::mutex> lock(mutex_);
    static_cast<Event*>(event)->destroyed = true;
    ++counters_.eventsDestroyed;
}

halError FakeDevice::recordEvent(DeviceEvent event, DeviceStream stream) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++counters_.eventRecords;
    }
    record(static_cast<Event*>(event), static_cast<Stream*>(stream));
    return HAL_SUCCESS;
}

halError FakeDevice::queryEvent(DeviceEvent event) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++counters_.eventQueries;
    }
    return query(static_cast<Event*>(event));
}

halError FakeDevice::synchronizeEvent(DeviceEvent event) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        ++counters_.eventSynchronizations;
    }
    synchronize(static_cast<Event*>(event));
    return HAL_SUCCESS;
}

void FakeDevice::setErrorMessage(const char* message) {
    lastMessage = message;
}

}  // namespace polyhal::allocator::testing
