#include "host_kernels.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

// The host builds, from backends/cpu/cts_kernels/cts_kernels.c (compiled into the double).
extern "C" {
int fill_u32(const halCpuKernelContext* ctx);
int vadd(const halCpuKernelContext* ctx);
int block_sum(const halCpuKernelContext* ctx);
int fail_with_code(const halCpuKernelContext* ctx);
int block_index(const halCpuKernelContext* ctx);
}

namespace polyhal::doubles {
namespace {

constexpr KernelParameter kPointer{sizeof(void*), true};
constexpr KernelParameter kU32{sizeof(uint32_t), false};

// The signatures of backends/gpu_common/cts_kernels/cts_kernels.cu.
const std::vector<HostKernel>& hostKernels() {
    static const std::vector<HostKernel> kernels = {
        {"fill_u32", fill_u32, {kPointer, kU32, kU32}},
        {"vadd", vadd, {kPointer, kPointer, kPointer, kU32}},
        {"block_sum", block_sum, {kPointer, kPointer, kU32}},
        {"fail_with_code", fail_with_code, {}},
        {"block_index", block_index, {kPointer}},
    };
    return kernels;
}

struct FreeDeleter {
    void operator()(void* memory) const { std::free(memory); }
};

}  // namespace

size_t HostKernel::offset(size_t index) const {
    size_t offset = 0;
    for (size_t i = 0;; ++i) {
        const size_t size = parameters[i].size;
        offset = (offset + size - 1) / size * size;  // each parameter at its natural alignment
        if (i == index) return offset;
        offset += size;
    }
}

bool isElfImage(const unsigned char* image) {
    return std::memcmp(image,
                       "\x7f"
                       "ELF",
                       4) == 0;
}

size_t elfImageLength(const unsigned char* image) {
    uint64_t sectionHeaders = 0;
    uint16_t entrySize = 0;
    uint16_t entries = 0;
    std::memcpy(&sectionHeaders, image + 0x28, sizeof sectionHeaders);
    std::memcpy(&entrySize, image + 0x3a, sizeof entrySize);
    std::memcpy(&entries, image + 0x3c, sizeof entries);
    return sectionHeaders + size_t{entrySize} * entries;
}

const HostKernel* findHostKernel(const char* name) {
    for (const HostKernel& kernel : hostKernels()) {
        if (std::strcmp(kernel.name, name) == 0) return &kernel;
    }
    return nullptr;
}

std::string packArguments(const HostKernel& kernel, void* const* params, const AddressSpace& memory,
                          const std::function<bool(int device)>& reaches,
                          std::vector<std::vector<unsigned char>>* arguments) {
    const size_t declared = kernel.parameters.size();
    char problem[256];
    if (declared > 0 && params == nullptr) {
        std::snprintf(problem, sizeof problem,
                      "%s declares %zu parameters but kernelParams is NULL", kernel.name, declared);
        return problem;
    }
    arguments->assign(declared, {});
    for (size_t i = 0; i < declared; ++i) {
        const KernelParameter& parameter = kernel.parameters[i];
        const auto* value = static_cast<const unsigned char*>(params[i]);
        (*arguments)[i].assign(value, value + parameter.size);
        if (!parameter.isPointer) continue;
        void* pointer = nullptr;
        std::memcpy(&pointer, value, sizeof pointer);
        if (pointer == nullptr) continue;
        Place place{};
        if (!memory.locate(pointer, 1, &place) || place.kind == Place::kPageable ||
            (place.kind == Place::kDevice && !reaches(place.device))) {
            std::snprintf(problem, sizeof problem,
                          "parameter %zu of %s is a pointer, but holds %p, which is no memory of "
                          "the launch's device or of a peer it has access to (arguments out of "
                          "order, of the wrong size, or peer access not enabled?)",
                          i, kernel.name, pointer);
            return problem;
        }
        std::memcpy((*arguments)[i].data(), &place.host, sizeof place.host);
    }
    return {};
}

int runHostKernel(const HostKernel& kernel, halDim3 grid, halDim3 block, size_t sharedBytes,
                  const std::vector<std::vector<unsigned char>>& arguments) {
    std::vector<const void*> values;
    std::vector<size_t> sizes;
    for (const auto& argument : arguments) {
        values.push_back(argument.data());
        sizes.push_back(argument.size());
    }
    std::unique_ptr<void, FreeDeleter> shared(
        sharedBytes > 0 ? std::aligned_alloc(64, (sharedBytes + 63) / 64 * 64) : nullptr);
    halCpuKernelContext ctx{};
    ctx.size = sizeof ctx;
    ctx.gridDim = grid;
    ctx.blockDim = block;
    ctx.sharedMemory = shared.get();
    ctx.sharedMemoryBytes = sharedBytes;
    ctx.args = values.data();
    ctx.argSizes = sizes.data();
    ctx.numArgs = static_cast<uint32_t>(arguments.size());
    for (uint32_t z = 0; z < grid.z; ++z) {
        for (uint32_t y = 0; y < grid.y; ++y) {
            for (uint32_t x = 0; x < grid.x; ++x) {
                ctx.blockIdx = halDim3{x, y, z};
                if (const int status = kernel.run(&ctx)) return status;
            }
        }
    }
    return 0;
}

}  // namespace polyhal::doubles
