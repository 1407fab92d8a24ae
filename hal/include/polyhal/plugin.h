/*
 * polyhal plugin ABI: what a backend shared library implements.
 *
 * A plugin is one shared library (libpolyhal_<name>.so) that exports exactly one symbol,
 * HAL_PLUGIN_ENTRY_NAME, of type halPluginEntryFn. The core calls it once, passing the plugin
 * ABI version it speaks, its host services and a dispatch table whose `size` member says how
 * large the core's table is. The plugin fills the entries it implements and sets `size` to the
 * size of the table it was built against and `abiVersion` to its own version.
 *
 * Versioning: the major version changes when an existing entry changes meaning or signature;
 * the core refuses a plugin of another major version (HAL_ERROR_BACKEND_INCOMPATIBLE). Minor
 * versions only append entries: a plugin built against an older minor version reports a smaller
 * `size`, and the core treats the entries past it as absent. An absent optional entry makes the
 * matching public call return HAL_ERROR_NOT_SUPPORTED; absent required entries (marked
 * "required" below) make the core refuse the plugin at load.
 *
 * Division of labour: the core validates every argument and handle, keeps handle bookkeeping,
 * logging and error messages. A plugin receives only valid objects it created itself and
 * translates each call to its vendor API. Every entry may be called from any thread at once and
 * must be thread-safe. An entry reports failure by returning a halError after calling
 * host->setErrorMessage() with the vendor's error name and text; the core prefixes the backend
 * name. A value that is not a halError (a vendor code passed through) reaches the caller as
 * HAL_ERROR_BACKEND, the message naming the entry and the value. No C++ exception may leave a
 * plugin.
 *
 * Asynchronous failures (a kernel that fails or faults after the launch returned) are remembered
 * by the plugin and returned as HAL_ERROR_LAUNCH_FAILED exactly once: by the first
 * streamQuery/streamSynchronize of that stream or deviceSynchronize of its device, whichever
 * comes first (a failure of a destroyed stream by deviceSynchronize). If more operations fail
 * before that, return the first and count the others in its message. streamSynchronize returns
 * it after the stream is idle; streamQuery may return it before, the core asks again.
 * eventQuery/eventSynchronize never return a failure: they say whether the captured work has
 * ended, failed or not (the core's pool queries its own events, and must neither take a
 * failure from the application nor see one that is not its own). Once returned, a failure is
 * gone: later work, later events and later synchronisations of the stream are clean. The core
 * keeps the failures its own waits receive and hands them to the application's reporting calls
 * (hal.h, "Asynchronous failures"). A vendor runtime that loses the device on a fault (CUDA's
 * sticky errors) makes every later entry on it fail with the vendor's error until the device
 * is reset; that is the vendor's behaviour, not a failure the plugin keeps.
 */
#ifndef POLYHAL_PLUGIN_H_
#define POLYHAL_PLUGIN_H_

#include <polyhal/hal.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HAL_PLUGIN_ABI_VERSION_MAJOR 1u
#define HAL_PLUGIN_ABI_VERSION_MINOR 7u
#define HAL_PLUGIN_MAKE_VERSION(major, minor) (((uint32_t)(major) << 16) | (uint32_t)(minor))
#define HAL_PLUGIN_VERSION_MAJOR(version) ((uint32_t)(version) >> 16)
#define HAL_PLUGIN_VERSION_MINOR(version) ((uint32_t)(version)&0xffffu)
#define HAL_PLUGIN_ABI_VERSION \
    HAL_PLUGIN_MAKE_VERSION(HAL_PLUGIN_ABI_VERSION_MAJOR, HAL_PLUGIN_ABI_VERSION_MINOR)

/* The one symbol a plugin exports. */
#define HAL_PLUGIN_ENTRY_NAME "halPluginGetDispatchTable"

/* Plugin-side objects. The core never looks inside them. */
typedef struct halPluginDevice_t* halPluginDevice;
typedef struct halPluginStream_t* halPluginStream;
typedef struct halPluginEvent_t* halPluginEvent;
typedef struct halPluginModule_t* halPluginModule;
typedef struct halPluginFunction_t* halPluginFunction;
typedef struct halPluginGraph_t* halPluginGraph;

/* A plugin's part of an IPC handle (hal.h's halIpcMemHandle and halIpcEventHandle hold it with
 * the core's own header): whatever the importing plugin needs to open the memory or event, in
 * plain bytes (no pointers valid only in the exporter), e.g. a CUipcMemHandle. */
