// What a vendor API type `Api` must provide to the shared GPU layer (backends/cuda/api.hpp and
// backends/hip/api.hpp are the two there are), checked when the layer is built for it: an `Api`
// that lacks a member fails the build with a message naming the member, not with an error deep in
// an entry template.
//
//   kName, kLibraries[], kLibraryDescription       backend name; library names to try; wording
//   kSelectionPriority, kDLPackDeviceType, kModuleImageKinds
//                                                  what backendGetInfo reports
//   Result, kSuccess, kNotReady, kPeerAccessAlreadyEnabled, kPeerAccessNotEnabled
//                                                  the vendor's status type and some of its values
//   toHalError(Result), describe(Result, &name, &text)   (the functions here are declared by
//                                                  POLYHAL_GPU_API_FUNCTIONS, below)
//   NativeDevice, Context, Stream, Event, Module, Function, DevicePointer, JitOption,
//   IpcMemHandle, IpcEventHandle
//   symbols                                        the symbol table whose roles the entries
//                                                  call (backends/plugin_common/symbol_table.hpp)
//   retainContext(), releaseContext()              what a device in use holds (CUDA: its primary
//                                                  context)
//   resetContext()                                 the vendor's reset of a device in use, a kept
//                                                  fault included (deviceReset)
//   enterContext(), leaveContext()                 making it current on a thread for one entry and
//                                                  restoring what was current
//                                                  (engine/current_device.hpp)
//   RelaxedCapture                                 what an entry's calls do about stream capture by
//                                                  other code (CUDA: relaxed for the entry)
//   toPointer(), toDevicePointer()                 between void* and the vendor's device pointer
//   maxKernelArgumentBytes()                       the largest sum of one launch's argument sizes
//                                                  (0: the core's default)
//   memcpyAsync(), memcpy2DAsync(), launchHostFunc()
//                                                  what the vendors do in different ways
//   ModuleInfo, describeModule()                   what a module's image says of its kernels,
//                                                  read once when it is loaded
//   KernelInfo, describeKernel(), checkArguments(), allowDynamicSharedMemory()
//                                                  what a launch checks and sets up first, read
//                                                  once per function when it is looked up
//   Graph, GraphNode, GraphExec, UserObject, HostNodeParams, kUserObjectNoDestructorSync,
//   kGraphUserObjectMove, kNativeGraphsSince, kExecDestroyWaitsForLaunches,
//   kHostToHostCopyNodes, kAttributeMaxPitch, memoryKind(), addNode(), instantiate()
//                                                  native graphs (graph.hpp, engine/graph_node.hpp,
//                                                  engine/native_graph.hpp)
//   imageProblem()                                 what a module image's headers name beyond its
//                                                  size (module.hpp)
//   kEventQueriesReadTheirStream                   whether destroyed streams must be kept
//                                                  (engine/retired_streams.hpp)
//   kIpcEventWaitsOnDevice                         whether interprocess events are offered
//   kStreamNonBlocking, kEventDisableTiming, kEventBlockingSync, kEventInterprocess,
//   kHostAllocPortable, kHostRegisterPortable, kMemAttachGlobal, kAttributeManagedMemory,
//   kIpcMemLazyEnablePeerAccess,
//   kAttributeComputeUnits, kAttributeMaxThreadsPerBlock, kAttributeMaxSharedMemoryPerBlock,
//   kJitErrorLogBuffer, kJitErrorLogBufferSize,
//   kHasIpcEventAttribute (and, where true, kAttributeIpcEventSupported)
//                                                  the vendor's flag and enum values
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_API_CONTRACT_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_API_CONTRACT_HPP_

#include <type_traits>

