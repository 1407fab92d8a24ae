// The operation record: one description of each stream operation the core enqueues through a
// plugin, used alike by the eager path, a capture, a graph's replay and the plugin's native graph.
// A public function validates and plans its arguments, builds a Command and hands it to the
// runner (command_runner.hpp); everything the core needs to know about the operation afterwards
// (what it touches, how the plugin enqueues it, how a native graph lists it) is asked of the record
// here, once.
#ifndef POLYHAL_HAL_SRC_COMMAND_HPP_
#define POLYHAL_HAL_SRC_COMMAND_HPP_

#include <memory>
#include <variant>
#include <vector>

#include "api.hpp"

namespace polyhal {

class GraphBody;
class NativeGraphDescription;

struct MemsetCommand {
    void* dst;
    unsigned char value;
    size_t count;
};

struct CopyCommand {
    void* dst;
    const void* src;
    size_t count;
    halMemcpyKind kind;  // resolved: never HAL_MEMCPY_DEFAULT
};

// A strided copy the plugin performs as one operation (its memcpy3DAsync entry).
struct BoxCommand {
    halMemcpy3DParams box;  // kind resolved
};

// A kernel launch. `args` and `uses` are the caller's until the command is stored in a
// CommandList, which copies them.
struct KernelCommand {
    const halFunction_t* function;
    uint64_t serial;  // of the function at launch: a graph tells a reloaded handle slot by it
    halDim3 grid;
    halDim3 block;
    size_t sharedBytes;
    const halKernelArg* args;
    check::ArgUses uses;
    uint32_t numArgs;
};

struct HostFunctionCommand {
    halHostFn fn;
    void* userData;
};

// A launch of another graph, captured: its commands run in place, its body kept alive.
struct GraphCommand {
    std::shared_ptr<const GraphBody> body;
};

using Command = std::variant<MemsetCommand, CopyCommand, BoxCommand, KernelCommand,
                             HostFunctionCommand, GraphCommand>;

// A kernel a graph launches: the handle and the serial of the function it held at capture.
struct KernelRef {
    const halFunction_t* function;
    uint64_t serial;
};

// What a sequence of commands touches and needs, gathered once.
struct Footprint {
    std::vector<check::Access> accesses;  // the pool's uses and the race detector's accesses
    std::vector<KernelRef> kernels;       // the functions, checked before each launch
};

// What each kind of command is asked, one overload per kind, so that the eager path calls them
// directly for the kind it built; a Command (in a capture or a graph) forwards to them.
//
// maxAccesses: how many accesses the command may report, room for writeAccesses.
// writeAccesses: writes what the command reads and writes (room for maxAccesses) and returns how
//   many: the one footprint from which the pool's uses and the race detector's records come.
// enqueueCommand: enqueues it on `stream` through its plugin; returns the plugin's result,
//   unadopted. A graph command replays its body's commands, stopping at the first refused.
// describeCommand (of a Command only, below): appends it, flattened, to the description of a
//   native graph.
constexpr size_t maxAccesses(const MemsetCommand&) { return 1; }
constexpr size_t maxAccesses(const CopyCommand&) { return 2; }
constexpr size_t maxAccesses(const BoxCommand&) { return 2; }
constexpr size_t maxAccesses(const KernelCommand& kernel) { return kernel.numArgs; }
constexpr size_t maxAccesses(const HostFunctionCommand&) { return 0; }
size_t maxAccesses(const GraphCommand& graph);

size_t writeAccesses(const MemsetCommand& memset, check::Access* accesses);
size_t writeAccesses(const CopyCommand& copy, check::Access* accesses);
size_t writeAccesses(const BoxCommand& box, check::Access* accesses);
size_t writeAccesses(const KernelCommand& kernel, check::Access* accesses);
inline size_t writeAccesses(const HostFunctionCommand&, check::Access*) { return 0; }
size_t writeAccesses(const GraphCommand& graph, check::Access* accesses);

halError enqueueCommand(const MemsetCommand& memset, halStream_t* stream);
halError enqueueCommand(const CopyCommand& copy, halStream_t* stream);
halError enqueueCommand(const BoxCommand& box, halStream_t* stream);
halError enqueueCommand(const KernelCommand& kernel, halStream_t* stream);
halError enqueueCommand(const HostFunctionCommand& host, halStream_t* stream);
halError enqueueCommand(const GraphCommand& graph, halStream_t* stream);


// The same, of a Command of any kind.
size_t maxAccesses(const Command& command);
size_t writeAccesses(const Command& command, check::Access* accesses);
halError enqueueCommand(const Command& command, halStream_t* stream);
void describeCommand(const Command& command, NativeGraphDescription* description);

// Adds what `command` touches and the kernels it launches to `footprint`.
void addFootprint(const Command& command, Footprint* footprint);

// Commands that own their arguments: what a capture records and a graph keeps.
class CommandList {
  public:
    // Appends `command`, copying a kernel's argument values and uses.
    void append(Command command);

    const std::vector<Command>& commands() const { return commands_; }
    size_t size() const { return commands_.size(); }

  private:
    // A stored kernel's arguments: the values and the halKernelArg entries pointing into them,
    // and the uses in halLaunchKernelWithUses's form whichever call declared them (empty: every
    // argument read and written). Vectors keep their buffers when moved, so the pointers the
    // stored command holds stay valid as kernels_ grows.
    struct KernelArguments {
        std::vector<unsigned char> values;
        std::vector<halKernelArg> args;
        std::vector<halKernelArgUse> uses;
    };

    std::vector<Command> commands_;
    std::vector<KernelArguments> kernels_;
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_COMMAND_HPP_