#define HAL_PLUGIN_IPC_HANDLE_SIZE 64
typedef struct halPluginIpcHandle {
    unsigned char bytes[HAL_PLUGIN_IPC_HANDLE_SIZE];
} halPluginIpcHandle;

typedef enum halLogLevel {
    HAL_LOG_TRACE = 0,
    HAL_LOG_DEBUG = 1,
    HAL_LOG_INFO = 2,
    HAL_LOG_WARN = 3,
    HAL_LOG_ERROR = 4,
    HAL_LOG_OFF = 5,
    HAL_LOG_FORCE_UINT32 = 0x7fffffff
} halLogLevel;

/* Services the core offers every plugin. Valid from the entry call until the process exits. */
typedef struct halPluginHost {
    size_t size;
    uint32_t abiVersion;
    /* Writes `message` to polyhal's log (POLYHAL_LOG_LEVEL), attributed to the plugin. */
    void (*log)(halLogLevel level, const char* message);
    /* Is the message at `level` going to be written? Lets a plugin skip formatting. */
    int (*shouldLog)(halLogLevel level);
    /* Sets the calling thread's error detail; call it before returning an error. Include the
     * vendor's error name and text, e.g. "cuStreamCreate: CUDA_ERROR_OUT_OF_MEMORY (out of
     * memory)". */
    void (*setErrorMessage)(const char* message);
} halPluginHost;

/* Device properties a plugin reports; the core adds the backend name and ordinals. */
typedef struct halPluginDeviceInfo {
    size_t size;
    char name[256];
    uint64_t totalMemory;
    uint32_t computeUnits;
    uint32_t maxThreadsPerBlock;
    uint64_t maxSharedMemoryPerBlock;
    uint64_t capabilities; /* halDeviceCapability bits the device really supports */
    /* The stream priority range; not read from a plugin with deviceGetStreamPriorityRange. */
    int leastStreamPriority;
    int greatestStreamPriority;
    /* Largest sum of the argument sizes of one launch the device accepts (the vendor's kernel
     * parameter limit). 0, or a plugin built before this member: the core applies 4096 bytes,
     * CUDA's classic limit. The core refuses larger launches, so launchKernel never sees one. */
    uint64_t maxKernelArgumentBytes;
} halPluginDeviceInfo;

/* What a plugin says of its backend as a whole (backendGetInfo), so that neither the core nor the
 * tools keep a list of backends: adding a backend is adding its plugin. Like every struct the
 * core hands a plugin to fill, it may grow: write only the members that lie within `size`
 * (polyhal::plugin::fillInfo does). */
typedef struct halPluginBackendInfo {
    size_t size; /* set by the core */
    /* Automatic selection (POLYHAL_BACKEND unset) initialises the plugins it finds in the plugin
     * folders in decreasing order of this and keeps the first that has a device; 0: never chosen
     * automatically, only by name. polyhal's own: cuda 300, hip 200, level_zero 100; opencl and
     * the CPU plugin 0 (the CPU backend built into libpolyhal.so is the fallback). A vendor's
     * plugin for a discrete accelerator picks a value in the hundreds. */
    uint32_t selectionPriority;
    /* DLPack's DLDeviceType of the backend's device memory (kDLCPU 1, kDLCUDA 2, kDLOpenCL 4,
     * kDLROCM 10, kDLOneAPI 14), or 0 when DLPack has none. Memory of a device with
     * HAL_DEVICE_CAP_HOST_ACCESSIBLE is exported as kDLCPU whatever this says. */
    int32_t dlpackDeviceType;
    /* The kinds of image moduleLoadData accepts, as file extensions in order of preference,
     * comma-separated ("ptx,cubin,fatbin"); a static string of at most 63 characters (what
     * halDeviceProperties holds). NULL or "" without kernels. */
    const char* moduleImageKinds;
} halPluginBackendInfo;

/* ---- Native graphs (ABI 1.5) ----
 * What a capture recorded, as a plain list the plugin may turn into one executable of its vendor
 * (a CUDA or HIP graph, a Level Zero command list, an OpenCL command buffer, a batch). The
 * operations run in list order, each after the previous one has completed, exactly as the eager
 * calls would have run on one stream. A launch of another graph inside the capture is flattened
 * into its operations; captured event records and waits only ordered work inside the capture and
 * are not listed. Everything the description points to (the list, kernel arguments) is valid
 * for the graphCreate call only: a plugin copies what it keeps. */
