// Implements command.hpp: each operation's footprint, plugin call and native-graph entry.
#include "command.hpp"

#include <algorithm>
#include <cstring>

#include "copy_plan.hpp"
#include "graph/graph.hpp"
#include "graph/native_graph.hpp"

namespace polyhal {
namespace {

template <size_t kCount>
size_t writeAll(const std::array<check::Access, kCount>& from, check::Access* to) {
    std::copy(from.begin(), from.end(), to);
    return kCount;
}

}  // namespace

size_t maxAccesses(const GraphCommand& graph) {
    return graph.body->footprint().accesses.size();
}

size_t writeAccesses(const MemsetCommand& memset, check::Access* accesses) {
    accesses[0] = {memset.dst, memset.count, check::AccessMode::kWrite};
    return 1;
}

size_t writeAccesses(const CopyCommand& copy, check::Access* accesses) {
    return writeAll(check::copyAccesses(copy.dst, copy.src, copy.count), accesses);
}

size_t writeAccesses(const BoxCommand& box, check::Access* accesses) {
    return writeAll(boxAccesses(box.box), accesses);
}

size_t writeAccesses(const KernelCommand& kernel, check::Access* accesses) {
    return check::kernelAccesses(kernel.args, kernel.uses, kernel.numArgs, accesses);
}

size_t writeAccesses(const GraphCommand& graph, check::Access* accesses) {
    const std::vector<check::Access>& child = graph.body->footprint().accesses;
    std::copy(child.begin(), child.end(), accesses);
    return child.size();
}

halError enqueueCommand(const MemsetCommand& memset, halStream_t* stream) {
    return stream->device->vtable->memsetAsync(stream->native, memset.dst, memset.value,
                                               memset.count);
}

halError enqueueCommand(const CopyCommand& copy, halStream_t* stream) {
    return stream->device->vtable->memcpyAsync(stream->native, copy.dst, copy.src, copy.count,
                                               copy.kind);
}

halError enqueueCommand(const BoxCommand& box, halStream_t* stream) {
    return stream->device->vtable->memcpy3DAsync(stream->native, &box.box);
}

halError enqueueCommand(const KernelCommand& kernel, halStream_t* stream) {
    return stream->device->vtable->launchKernel(stream->native, kernel.function->native,
                                                kernel.grid, kernel.block, kernel.sharedBytes,
                                                kernel.args, kernel.numArgs);
}

halError enqueueCommand(const HostFunctionCommand& host, halStream_t* stream) {
    return launchMarkedHostFunction(stream, host.fn, host.userData);
}

// Replayed, never the child's own executable: that one runs only through launches of the child
// graph, which the core orders one after another.
halError enqueueCommand(const GraphCommand& graph, halStream_t* stream) {
    return graph.body->replay(stream);
}

namespace {

// Only through describeCommand(const Command&): a plugin's graph is described from recorded
// commands, never from one being submitted.
void describeCommand(const MemsetCommand& memset, NativeGraphDescription* description) {
    description->addMemset(memset.dst, memset.value, memset.count);
}

void describeCommand(const CopyCommand& copy, NativeGraphDescription* description) {
    description->addCopy(copy.dst, copy.src, copy.count, copy.kind);
}

void describeCommand(const BoxCommand& box, NativeGraphDescription* description) {
    description->addBox(box.box);
}

void describeCommand(const KernelCommand& kernel, NativeGraphDescription* description) {
    description->addKernel(kernel.function->native, kernel.grid, kernel.block, kernel.sharedBytes,
                           kernel.args, kernel.numArgs);
}

void describeCommand(const HostFunctionCommand& host, NativeGraphDescription* description) {
    description->addHostFunction(host.fn, host.userData);
}

void describeCommand(const GraphCommand& graph, NativeGraphDescription* description) {
    graph.body->describe(description);
}

}  // namespace

size_t maxAccesses(const Command& command) {
    return std::visit([](const auto& kind) { return maxAccesses(kind); }, command);
}

size_t writeAccesses(const Command& command, check::Access* accesses) {
    return std::visit([&](const auto& kind) { return writeAccesses(kind, accesses); }, command);
}

halError enqueueCommand(const Command& command, halStream_t* stream) {
    return std::visit([&](const auto& kind) { return enqueueCommand(kind, stream); }, command);
}

void describeCommand(const Command& command, NativeGraphDescription* description) {
    std::visit([&](const auto& kind) { describeCommand(kind, description); }, command);
}

void addFootprint(const Command& command, Footprint* footprint) {
    const size_t first = footprint->accesses.size();
    footprint->accesses.resize(first + maxAccesses(command));
    footprint->accesses.resize(first + writeAccesses(command, footprint->accesses.data() + first));
    if (const auto* kernel = std::get_if<KernelCommand>(&command)) {
        footprint->kernels.push_back({kernel->function, kernel->serial});
    } else if (const auto* graph = std::get_if<GraphCommand>(&command)) {
        const std::vector<KernelRef>& child = graph->body->footprint().kernels;
        footprint->kernels.insert(footprint->kernels.end(), child.begin(), child.end());
    }
}

void CommandList::append(Command command) {
    if (auto* kernel = std::get_if<KernelCommand>(&command)) {
        KernelArguments stored;
        // The values, copied now: the caller's argument storage may be gone by the launch.
        size_t total = 0;
        for (uint32_t i = 0; i < kernel->numArgs; ++i) total += kernel->args[i].size;
        stored.values.resize(total);
        stored.args.resize(kernel->numArgs);
        size_t offset = 0;
        for (uint32_t i = 0; i < kernel->numArgs; ++i) {
            std::memcpy(stored.values.data() + offset, kernel->args[i].value, kernel->args[i].size);
            stored.args[i] = halKernelArg{stored.values.data() + offset, kernel->args[i].size};
            offset += kernel->args[i].size;
        }
        if (kernel->uses.access != nullptr || kernel->uses.uses != nullptr) {
            stored.uses.resize(kernel->numArgs);
            for (uint32_t i = 0; i < kernel->numArgs; ++i) {
                const size_t bytes = kernel->uses.uses != nullptr ? kernel->uses.uses[i].bytes : 0;
                stored.uses[i] =
                    halKernelArgUse{static_cast<halKernelArgAccess>(kernel->uses.mode(i)), bytes};
            }
        }
        kernel->args = stored.args.data();
        kernel->uses = check::ArgUses{nullptr, stored.uses.empty() ? nullptr : stored.uses.data()};
        kernels_.push_back(std::move(stored));
    }
    commands_.push_back(std::move(command));
}

}  // namespace polyhal
