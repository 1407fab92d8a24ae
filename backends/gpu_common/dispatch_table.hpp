// The dispatch table of a plugin built on this layer, for the vendor API `Api`: every entry the
// entry headers define, as `entry<Api>` (see POLYHAL_PLUGIN_DISPATCH_TABLE_TEMPLATE).
//
// What `Api` provides (see backends/cuda/api.hpp and backends/hip/api.hpp):
//   kName, kLibraries[], kLibraryDescription       backend name; library names to try; wording
//   kSelectionPriority, kDLPackDeviceType, kModuleImageKinds
//                                                  what backendGetInfo reports
//   Result, kSuccess, kNotReady, kPeerAccessAlreadyEnabled, kPeerAccessNotEnabled
//                                                  the vendor's status type and some of its values
//   toHalError(Result), describe(Result, &name, &text)
//   NativeDevice, Context, Stream, Event, Module, Function, DevicePointer, JitOption,
//   IpcMemHandle, IpcEventHandle
//   symbols                                        the symbol table whose roles the entries
//                                                  call (support/symbol_table.hpp)
//   retainContext(), releaseContext()              what a device in use holds (CUDA: its primary
//                                                  context)
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
//   kHostAllocPortable,
//   kIpcMemLazyEnablePeerAccess,
//   kAttributeComputeUnits, kAttributeMaxThreadsPerBlock, kAttributeMaxSharedMemoryPerBlock,
//   kJitErrorLogBuffer, kJitErrorLogBufferSize,
//   kHasIpcEventAttribute (and, where true, kAttributeIpcEventSupported)
//                                                  the vendor's flag and enum values
#ifndef POLYHAL_BACKENDS_GPU_COMMON_DISPATCH_TABLE_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_DISPATCH_TABLE_HPP_

#include <polyhal/plugin_support.hpp>

#include "gpu_common/device.hpp"
#include "gpu_common/event.hpp"
#include "gpu_common/graph.hpp"
#include "gpu_common/memory.hpp"
#include "gpu_common/module.hpp"
#include "gpu_common/platform.hpp"
#include "gpu_common/stream.hpp"

namespace polyhal::gpu {
POLYHAL_PLUGIN_DISPATCH_TABLE_TEMPLATE()
}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_DISPATCH_TABLE_HPP_
