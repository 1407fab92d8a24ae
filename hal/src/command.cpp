// Implements command.hpp: each operation's footprint, plugin call and native-graph entry.
#include "command.hpp"

#include <cstring>

#include "copy_plan.hpp"
#include "graph/graph.hpp"
#include "graph/native_graph.hpp"

namespace polyhal {
namespace {

// The visitor of one function over every kind of command: overloads picked by the record's type.
template <typename... Cases>
struct Overloaded : Cases... {
    using Cases::operator()...;
};
template <typename... Cases>
Overloaded(Cases...) -> Overloaded<Cases...>;

template <size_t kCount>
size_t writeAll(const std::array<check::Access, kCount>& from, check::Access* to) {
    std::copy(from.begin(), from.end(), to);
    return kCount;
}

}  // namespace

size_t maxAccesses(const Command& command) {
    return std::visit(Overloaded{
                          [](const MemsetCommand&) -> size_t { return 1; },
                          [](const CopyCommand&) -> size_t { return 2; },
                          [](const BoxCommand&) -> size_t { return 2; },
                          [](const KernelCommand& kernel) -> size_t { return kernel.numArgs; },
                          [](const HostFunctionCommand&) -> size_t { return 0; },
                          [](const GraphCommand& graph) -> size_t {
                              return graph.body->footprint().accesses.size();
                          },
                      },
                      command);
}

size_t writeAccesses(const Command& command, check::Access* accesses) {
    return std::visit(
        Overloaded{
            [&](const MemsetCommand& memset) -> size_t {
                accesses[0] = {memset.dst, memset.count, check::AccessMode::kWrite};
                return 1;
            },
            [&](const CopyCommand& copy) {
                return writeAll(check::copyAccesses(copy.dst, copy.src, copy.count), accesses);
            },
            [&](const BoxCommand& box) { return writeAll(boxAccesses(box.box), accesses); },
            [&](const KernelCommand& kernel) {
                return check::kernelAccesses(kernel.args, kernel.uses, kernel.numArgs, accesses);
            },
            [](const HostFunctionCommand&) -> size_t { return 0; },
            [&](const GraphCommand& graph) {
                const std::vector<check::Access>& child = graph.body->footprint().accesses;
                std::copy(child.begin(), child.end(), accesses);
                return child.size();
            },
        },
        command);
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

halError enqueueCommand(const Command& command, halStream_t* stream) {
    const halPluginDispatchTable& vtable = *stream->device->vtable;
    const halPluginStream native = stream->native;
    return std::visit(
        Overloaded{
            [&](const MemsetCommand& memset) {
                return vtable.memsetAsync(native, memset.dst, memset.value, memset.count);
            },
            [&](const CopyCommand& copy) {
                return vtable.memcpyAsync(native, copy.dst, copy.src, copy.count, copy.kind);
            },
            [&](const BoxCommand& box) { return vtable.memcpy3DAsync(native, &box.box); },
            [&](const KernelCommand& kernel) {
                return vtable.launchKernel(native, kernel.function->native, kernel.grid,
                                           kernel.block, kernel.sharedBytes, kernel.args,
                                           kernel.numArgs);
            },
            [&](const HostFunctionCommand& host) {
                // The work it runs after, for the race detector: the stream's clock before it.
                allocator::VectorClock precedes;
                if (check::enabled(check::kRaces)) {
                    stream->device->pool->captureInto(stream->poolStream, &precedes);
                }
                return launchMarkedHostFunction(vtable, native, host.fn, host.userData,
                                                std::move(precedes));
            },
            // Replayed, never the child's own executable: that one runs only through launches
            // of the child graph, which the core orders one after another.
            [&](const GraphCommand& graph) { return graph.body->replay(stream); },
        },
        command);
}

void describeCommand(const Command& command, NativeGraphDescription* description) {
    std::visit(Overloaded{
                   [&](const MemsetCommand& memset) {
                       description->addMemset(memset.dst, memset.value, memset.count);
                   },
                   [&](const CopyCommand& copy) {
                       description->addCopy(copy.dst, copy.src, copy.count, copy.kind);
                   },
                   [&](const BoxCommand& box) { description->addBox(box.box); },
                   [&](const KernelCommand& kernel) {
                       description->addKernel(kernel.function->native, kernel.grid, kernel.block,
                                              kernel.sharedBytes, kernel.args, kernel.numArgs);
                   },
                   [&](const HostFunctionCommand& host) {
                       description->addHostFunction(host.fn, host.userData);
                   },
                   [&](const GraphCommand& graph) { graph.body->describe(description); },
               },
               command);
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