typedef enum halPluginGraphOpKind {
    /* memsetAsync's operation; maps to cuGraphAddMemsetNode, zeCommandListAppendMemoryFill,
     * clCommandFillBufferKHR. */
    HAL_PLUGIN_GRAPH_OP_MEMSET = 1,
    /* memcpyAsync's (count > 0, kind resolved); cuGraphAddMemcpyNode with a 1D copy,
     * zeCommandListAppendMemoryCopy, clCommandCopyBufferKHR. */
    HAL_PLUGIN_GRAPH_OP_COPY = 2,
    /* memcpy3DAsync's box (never contiguous, kind resolved, non-zero extents); listed only where
     * the plugin has memcpy3DAsync, the core splits the box into row copies otherwise.
     * cuGraphAddMemcpyNode, zeCommandListAppendMemoryCopyRegion, clCommandCopyBufferRectKHR. */
    HAL_PLUGIN_GRAPH_OP_COPY_3D = 3,
    /* launchKernel's; cuGraphAddKernelNode, zeCommandListAppendLaunchKernel,
     * clCommandNDRangeKernelKHR. */
    HAL_PLUGIN_GRAPH_OP_KERNEL = 4,
    /* launchHostFunc's: fn(userData) on the host once the operations before it completed, the
     * operations after it waiting for its return; cuGraphAddHostNode. `fn` is the core's
     * wrapper and userData its own, valid until the plugin calls the description's release. */
    HAL_PLUGIN_GRAPH_OP_HOST_FUNCTION = 5,
    HAL_PLUGIN_GRAPH_OP_FORCE_UINT32 = 0x7fffffff
} halPluginGraphOpKind;

typedef struct halPluginGraphOp {
    halPluginGraphOpKind kind;
    union {
        struct {
            void* dst;
            size_t count;
            unsigned char value;
        } memset;
        struct {
            void* dst;
            const void* src;
            size_t count;
            halMemcpyKind kind;
        } copy;
        halMemcpy3DParams copy3D;
        struct {
            halPluginFunction function;
            halDim3 grid;
            halDim3 block;
            size_t dynamicSharedBytes;
            const halKernelArg* args; /* by value, as launchKernel's */
            uint32_t numArgs;
        } kernel;
        struct {
            halHostFn fn;
            void* userData;
        } hostFunction;
    } params;
} halPluginGraphOp;

typedef struct halPluginGraphDesc {
    size_t size; /* sizeof(halPluginGraphDesc) as the core knows it */
    const halPluginGraphOp* ops;
    uint32_t numOps; /* >= 1 */
    /* sizeof(halPluginGraphOp) as the core knows it: the stride of `ops` (a later minor version
     * may grow the operation, as it may halMemcpy3DParams). A plugin steps by it, reads the
     * members it knows, and declines with HAL_ERROR_NOT_SUPPORTED where it is smaller than the
     * operation it was built with. */
    size_t opSize;
    /* The plugin calls release(releaseContext) exactly once, after graphCreate succeeded, when
     * the executable is gone: graphDestroy was called and every launch of it has completed. On
     * any thread, from inside graphDestroy too; it calls nothing of the plugin's. The host
     * functions' userData live until then. Not called when graphCreate fails. */
    void (*release)(void* releaseContext);
    void* releaseContext;
} halPluginGraphDesc;

