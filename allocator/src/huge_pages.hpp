// Memory for the pool's large tables that lookups reach at random (block records, the live
// index, the nodes of its ordered containers): from 2 MiB up, in 2 MiB pages where the system
// gives them on request (transparent huge pages in "madvise" mode, the usual default). At a
// million live blocks a free reaches a random slot of a 32 MiB index and a random record among
// 128 MiB of them; in 4 KiB pages each is a TLB miss and a page walk, which in a virtual machine
// costs as much as the cache miss itself.
#ifndef POLYHAL_ALLOCATOR_HUGE_PAGES_HPP_
#define POLYHAL_ALLOCATOR_HUGE_PAGES_HPP_

#include <sys/mman.h>

#include <cassert>
#include <cstddef>
#include <cstdlib>
#include <memory_resource>
#include <new>

namespace polyhal::allocator {

namespace huge_pages {

constexpr size_t kSize = size_t{2} << 20;

// Below kSize what operator new gives; from kSize, whole huge pages.
inline void* allocate(size_t bytes, size_t alignment) {
    static_assert(alignof(std::max_align_t) <= kSize);
    assert(alignment <= kSize);  // a huge page's alignment covers every object's
    if (bytes < kSize) return ::operator new (bytes, std::align_val_t{alignment});
    const size_t rounded = (bytes + kSize - 1) / kSize * kSize;
    void* memory = std::aligned_alloc(kSize, rounded);
    if (memory == nullptr) throw std::bad_alloc();
    // Advice only: where huge pages are not offered, the pages stay small.
    (void)madvise(memory, rounded, MADV_HUGEPAGE);
    return memory;
}

inline void release(void* memory, size_t bytes, size_t alignment) noexcept {
    if (bytes < kSize) {
        ::operator delete (memory, std::align_val_t{alignment});
    } else {
        std::free(memory);
    }
}

}  // namespace huge_pages

// For standard containers.
template <class T>
class HugePageAllocator {
  public:
    using value_type = T;

    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) noexcept {}  // NOLINT: rebinding converts

    T* allocate(size_t count) {
        return static_cast<T*>(huge_pages::allocate(count * sizeof(T), alignof(T)));
    }
    void deallocate(T* memory, size_t count) noexcept {
        huge_pages::release(memory, count * sizeof(T), alignof(T));
    }

    template <class U>
    bool operator==(const HugePageAllocator<U>&) const noexcept {
        return true;
    }
    template <class U>
    bool operator!=(const HugePageAllocator<U>&) const noexcept {
        return false;
    }
};

// For a std::pmr pool's chunks.
class HugePageResource final : public std::pmr::memory_resource {
  private:
    void* do_allocate(size_t bytes, size_t alignment) override {
        return huge_pages::allocate(bytes, alignment);
    }
    void do_deallocate(void* memory, size_t bytes, size_t alignment) override {
        huge_pages::release(memory, bytes, alignment);
    }
    bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override {
        return this == &other;
    }
};

}  // namespace polyhal::allocator

#endif  // POLYHAL_ALLOCATOR_HUGE_PAGES_HPP_
