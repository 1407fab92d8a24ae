// Implements kernel_arguments.hpp.
#include "engine/kernel_arguments.hpp"

#include <cstring>
#include <new>

namespace polyhal::cpu {

bool KernelArguments::withinLimit(const halKernelArg* args, uint32_t count) {
    size_t total = 0;
    for (uint32_t i = 0; i < count; ++i) {
        if (__builtin_add_overflow(total, args[i].size, &total) || total > kMaxTotalBytes) {
            return false;
        }
    }
    return true;
}

void KernelArguments::assign(const halKernelArg* args, uint32_t count) {
    const size_t table = alignUp(count * (sizeof(void*) + sizeof(size_t)));
    size_t total = table;
    for (uint32_t i = 0; i < count; ++i) total += alignUp(args[i].size);

    std::unique_ptr<unsigned char[]> heap;
    // operator new[] aligns to __STDCPP_DEFAULT_NEW_ALIGNMENT__, which covers max_align_t.
    if (total > kInlineBytes) heap.reset(new unsigned char[total]);
    heap_ = std::move(heap);
    count_ = count;
    usedBytes_ = total;

    unsigned char* base = storage();
    size_t* sizes = reinterpret_cast<size_t*>(base + count * sizeof(void*));
    size_t offset = table;
    for (uint32_t i = 0; i < count; ++i) {
        sizes[i] = args[i].size;
        std::memcpy(base + offset, args[i].value, args[i].size);
        offset += alignUp(args[i].size);
    }
}

const void* const* KernelArguments::values() {
    unsigned char* base = storage();
    const void** pointers = reinterpret_cast<const void**>(base);
    const size_t* argSizes = sizes();
    size_t offset = tableBytes();
    for (uint32_t i = 0; i < count_; ++i) {
        pointers[i] = base + offset;
        offset += alignUp(argSizes[i]);
    }
    return pointers;
}

const size_t* KernelArguments::sizes() const {
    return reinterpret_cast<const size_t*>(storage() + count_ * sizeof(void*));
}

void KernelArguments::moveFrom(KernelArguments& other) noexcept {
    count_ = other.count_;
    usedBytes_ = other.usedBytes_;
    heap_ = std::move(other.heap_);
    if (!heap_) std::memcpy(inline_, other.inline_, usedBytes_);
    other.count_ = 0;
    other.usedBytes_ = 0;
}

}  // namespace polyhal::cpu
