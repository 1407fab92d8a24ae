// The copied arguments of a deferred kernel launch, stored inline in the command record unless
// they are large.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_KERNEL_ARGUMENTS_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_KERNEL_ARGUMENTS_HPP_

#include <polyhal/hal.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace polyhal::cpu {

// Storage layout: [pointer to each copy][size of each argument][copies, each max-aligned].
// The pointer table is written by values(), once the object has stopped moving.
class KernelArguments {
  public:
    // The largest sum of argument sizes of one launch, as CUDA 12.1's kernel parameter limit.
    static constexpr size_t kMaxTotalBytes = 32 * 1024;

    // Do the sizes of `args` sum to at most kMaxTotalBytes (without wrapping around)?
    static bool withinLimit(const halKernelArg* args, uint32_t count);

    KernelArguments() = default;
    KernelArguments(KernelArguments&& other) noexcept { moveFrom(other); }
    KernelArguments& operator=(KernelArguments&& other) noexcept {
        if (this != &other) moveFrom(other);
        return *this;
    }

    // Copies `count` arguments, which must be withinLimit(). Throws std::bad_alloc when they
    // do not fit inline and the heap is exhausted; the object is unchanged then.
    void assign(const halKernelArg* args, uint32_t count);

    uint32_t count() const { return count_; }
    // Pointers to the copies, as halCpuKernelContext::args wants them. Valid until this object
    // is moved, reassigned or destroyed.
    const void* const* values();
    const size_t* sizes() const;

  private:
    static constexpr size_t kAlignment = alignof(std::max_align_t);
    static constexpr size_t kInlineBytes = 256;

    static size_t alignUp(size_t bytes) { return (bytes + kAlignment - 1) & ~(kAlignment - 1); }
    size_t tableBytes() const { return alignUp(count_ * (sizeof(void*) + sizeof(size_t))); }
    unsigned char* storage() { return heap_ ? heap_.get() : inline_; }
    const unsigned char* storage() const { return heap_ ? heap_.get() : inline_; }
    void moveFrom(KernelArguments& other) noexcept;

    uint32_t count_ = 0;
    size_t usedBytes_ = 0;
    std::unique_ptr<unsigned char[]> heap_;
    alignas(kAlignment) unsigned char inline_[kInlineBytes];
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_KERNEL_ARGUMENTS_HPP_
