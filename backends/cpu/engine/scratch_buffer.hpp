// A thread's reusable buffer for kernel shared memory: grows to the largest request seen, so a
// steady stream of launches allocates nothing.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_SCRATCH_BUFFER_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_SCRATCH_BUFFER_HPP_

#include <cstddef>
#include <cstdlib>
#include <memory>

#include "engine/aligned_memory.hpp"

namespace polyhal::cpu {

class ScratchBuffer {
  public:
    // At least `bytes` bytes aligned to kSharedMemoryAlignment, valid until the next call;
    // nullptr when the host is out of memory.
    void* reserve(size_t bytes) {
        if (bytes > capacity_) {
            data_.reset(allocateAligned(kSharedMemoryAlignment, bytes));
            capacity_ = data_ ? bytes : 0;
        }
        return data_.get();
    }

  private:
    struct Free {
        void operator()(void* memory) const noexcept { std::free(memory); }
    };
    std::unique_ptr<void, Free> data_;
    size_t capacity_ = 0;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_SCRATCH_BUFFER_HPP_
