// What a pointer a graph operation names is, as the vendor's pointer query says (Api::memoryKind).
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_MEMORY_KIND_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_MEMORY_KIND_HPP_

namespace polyhal::gpu {

enum class MemoryKind {
    kDevice,
    kPageLocked,  // host memory the vendor allocated or registered
    kPageable,    // host memory the vendor does not know (managed memory is counted here too)
};

constexpr const char* describe(MemoryKind kind) noexcept {
    switch (kind) {
    case MemoryKind::kDevice: return "device memory";
    case MemoryKind::kPageLocked: return "page-locked host memory";
    case MemoryKind::kPageable: return "pageable host memory";
    }
    return "unknown memory";
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_MEMORY_KIND_HPP_