namespace polyhal::gpu {

// The functions of the contract, declared once in terms of the Api's own types: expand it in the
// Api's body, after its ModuleInfo and KernelInfo, where engine/graph_node.hpp is seen. Each
// vendor defines them (in its api.hpp, api.cpp and error.cpp); one the layer calls but the vendor
// left undefined fails the link, naming it. The check below then finds them all declared: what
// it still catches for functions is an Api that does not expand the macro.
#define POLYHAL_GPU_API_FUNCTIONS(Api)                                                            \
    static halError toHalError(Result result) noexcept;                                           \
    static void describe(Result result, const char** name, const char** text) noexcept;           \
    static halError retainContext(NativeDevice device, Context* context) noexcept;                \
    static void releaseContext(NativeDevice device, Context context) noexcept;                    \
    static halError resetContext(NativeDevice device) noexcept;                                   \
    static halError enterContext(Context context, Context* previous, bool* switched) noexcept;    \
    static void leaveContext(Context previous) noexcept;                                          \
    static uint64_t maxKernelArgumentBytes(NativeDevice device) noexcept;                         \
    static halError memcpyAsync(Stream stream, void* dst, const void* src, size_t count,          \
                                halMemcpyKind kind) noexcept;                                     \
    static halError memcpy2DAsync(Stream stream, void* dst, size_t dstPitch, const void* src,     \
                                  size_t srcPitch, size_t width, size_t height,                   \
                                  halMemcpyKind kind) noexcept;                                   \
    static halError launchHostFunc(Stream stream, halHostFn fn, void* userData) noexcept;         \
    static halError describeModule(const unsigned char* image, size_t size,                       \
                                   ModuleInfo* info) noexcept;                                    \
    static halError describeKernel(const ModuleInfo& module, const char* name, Function function, \
                                   KernelInfo* info) noexcept;                                    \
    static halError checkArguments(const KernelInfo& info, const halKernelArg* args,              \
                                   uint32_t numArgs) noexcept;                                    \
    static halError allowDynamicSharedMemory(Function function, KernelInfo& info,                 \
                                             size_t bytes) noexcept;                              \
    static halError memoryKind(const void* pointer, gpu::MemoryKind* kind) noexcept;              \
    static halError addNode(const gpu::NodeSite<Api>& site, const gpu::NodeRequest& request,      \
                            GraphNode* node) noexcept;                                            \
    static halError instantiate(GraphExec* exec, Graph graph) noexcept;                           \
    static const char* imageProblem(const unsigned char* image, size_t size) noexcept

// The contract's values and functions (each named by `&Api::member`) and its types.
// clang-format off
#define POLYHAL_GPU_API_MEMBERS(X)                                                                \
    X(kName) X(kLibraries) X(kLibraryDescription)                                                 \
    X(kSelectionPriority) X(kDLPackDeviceType) X(kModuleImageKinds)                               \
    X(kSuccess) X(kNotReady) X(kPeerAccessAlreadyEnabled) X(kPeerAccessNotEnabled)                \
    X(toHalError) X(describe) X(symbols)                                                          \
    X(retainContext) X(resetContext) X(releaseContext) X(enterContext) X(leaveContext)            \
    X(toPointer) X(toDevicePointer) X(maxKernelArgumentBytes)                                     \
    X(memcpyAsync) X(memcpy2DAsync) X(launchHostFunc)                                             \
    X(describeModule) X(describeKernel) X(checkArguments) X(allowDynamicSharedMemory)             \
    X(kUserObjectNoDestructorSync) X(kGraphUserObjectMove) X(kNativeGraphsSince)                  \
    X(kExecDestroyWaitsForLaunches) X(kHostToHostCopyNodes) X(kAttributeMaxPitch)                 \
    X(memoryKind) X(addNode) X(instantiate) X(imageProblem)                                       \
    X(kEventQueriesReadTheirStream) X(kIpcEventWaitsOnDevice)                                     \
    X(kStreamNonBlocking) X(kEventDisableTiming) X(kEventBlockingSync) X(kEventInterprocess)      \
    X(kHostAllocPortable) X(kHostRegisterPortable) X(kMemAttachGlobal)                            \
    X(kAttributeManagedMemory) X(kIpcMemLazyEnablePeerAccess)                                     \
    X(kAttributeComputeUnits) X(kAttributeMaxThreadsPerBlock)                                     \
    X(kAttributeMaxSharedMemoryPerBlock)                                                          \
    X(kJitErrorLogBuffer) X(kJitErrorLogBufferSize) X(kHasIpcEventAttribute)
#define POLYHAL_GPU_API_TYPES(X)                                                                  \
    X(Result) X(NativeDevice) X(Context) X(Stream) X(Event) X(Module) X(Function)                 \
    X(DevicePointer) X(JitOption) X(IpcMemHandle) X(IpcEventHandle) X(RelaxedCapture)             \
    X(ModuleInfo) X(KernelInfo) X(Graph) X(GraphNode) X(GraphExec) X(UserObject)                  \
    X(HostNodeParams)
// clang-format on

namespace api_contract {
#define POLYHAL_GPU_API_DETECT_MEMBER(member)   \
    template <class Api, class = void>          \
    inline constexpr bool has_##member = false; \
    template <class Api>                        \
    inline constexpr bool has_##member<Api, std::void_t<decltype(&Api::member)>> = true;
#define POLYHAL_GPU_API_DETECT_TYPE(type)     \
    template <class Api, class = void>        \
    inline constexpr bool has_##type = false; \
    template <class Api>                      \
    inline constexpr bool has_##type<Api, std::void_t<typename Api::type>> = true;
POLYHAL_GPU_API_MEMBERS(POLYHAL_GPU_API_DETECT_MEMBER)
POLYHAL_GPU_API_TYPES(POLYHAL_GPU_API_DETECT_TYPE)
#undef POLYHAL_GPU_API_DETECT_TYPE
#undef POLYHAL_GPU_API_DETECT_MEMBER

template <class Api, class = void>
inline constexpr bool hasIpcEventAttribute = false;
template <class Api>
inline constexpr bool
    hasIpcEventAttribute<Api, std::void_t<decltype(&Api::kAttributeIpcEventSupported)>> = true;
}  // namespace api_contract

// True, or the build fails with one "Api lacks <member>" error per missing member.
template <class Api>
constexpr bool apiMeetsContract() {
#define POLYHAL_GPU_API_REQUIRE(member)            \
    static_assert(api_contract::has_##member<Api>, \
                  "Api lacks " #member " (engine/api_contract.hpp)");
    POLYHAL_GPU_API_MEMBERS(POLYHAL_GPU_API_REQUIRE)
    POLYHAL_GPU_API_TYPES(POLYHAL_GPU_API_REQUIRE)
#undef POLYHAL_GPU_API_REQUIRE
    if constexpr (api_contract::has_kHasIpcEventAttribute<Api>) {
        static_assert(!Api::kHasIpcEventAttribute || api_contract::hasIpcEventAttribute<Api>,
                      "Api lacks kAttributeIpcEventSupported, which kHasIpcEventAttribute promises "
                      "(engine/api_contract.hpp)");
    }
    return true;
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_API_CONTRACT_HPP_
