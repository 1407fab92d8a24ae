// Implements shared_event.hpp.
#include "engine/shared_event.hpp"

#include <unistd.h>

#include "engine/futex.hpp"

namespace polyhal::cpu {

namespace {

// Generations wrap around: `a` is at or after `b` when it is less than half the range ahead.
bool atOrAfter(uint32_t a, uint32_t b) {
    return static_cast<int32_t>(a - b) >= 0;
}

size_t pageSize() {
    return static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

halError SharedEventState::create(std::shared_ptr<SharedEventState>* created) {
    std::unique_ptr<SharedMemory> memory;
    if (halError e = SharedMemory::create(pageSize(), &memory)) return e;  // zero-filled
    created->reset(new SharedEventState(std::move(memory)));
    return HAL_SUCCESS;
}

halError SharedEventState::open(const halPluginIpcHandle& handle,
                                std::shared_ptr<SharedEventState>* opened) {
    std::unique_ptr<SharedMemory> memory;
    if (halError e = SharedMemory::open(SharedMemory::nameIn(handle), pageSize(), &memory)) {
        return e;
    }
    opened->reset(new SharedEventState(std::move(memory)));
    return HAL_SUCCESS;
}

uint32_t SharedEventState::beginRecord() {
    return page().recorded.fetch_add(1, std::memory_order_seq_cst) + 1;
}

void SharedEventState::publish(uint32_t generation) {
    std::atomic<uint32_t>& completed = page().completed;
    uint32_t current = completed.load(std::memory_order_seq_cst);
    while (!atOrAfter(current, generation) &&
           !completed.compare_exchange_weak(current, generation, std::memory_order_seq_cst)) {
    }
    futexWakeAllShared(completed);
}

uint32_t SharedEventState::latest() const {
    return page().recorded.load(std::memory_order_seq_cst);
}

bool SharedEventState::reached(uint32_t generation) const {
    return atOrAfter(page().completed.load(std::memory_order_seq_cst), generation);
}

void SharedEventState::wait(uint32_t generation) const {
    std::atomic<uint32_t>& completed = page().completed;
    while (true) {
        const uint32_t current = completed.load(std::memory_order_seq_cst);
        if (atOrAfter(current, generation)) return;
        futexWaitShared(completed, current);
    }
}

}  // namespace polyhal::cpu