typedef struct halPluginDispatchTable {
    /* Filled by the core with sizeof its table; the plugin writes the size it was built with. */
    size_t size;
    /* The plugin's HAL_PLUGIN_ABI_VERSION. */
    uint32_t abiVersion;
    /* Short backend name, e.g. "cuda"; a static string. Required. */
    const char* name;

    /* ---- Platform ---- */
    /* Required. Initialises the vendor runtime. No driver or no device: HAL_ERROR_NO_DEVICE with
     * the vendor's own message. Called once, before any other entry but backendGetInfo. A plugin
     * whose entry point has run is never unloaded: its objects may be in use until the process
     * exits. */
    halError (*initialize)(void);
    /* Required. Number of devices: 1 to 1024 after a successful initialize, the same answer
     * every time. The core opens the devices of its first answer and refuses the plugin
     * (HAL_ERROR_BACKEND_INCOMPATIBLE) if the answer is negative, above 1024, or changes. */
    halError (*deviceGetCount)(int* count);
    /* Required. Opens device `ordinal` (0-based within this backend). */
    halError (*deviceOpen)(int ordinal, halPluginDevice* device);
    /* Required. Closes a device once all its objects are destroyed. */
    void (*deviceClose)(halPluginDevice device);
    /* Required. Fills `info` (info->size is set by the core). */
    halError (*deviceGetInfo)(halPluginDevice device, halPluginDeviceInfo* info);
    /* Required. Blocks until all streams of the device are idle; returns the first unreported
     * asynchronous failure of any of them (destroyed ones included), once. */
    halError (*deviceSynchronize)(halPluginDevice device);

    /* ---- Streams ---- (all required) */
    /* `priority` is already clamped to the device's range. */
    halError (*streamCreate)(halPluginDevice device, int priority, uint32_t flags,
                             halPluginStream* stream);
    /* Releases the stream once its submitted work has finished; must not block on that work. */
    halError (*streamDestroy)(halPluginStream stream);
    halError (*streamSynchronize)(halPluginStream stream);
    /* HAL_SUCCESS when idle, HAL_ERROR_NOT_READY otherwise. */
    halError (*streamQuery)(halPluginStream stream);
    /* Later work of `stream` waits for the work captured by the event's last record. An event
     * that was never recorded imposes no wait. Must not block the host. */
    halError (*streamWaitEvent)(halPluginStream stream, halPluginEvent event);

    /* ---- Events ---- */
    /* Required. `flags` are HAL_EVENT_* bits. */
    halError (*eventCreate)(halPluginDevice device, uint32_t flags, halPluginEvent* event);
    /* Required. May be called while the event is pending; waits already enqueued still hold. */
    halError (*eventDestroy)(halPluginEvent event);
    /* Required. */
    halError (*eventRecord)(halPluginEvent event, halPluginStream stream);
    /* Required. HAL_SUCCESS when the captured work has ended (failed or not) or the event was
     * never recorded, HAL_ERROR_NOT_READY otherwise; never an asynchronous failure. */
    halError (*eventQuery)(halPluginEvent event);
    /* Required. */
    halError (*eventSynchronize)(halPluginEvent event);
    /* Optional (HAL_DEVICE_CAP_TIMING_EVENTS). Both events are recorded and complete (the core
     * has seen eventQuery succeed for each). */
    halError (*eventElapsedTime)(float* ms, halPluginEvent start, halPluginEvent end);

    /* ---- Memory ---- */
    /* Required. Device memory aligned to at least 256 bytes. Exhausted: HAL_ERROR_OUT_OF_MEMORY. */
    halError (*memAllocDevice)(halPluginDevice device, size_t size, void** ptr);
    /* Required. The core guarantees no submitted work still uses the memory. */
    halError (*memFreeDevice)(halPluginDevice device, void* ptr);
    /* Optional. Page-locked host memory; without it the core uses aligned host memory. */
    halError (*memAllocHost)(halPluginDevice device, size_t size, void** ptr);
    halError (*memFreeHost)(halPluginDevice device, void* ptr);
    /* Required. `kind` is never HAL_MEMCPY_DEFAULT; device operands belong to the stream's
     * device. count > 0. */
    halError (*memcpyAsync)(halPluginStream stream, void* dst, const void* src, size_t count,
                            halMemcpyKind kind);
    /* Required. `dst` is device or managed memory (memAllocManaged) of the stream's device, or
     * host memory when the device is HAL_DEVICE_CAP_HOST_ACCESSIBLE. count > 0. */
    halError (*memsetAsync)(halPluginStream stream, void* dst, unsigned char value, size_t count);

    /* ---- Host functions ---- */
    /* Optional (HAL_DEVICE_CAP_HOST_FUNCTIONS). `fn` is the core's own (a wrapper of the user's
     * function, or a host memset); the core refuses every polyhal call that would reach the
     * device from inside it, so fn never calls back into the plugin, except where the plugin
     * has eventCompletionTime: a trace's host function calls it, and eventDestroy, on the
     * trace's own events. A plugin whose host functions of different streams may run one at a
     * time (on one driver thread) must not report HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS. */
    halError (*launchHostFunc)(halPluginStream stream, halHostFn fn, void* userData);

    /* ---- Modules and kernels ---- (optional, HAL_DEVICE_CAP_KERNELS; all or none) */
    /* A bad image: HAL_ERROR_INVALID_IMAGE with the reason. The image is only borrowed, and may
     * be hostile: check every header, offset and size against `size` before anything (a
     * dynamic loader, a vendor JIT) trusts it; a truncated image must never crash. */
    halError (*moduleLoadData)(halPluginDevice device, const void* image, size_t size,
                               halPluginModule* module);
    /* The core has synchronised the module's device first, so no launch from it is pending. */
    halError (*moduleUnload)(halPluginModule module);
    /* Unknown name: HAL_ERROR_NOT_FOUND. */
    halError (*moduleGetFunction)(halPluginModule module, const char* name,
                                  halPluginFunction* function);
    /* Dimensions are non-zero and within the device's limits; arguments are valid for the call
     * only and must be copied if the launch is deferred. */
    halError (*launchKernel)(halPluginStream stream, halPluginFunction function, halDim3 grid,
                             halDim3 block, size_t dynamicSharedBytes, const halKernelArg* args,
                             uint32_t numArgs);

    /* ---- Interop ---- */
    /* Optional (HAL_DEVICE_CAP_NATIVE_HANDLES). */
    halError (*streamGetNativeHandle)(halPluginStream stream, void** native);

    /* ---- ABI 1.1 ---- */
    /* Optional (HAL_DEVICE_CAP_PEER_COPY). Copies `count` bytes (> 0) from device memory of
     * `srcDevice` to device memory of `dstDevice`, two different devices of this plugin, in the
     * order of `stream`, a stream of either device. Must not block the host and must not stage
     * through host memory the core can see (the vendor's peer path: cuMemcpyPeerAsync,
     * hipMemcpyPeerAsync, a Level Zero copy between devices of one context). */
    halError (*memcpyPeerAsync)(halPluginStream stream, void* dst, halPluginDevice dstDevice,
                                const void* src, halPluginDevice srcDevice, size_t count);
    /* Optional. Free and total bytes of the device's memory as the vendor reports them
     * (cuMemGetInfo). Without it the core reports the device's totalMemory, less what its pool
     * holds. */
    halError (*memGetInfo)(halPluginDevice device, size_t* freeBytes, size_t* totalBytes);
    /* Optional, all or none. Can kernels of `device` access memory of `peer`, another device of
     * this plugin (cuDeviceCanAccessPeer)? Enabling makes them able to (cuCtxEnablePeerAccess);
     * the core calls enable once per pair until disabled, and only where canAccessPeer said 1.
     * Without them the core reports access only between host-accessible devices. */
    halError (*deviceCanAccessPeer)(halPluginDevice device, halPluginDevice peer, int* canAccess);
    halError (*deviceEnablePeerAccess)(halPluginDevice device, halPluginDevice peer);
    halError (*deviceDisablePeerAccess)(halPluginDevice device, halPluginDevice peer);

    /* ---- ABI 1.2 ---- */
    /* Optional. Copies the box `params` describes in `stream`'s order, as few vendor operations
     * (one cuMemcpy2DAsync per slice, one zeCommandListAppendMemoryCopyRegion). The core has
     * checked the box (pitches, spans, bounds) and resolved `kind`; both ends are memory
     * memcpyAsync accepts for the stream, the box is not contiguous, and width, height and depth
     * are non-zero.
     * Without it the core enqueues one memcpyAsync per row. */
    halError (*memcpy3DAsync)(halPluginStream stream, const halMemcpy3DParams* params);

    /* Sharing between processes. */
    /* Optional, all three or none (HAL_DEVICE_CAP_IPC_MEMORY). Exports the allocation `base`,
     * exactly as memAllocDevice returned it (the core adds the offset of a pool block within
     * it), as cuIpcGetMemHandle. The core may export one allocation many times. An allocation
     * that cannot be shared: HAL_ERROR_NOT_SUPPORTED with the reason. */
    halError (*ipcMemGetHandle)(halPluginDevice device, void* base, halPluginIpcHandle* handle);
    /* Maps an allocation another process exported (never this one: the core refuses that) into
     * `device`, as cuIpcOpenMemHandle. `size` is the allocation's size as the exporter's
     * memAllocDevice was asked for it. The exporter is gone or freed it: HAL_ERROR_NOT_FOUND;
     * the OS refused access: HAL_ERROR_NOT_PERMITTED; with the OS or vendor error. */
    halError (*ipcMemOpenHandle)(halPluginDevice device, const halPluginIpcHandle* handle,
                                 size_t size, void** base);
    /* Unmaps what ipcMemOpenHandle returned; the core has synchronised the device first. */
    halError (*ipcMemCloseHandle)(halPluginDevice device, void* base);
    /* Optional, both or none (HAL_DEVICE_CAP_IPC_EVENTS). eventCreate then accepts
     * HAL_EVENT_INTERPROCESS (always with HAL_EVENT_DISABLE_TIMING). Exports such an event, as
     * cuIpcGetEventHandle. */
    halError (*ipcEventGetHandle)(halPluginEvent event, halPluginIpcHandle* handle);
    /* Opens an event another process exported, as cuIpcOpenEventHandle: its records, in either
     * process, are what eventQuery, eventSynchronize and streamWaitEvent see in both. The core
     * destroys it with eventDestroy. Errors as ipcMemOpenHandle. */
    halError (*ipcEventOpenHandle)(halPluginDevice device, const halPluginIpcHandle* handle,
                                   halPluginEvent* event);

    /* ---- ABI 1.3 ---- */
    /* Optional. Fills `info` (info->size is set by the core). Called right after the entry
     * point, before initialize, on every plugin automatic selection finds: it must not start the
     * vendor runtime. Without it the backend is chosen only by name, has no DLPack device type
     * and no known module image kinds. */
    halError (*backendGetInfo)(halPluginBackendInfo* info);

    /* ---- ABI 1.4 ---- */
    /* Optional. When the work that `event`'s last record captured had completed, read from the
     * device's own clock (OpenCL's CL_PROFILING_COMMAND_END) and given on the host's steady clock
     * (CLOCK_MONOTONIC) in nanoseconds. The event was created without HAL_EVENT_DISABLE_TIMING,
     * is recorded and has completed. A trace (POLYHAL_TRACE) times each stream operation with two
     * records around it, and calls this from the core's host function behind them: the one call
     * into the plugin from inside a host function, so a plugin whose vendor forbids calls there
     * (CUDA, HIP) leaves it out, and its spans are timed by host functions alone. */
    halError (*eventCompletionTime)(halPluginEvent event, uint64_t* hostNanoseconds);

    /* ---- ABI 1.5 ---- */
    /* Optional, all three or none: native graphs. Without them (or when graphCreate declines)
     * the core replays a graph's operations one by one through the entries above, so every
     * backend has graphs; with them a launch is one vendor submission.
     * graphCreate builds an executable of `device` from `desc` (halStreamEndCapture calls it
     * once per graph). HAL_ERROR_NOT_SUPPORTED declines, with the reason (an operation kind the
     * vendor cannot record, such as a host function in an OpenCL command buffer): the core then
     * replays the graph, as it does for any other failure. */
    halError (*graphCreate)(halPluginDevice device, const halPluginGraphDesc* desc,
                            halPluginGraph* graph);
    /* Enqueues one run of every operation of `graph` on `stream`, a stream of its device, after
     * the work already in the stream and before the work enqueued later, as the eager calls
     * would be: events recorded after it capture it, waits before it hold it back. Must not
     * block the host. The core orders each launch after the graph's previous one, on whichever
     * stream that ran (no two runs of one executable overlap, as with cudaGraphLaunch), and
     * keeps the kernels' modules loaded while the graph may launch them. An operation that fails
     * when it runs is an asynchronous failure of the stream, as that of the eager call. */
    halError (*graphLaunch)(halPluginGraph graph, halPluginStream stream);
    /* Destroys `graph`; launches already enqueued complete first (the plugin frees the
     * executable once they have, then calls the description's release). Must not block on them.
     * The module of one of its kernels may have been unloaded before: the core launches no graph
     * whose kernels are gone, but destroys it, so the executable must not need them then. */
    halError (*graphDestroy)(halPluginGraph graph);

    /* ---- ABI 1.6 ---- */
    /* Optional. The stream priority range of `device`, for a plugin that can read it only from
     * a device in use (CUDA: from its context, which costs device memory): the core asks once,
     * the first time it needs the range (halGetStreamPriorityRange, stream creation), and the
     * plugin may open the device then; deviceGetInfo's leastStreamPriority and
     * greatestStreamPriority are then not read. A failure (a device whose context cannot be had)
     * leaves the device without priorities (0, 0). */
    halError (*deviceGetStreamPriorityRange)(halPluginDevice device, int* least, int* greatest);

    /* ---- ABI 1.7 ---- */
    /* Optional, both or none (HAL_DEVICE_CAP_HOST_REGISTER). Page-locks `size` (> 0) bytes of the
     * caller's host memory from `ptr` for every device of the plugin, as cuMemHostRegister with
     * CU_MEMHOSTREGISTER_PORTABLE; memcpyAsync then treats it as pinned. The core has refused
     * ranges overlapping one registered before or halMallocHost memory. A range the vendor
     * cannot register (alignment, an address it cannot map): HAL_ERROR_INVALID_VALUE with the
     * vendor's reason. */
    halError (*memHostRegister)(halPluginDevice device, void* ptr, size_t size);
    /* Ends the registration that memHostRegister made at `ptr` (cuMemHostUnregister). */
    halError (*memHostUnregister)(halPluginDevice device, void* ptr);
    /* Optional, both or none (HAL_DEVICE_CAP_MANAGED_MEMORY). Memory the device and the host
     * both address with one pointer (cuMemAllocManaged with CU_MEM_ATTACH_GLOBAL,
     * zeMemAllocShared), aligned to at least 256 bytes; memcpyAsync and launchKernel accept it as
     * host or as device memory of `device`, memsetAsync as its device memory. Exhausted:
     * HAL_ERROR_OUT_OF_MEMORY. */
    halError (*memAllocManaged)(halPluginDevice device, size_t size, void** ptr);
    /* Frees memAllocManaged's memory; the core has synchronised the device first. */
    halError (*memFreeManaged)(halPluginDevice device, void* ptr);
    /* Optional. halResetDevice calls it once the core has waited for the device's work and
     * destroyed every object of it: the plugin lets go of what it kept for the device (destroyed
     * streams, graphs, queued frees) and returns the vendor's state of the device to a fresh
     * start, a fault the vendor keeps included (cuDevicePrimaryCtxReset, hipDeviceReset), or,
     * where the vendor has no reset and keeps the device lost (Level Zero), fails with
     * HAL_ERROR_LAUNCH_FAILED saying so. The device stays open; the next call that needs it
     * starts it again. Without the entry the vendor's state survives halResetDevice. */
    halError (*deviceReset)(halPluginDevice device);
} halPluginDispatchTable;

/* Every entry of halPluginDispatchTable, in table order, as
 * X(entry, requirement, capabilities, group):
 *   requirement   HAL_PLUGIN_REQUIRED (the core refuses a plugin without it) or HAL_PLUGIN_OPTIONAL
 *                 (absent: the matching public call returns HAL_ERROR_NOT_SUPPORTED);
 *   capabilities  the halDeviceCapability bits the entry serves: when it is absent, the core clears
 *                 them from every device of the plugin, whatever deviceGetInfo said;
 *   group         HAL_PLUGIN_ALONE, or the group of optional entries that only work together
 *                 (the four of HAL_DEVICE_CAP_KERNELS, memAllocHost with memFreeHost, ...): a
 *                 plugin implements all of a group or none of it. The core refuses a plugin with
 *                 part of a group, and POLYHAL_PLUGIN_DISPATCH_TABLE does not compile one.
 * The core's load checks and plugin_support.hpp's table builder are generated from this list, and
 * a compile-time check keeps it equal to the table above. A new entry is appended to both. */
#define HAL_PLUGIN_REQUIRED 1
#define HAL_PLUGIN_OPTIONAL 0
#define HAL_PLUGIN_ALONE 0
#define HAL_PLUGIN_GROUP_PINNED_HOST 1
#define HAL_PLUGIN_GROUP_KERNELS 2
#define HAL_PLUGIN_GROUP_PEER_ACCESS 3
#define HAL_PLUGIN_GROUP_IPC_MEMORY 4
#define HAL_PLUGIN_GROUP_IPC_EVENTS 5
#define HAL_PLUGIN_GROUP_NATIVE_GRAPHS 6
#define HAL_PLUGIN_GROUP_HOST_REGISTER 7
#define HAL_PLUGIN_GROUP_MANAGED_MEMORY 8
#define HAL_PLUGIN_GROUP_COUNT 9
#define HAL_PLUGIN_ENTRIES(X)                                                                      \
    X(initialize, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                        \
    X(deviceGetCount, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                    \
    X(deviceOpen, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                        \
    X(deviceClose, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                       \
    X(deviceGetInfo, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                     \
    X(deviceSynchronize, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                 \
    X(streamCreate, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                      \
    X(streamDestroy, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                     \
    X(streamSynchronize, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                 \
    X(streamQuery, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                       \
    X(streamWaitEvent, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                   \
    X(eventCreate, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                       \
    X(eventDestroy, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                      \
    X(eventRecord, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                       \
    X(eventQuery, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                        \
    X(eventSynchronize, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                  \
    X(eventElapsedTime, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_TIMING_EVENTS, HAL_PLUGIN_ALONE)       \
    X(memAllocDevice, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                    \
    X(memFreeDevice, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                     \
    X(memAllocHost, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_GROUP_PINNED_HOST)                          \
    X(memFreeHost, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_GROUP_PINNED_HOST)                           \
    X(memcpyAsync, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                       \
    X(memsetAsync, HAL_PLUGIN_REQUIRED, 0, HAL_PLUGIN_ALONE)                                       \
    X(launchHostFunc, HAL_PLUGIN_OPTIONAL,                                                         \
      HAL_DEVICE_CAP_HOST_FUNCTIONS | HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS, HAL_PLUGIN_ALONE)  \
    X(moduleLoadData, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_KERNELS, HAL_PLUGIN_GROUP_KERNELS)       \
    X(moduleUnload, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_KERNELS, HAL_PLUGIN_GROUP_KERNELS)         \
    X(moduleGetFunction, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_KERNELS, HAL_PLUGIN_GROUP_KERNELS)    \
    X(launchKernel, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_KERNELS, HAL_PLUGIN_GROUP_KERNELS)         \
    X(streamGetNativeHandle, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_NATIVE_HANDLES, HAL_PLUGIN_ALONE) \
    X(memcpyPeerAsync, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_PEER_COPY, HAL_PLUGIN_ALONE)            \
    X(memGetInfo, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_ALONE)                                        \
    X(deviceCanAccessPeer, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_GROUP_PEER_ACCESS)                   \
    X(deviceEnablePeerAccess, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_GROUP_PEER_ACCESS)                \
    X(deviceDisablePeerAccess, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_GROUP_PEER_ACCESS)               \
    X(memcpy3DAsync, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_ALONE)                                     \
    X(ipcMemGetHandle, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_IPC_MEMORY,                             \
      HAL_PLUGIN_GROUP_IPC_MEMORY)                                                                 \
    X(ipcMemOpenHandle, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_IPC_MEMORY,                            \
      HAL_PLUGIN_GROUP_IPC_MEMORY)                                                                 \
    X(ipcMemCloseHandle, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_IPC_MEMORY,                           \
      HAL_PLUGIN_GROUP_IPC_MEMORY)                                                                 \
    X(ipcEventGetHandle, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_IPC_EVENTS,                           \
      HAL_PLUGIN_GROUP_IPC_EVENTS)                                                                 \
    X(ipcEventOpenHandle, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_IPC_EVENTS,                          \
      HAL_PLUGIN_GROUP_IPC_EVENTS)                                                                 \
    X(backendGetInfo, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_ALONE)                                    \
    X(eventCompletionTime, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_ALONE)                               \
    X(graphCreate, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_GROUP_NATIVE_GRAPHS)                         \
    X(graphLaunch, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_GROUP_NATIVE_GRAPHS)                         \
    X(graphDestroy, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_GROUP_NATIVE_GRAPHS)                        \
    X(deviceGetStreamPriorityRange, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_ALONE)                      \
    X(memHostRegister, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_HOST_REGISTER,                          \
      HAL_PLUGIN_GROUP_HOST_REGISTER)                                                              \
    X(memHostUnregister, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_HOST_REGISTER,                        \
      HAL_PLUGIN_GROUP_HOST_REGISTER)                                                              \
    X(memAllocManaged, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_MANAGED_MEMORY,                         \
      HAL_PLUGIN_GROUP_MANAGED_MEMORY)                                                             \
    X(memFreeManaged, HAL_PLUGIN_OPTIONAL, HAL_DEVICE_CAP_MANAGED_MEMORY,                          \
      HAL_PLUGIN_GROUP_MANAGED_MEMORY)                                                             \
    X(deviceReset, HAL_PLUGIN_OPTIONAL, 0, HAL_PLUGIN_ALONE)

/* The entry point. `coreAbiVersion` is the core's HAL_PLUGIN_ABI_VERSION; `table->size` is the
 * core's sizeof(halPluginDispatchTable). A plugin of another major version returns
 * HAL_ERROR_BACKEND_INCOMPATIBLE (after host->setErrorMessage saying which versions). */
typedef halError (*halPluginEntryFn)(uint32_t coreAbiVersion, const halPluginHost* host,
                                     halPluginDispatchTable* table);

/* Marks the entry point, the one symbol a plugin exports. */
#if defined(__GNUC__)
#define HAL_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define HAL_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif /* POLYHAL_PLUGIN_H_ */
