/*
 * polyhal: one C ABI for accelerator runtimes.
 *
 * Names: a function has AscendCL's runtime name with the prefix `hal` where AscendCL has the
 * call (aclrtCreateStream -> halCreateStream, aclrtMemcpyAsync -> halMemcpyAsync, with
 * AscendCL's argument order), and is named halObjectVerb otherwise (halMemPoolTrim,
 * halStreamGetNativeHandle). Types are halObject, enum values HAL_OBJECT_VALUE.
 *
 * Conventions that hold for every function in this header:
 * - Every function returns a halError; results come back through pointers, which are written
 *   only on success.
 * - Every function is thread-safe and may be called before halInit (the first call initialises
 *   polyhal once, thread-safely).
 * - A failure leaves a readable detail for the calling thread in halGetLastErrorMessage().
 * - A NULL halStream means the default stream of the calling thread's current device: an
 *   ordinary in-order stream, unless the process chose CUDA's legacy default stream
 *   (halSetDefaultStreamMode).
 * - A handle that is NULL where one is required, destroyed, or not made by polyhal gives
 *   HAL_ERROR_INVALID_HANDLE. Destroying a handle while another thread is still using it is a
 *   race in the application, as in CUDA.
 * - If initialisation failed (for example the backend named in POLYHAL_BACKEND is missing),
 *   every call returns that same error, with the same message.
 * - Inside a host function (halLaunchHostFunc) every call that could reach the device returns
 *   HAL_ERROR_NOT_PERMITTED; halLaunchHostFunc lists the calls allowed there.
 *
 * Asynchronous failures. Work that fails after the call that enqueued it returned (a kernel
 * that fails or faults, a host function that throws) leaves an asynchronous failure,
 * HAL_ERROR_LAUNCH_FAILED with the message of the failing operation, on the stream that ran it.
 * - It is reported exactly once, by the first of these calls to see it: halSynchronizeStream or
 *   halQueryStream of that stream, halSynchronizeDevice or halResetDevice of its device. A
 *   failure of a destroyed stream, or one that halModuleUnload waited for, is reported by the
 *   device's halSynchronizeDevice or halResetDevice. If several operations of a stream fail
 *   before one is reported, the first is reported and its message counts the others.
 * - No other call reports or consumes it. halQueryEvent and halSynchronizeEvent report whether
 *   the captured work has finished, not whether it failed. Calls that wait internally
 *   (halMalloc, halMemcpy, halMemset, halModuleUnload, copies between devices) leave the
 *   failure to the calls above and succeed or fail on their own account.
 * - It is not sticky: once reported, the stream, events recorded afterwards and the device work
 *   normally. halResetDevice reports the device's oldest unreported failure and clears the rest
 *   with the work they belong to; nothing carries over the reset.
 * - A backend whose vendor runtime loses the device on a fault (a CUDA context after an illegal
 *   address) reports the vendor's error from every later call on that device, as the vendor
 *   does, until halResetDevice.
 * - On AMD GPUs (the hip backend) a kernel that faults on the device ends the process: the HIP
 *   runtime aborts it, and no failure comes back.
 *
 * Plain C99; usable from C, C++ and any language with a C FFI.
 */
#ifndef POLYHAL_HAL_H_
#define POLYHAL_HAL_H_

#include <stddef.h>
#include <stdint.h>

/* The functions libpolyhal.so exports (polyhal is built for Linux with GCC or Clang, where the
 * same attribute serves the library and its users; other compilers only read the header). */
#if defined(__GNUC__)
#define HAL_API __attribute__((visibility("default")))
#else
#define HAL_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define HAL_VERSION_MAJOR 0
#define HAL_VERSION_MINOR 1
#define HAL_VERSION_PATCH 0

/* ---------------------------------------------------------------------------------------------
 * Errors
 * ------------------------------------------------------------------------------------------- */

/* Result of every polyhal call. Values are pinned: they never change between versions. */
typedef enum halError {
    HAL_SUCCESS = 0,
    HAL_ERROR_INVALID_VALUE = 1,        /* an argument is out of range or inconsistent */
    HAL_ERROR_INVALID_HANDLE = 2,       /* NULL, destroyed or foreign handle */
    HAL_ERROR_OUT_OF_MEMORY = 3,        /* device or host allocation failed */
    HAL_ERROR_NOT_READY = 4,            /* queried work has not completed yet (not a failure) */
    HAL_ERROR_NOT_SUPPORTED = 5,        /* the backend lacks this optional capability */
    HAL_ERROR_NO_DEVICE = 6,            /* the backend loaded but found no usable device */
    HAL_ERROR_BACKEND_NOT_FOUND = 7,    /* the named backend could not be found or loaded */
    HAL_ERROR_BACKEND_INCOMPATIBLE = 8, /* the plugin speaks another plugin ABI version */
    HAL_ERROR_LAUNCH_FAILED = 9,        /* a kernel or host function failed while running */
    HAL_ERROR_BACKEND = 10, /* a vendor runtime error; its name and text are in the message */
    HAL_ERROR_INVALID_DEVICE = 11, /* device ordinal out of range */
    HAL_ERROR_INVALID_IMAGE = 12,  /* a module image the backend cannot load */
    HAL_ERROR_NOT_FOUND = 13,      /* a named symbol (kernel function) does not exist */
    HAL_ERROR_NOT_PERMITTED = 14,  /* the call is not allowed where it was made (inside a
                                      host function; see halLaunchHostFunc) */
    HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED = 15,     /* the call cannot be made while a stream is
                                                      captured; the capture is invalidated */
    HAL_ERROR_STREAM_CAPTURE_INVALIDATED = 16,     /* the capture was invalidated by an earlier
                                                      error; end it and capture again */
    HAL_ERROR_STREAM_CAPTURE_UNJOINED = 17,        /* a stream forked into the capture was not
                                                      joined back before halStreamEndCapture */
    HAL_ERROR_STREAM_CAPTURE_ISOLATION = 18,       /* the call would make a capture depend on work
                                                      outside it (or another capture) */
    HAL_ERROR_STREAM_CAPTURE_WRONG_THREAD = 19,    /* the capture was begun on another thread */
    HAL_ERROR_STREAM_CAPTURE_UNMATCHED = 20,       /* the stream is not the origin of a capture */
    HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 21, /* the range overlaps registered or pinned
                                                      host memory */
    HAL_ERROR_HOST_MEMORY_NOT_REGISTERED = 22,     /* the pointer does not start a range
                                                      registered with halHostRegister */
    HAL_ERROR_UNKNOWN = 999,                       /* an internal failure that fits no other code */
    HAL_ERROR_FORCE_UINT32 = 0x7fffffff
} halError;

/* Returns the enumerator's name ("HAL_ERROR_INVALID_VALUE"), or "HAL_ERROR_UNRECOGNIZED" for a
 * value that is not a halError. Never NULL; the string is static. */
HAL_API const char* halGetErrorName(halError error);

/* Returns a one-line English description of the error. Never NULL; the string is static. */
HAL_API const char* halGetErrorString(halError error);

/* Returns the detail of the calling thread's most recent failed call: what was wrong, the backend
 * involved and, for vendor errors, the vendor's own error name and text. Successful calls do not
 * clear it (like errno). Returns "" when this thread has had no failure. The string belongs to
 * polyhal and stays valid until this thread's next polyhal call. */
HAL_API const char* halGetLastErrorMessage(void);

/* ---------------------------------------------------------------------------------------------
 * Setup and devices
 * ------------------------------------------------------------------------------------------- */

/* Initialises polyhal: selects and loads the backends (POLYHAL_BACKEND, POLYHAL_PLUGIN_PATH)
 * and opens their devices. Optional: any call initialises lazily. Calling it again returns the
 * result of the first initialisation.
 * Errors: HAL_ERROR_BACKEND_NOT_FOUND (named backend missing, not a library, no entry symbol,
 * undefined symbol, or unknown name), HAL_ERROR_BACKEND_INCOMPATIBLE (plugin ABI mismatch, a
 * device count that is negative, above 1024 or changing, more than eight backends),
 * HAL_ERROR_NO_DEVICE (a named backend has no device), HAL_ERROR_INVALID_VALUE (malformed
 * environment variable, one plugin named twice however its path is spelled). The message lists
 * every path tried and why it failed; after a success it is "". */
HAL_API halError halInit(void);

/* Version of this libpolyhal. Each pointer may be NULL to skip that part. Never fails. */
HAL_API halError halGetVersion(int* major, int* minor, int* patch);

/* Name of the backend of the current device ("cpu", "cuda", ...). The string is static.
 * Errors: HAL_ERROR_INVALID_VALUE (name is NULL), initialisation errors. */
HAL_API halError halGetBackendName(const char** name);

/* Number of devices over all loaded backends, numbered in POLYHAL_BACKEND's order.
 * Errors: HAL_ERROR_INVALID_VALUE (count is NULL), initialisation errors. */
HAL_API halError halGetDeviceCount(int* count);

/* Makes `device` the calling thread's current device (per thread; default 0).
 * Errors: HAL_ERROR_INVALID_DEVICE (out of range). */
HAL_API halError halSetDevice(int device);

/* The calling thread's current device. Errors: HAL_ERROR_INVALID_VALUE (device is NULL). */
HAL_API halError halGetDevice(int* device);

/* Waits for all work on `device`, then destroys every graph, stream, event and module created
 * on it, frees its memory (graph-owned memory, managed memory and the halMallocHost memory made
 * while it was current included), ends its host registrations and withdraws the peer access it
 * was granted (halDeviceEnablePeerAccess); the handles become invalid (HAL_ERROR_INVALID_HANDLE)
 * and the pointers dangle. Last, the backend resets the vendor's own state of the device, as
 * cudaDeviceReset does: a CUDA context that a kernel fault left unusable works again. A Level
 * Zero device lost to a GPU hang is the exception: its driver keeps it lost until the process
 * exits, and halResetDevice then ends with HAL_ERROR_LAUNCH_FAILED, saying so.
 * The device stays usable: new objects may be created afterwards. No other thread may use the
 * device meanwhile. Refused while a stream of the device is being captured: end the capture
 * first.
 * Errors: HAL_ERROR_INVALID_DEVICE; HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED (a stream of the device
 * is being captured; the capture is invalidated); the device's oldest unreported asynchronous
 * failure (the others are cleared, see "Asynchronous failures"; on a backend that keeps a fault,
 * the reset's wait meets the kept fault once more and reports it, and the device is reset all
 * the same). */
HAL_API halError halResetDevice(int device);

/* Capability bits of halDeviceProperties.capabilities. */
typedef enum halDeviceCapability {
    HAL_DEVICE_CAP_TIMING_EVENTS = 1u << 0,     /* halEventElapsedTime works */
    HAL_DEVICE_CAP_HOST_FUNCTIONS = 1u << 1,    /* halLaunchHostFunc works */
    HAL_DEVICE_CAP_KERNELS = 1u << 2,           /* modules and halLaunchKernel work */
    HAL_DEVICE_CAP_STREAM_PRIORITIES = 1u << 3, /* priorities influence scheduling */
    HAL_DEVICE_CAP_HOST_ACCESSIBLE = 1u << 4,   /* the host may dereference device memory */
    HAL_DEVICE_CAP_NATIVE_HANDLES = 1u << 5,    /* halStreamGetNativeHandle works */
    HAL_DEVICE_CAP_PEER_COPY = 1u << 6,         /* copies to other devices of its backend need
                                                   no host staging and do not block the host */
    HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS = 1u << 7, /* host functions of different streams
                                                   run at the same time; without it they may run
                                                   one at a time on one host thread, as in CUDA */
    HAL_DEVICE_CAP_IPC_MEMORY = 1u << 8,      /* halIpcGetMemHandle and halIpcOpenMemHandle
                                                 work (memory shared between processes) */
    HAL_DEVICE_CAP_IPC_EVENTS = 1u << 9,      /* HAL_EVENT_INTERPROCESS events work */
    HAL_DEVICE_CAP_HOST_REGISTER = 1u << 10,  /* halHostRegister pins existing host memory */
    HAL_DEVICE_CAP_MANAGED_MEMORY = 1u << 11, /* halMallocManaged works */
    HAL_DEVICE_CAP_FORCE_UINT32 = 0x7fffffff
} halDeviceCapability;

/* Description of a device. Set `size` to sizeof(halDeviceProperties) before the call; polyhal
 * fills the members that fit in `size`, so older callers keep working when members are added. */
typedef struct halDeviceProperties {
    size_t size;
    char name[256];                   /* vendor's device name, NUL-terminated */
    char backend[32];                 /* backend name, e.g. "cpu" */
    int ordinal;                      /* polyhal's device number (over all backends) */
    int backendOrdinal;               /* the device's number within its backend */
    uint64_t totalMemory;             /* bytes of device memory */
    uint32_t computeUnits;            /* SMs, CUs, EUs, or CPU threads */
    uint32_t maxThreadsPerBlock;      /* largest block.x * block.y * block.z */
    uint64_t maxSharedMemoryPerBlock; /* largest dynamicSharedBytes of a launch */
    uint64_t capabilities;            /* halDeviceCapability bits */
    uint64_t maxKernelArgumentBytes;  /* largest sum of the argument sizes of one launch (CUDA's
                                         4 KiB or 32 KiB kernel parameter limit) */
    int32_t dlpackDeviceType;  /* DLPack's DLDeviceType of the device's memory (kDLCUDA 2 ...;
                                  kDLCPU 1 where HAL_DEVICE_CAP_HOST_ACCESSIBLE), 0 if none */
    char moduleImageKinds[64]; /* the images halModuleLoadData accepts, as file extensions,
                                  comma-separated, most preferred first ("ptx,cubin,fatbin");
                                  "" without HAL_DEVICE_CAP_KERNELS */
} halDeviceProperties;

/* Fills `props` for `device`.
 * Errors: HAL_ERROR_INVALID_VALUE (props NULL, or props->size smaller than the `size` member
 * plus name), HAL_ERROR_INVALID_DEVICE. */
HAL_API halError halGetDeviceProperties(int device, halDeviceProperties* props);

/* Free and total bytes of the current device's memory, as aclrtGetMemInfo and cudaMemGetInfo:
 * as the backend reports them where it can (memory other processes use counts), else the
 * device's total memory less what polyhal's pool holds on it. The pool's own view (in use,
 * cached) is in halMemPoolGetStats.
 * Errors: HAL_ERROR_INVALID_VALUE (freeBytes or totalBytes NULL), backend errors. */
HAL_API halError halGetMemInfo(size_t* freeBytes, size_t* totalBytes);

/* Peer access, as aclrtDeviceCanAccessPeer / aclrtDeviceEnablePeerAccess and CUDA's: whether
 * kernels of one device may use memory of another directly. Copies between devices of one
 * backend never need it (halMemcpyAsync picks the path itself).
 *
 * Sets *canAccessPeer to 1 if kernels of `device` can be given access to memory of
 * `peerDevice`, else 0: always 0 for a device and itself and for devices of different backends;
 * 1 between devices whose memory is host-accessible (HAL_DEVICE_CAP_HOST_ACCESSIBLE); otherwise
 * as the backend says. Errors: HAL_ERROR_INVALID_VALUE (canAccessPeer NULL),
 * HAL_ERROR_INVALID_DEVICE (either ordinal). */
HAL_API halError halDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice);

/* Lets kernels of the current device access memory of `peerDevice` (one direction). Enabling a
 * pair that is already enabled succeeds and changes nothing (CUDA reports it as an error).
 * Errors: HAL_ERROR_INVALID_VALUE (flags not 0), HAL_ERROR_INVALID_DEVICE (peerDevice out of
 * range, or the current device itself), HAL_ERROR_NOT_SUPPORTED (halDeviceCanAccessPeer gives
 * 0 for the pair; the message says why), backend errors. */
HAL_API halError halDeviceEnablePeerAccess(int peerDevice, uint32_t flags);

/* Withdraws what halDeviceEnablePeerAccess granted the current device.
 * Errors: HAL_ERROR_INVALID_VALUE (access to peerDevice is not enabled),
 * HAL_ERROR_INVALID_DEVICE, backend errors. */
HAL_API halError halDeviceDisablePeerAccess(int peerDevice);

/* Blocks until every stream of the calling thread's current device has finished its work.
 * Errors: the oldest unreported asynchronous failure of the device's work (one per call);
 * HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED (a stream of the device is being captured). */
HAL_API halError halSynchronizeDevice(void);

/* ---------------------------------------------------------------------------------------------
 * Streams: in-order queues of work; different streams run concurrently unless ordered by events.
 * GPUs run streams on a few hardware queues (CUDA: CUDA_DEVICE_MAX_CONNECTIONS, 8 by default;
 * ROCm: GPU_MAX_HW_QUEUES, 4 per priority): with more live streams than queues, streams share
 * one, and a stream waiting (in a host function, for an event) also holds the work submitted
 * after that wait to the other streams of its queue.
 * ------------------------------------------------------------------------------------------- */

typedef struct halStream_t* halStream;
typedef struct halEvent_t* halEvent;
typedef struct halModule_t* halModule;
typedef struct halFunction_t* halFunction;

/* Stream creation flags. */
#define HAL_STREAM_DEFAULT 0u
/* The stream never waits for, nor holds, a legacy default stream (cudaStreamNonBlocking). With
 * the default stream ordinary (the default), it behaves as any other stream. */
#define HAL_STREAM_NON_BLOCKING 1u

/* What the default stream (NULL) is, for the whole process (halSetDefaultStreamMode). */
typedef enum halDefaultStreamMode {
    /* An ordinary in-order stream: it orders only its own work (the default; CUDA's
     * per-thread default stream and AscendCL's default stream behave alike). */
    HAL_DEFAULT_STREAM_ORDINARY = 0,
    /* CUDA's legacy default stream: work submitted to a device's default stream waits for the
     * work submitted before it to every blocking stream of that device (those created without
     * HAL_STREAM_NON_BLOCKING), and work submitted to a blocking stream waits for the work
     * submitted before it to the default stream. Each such implicit wait costs an event record
     * and a stream wait. Work submitted to the default stream while a blocking stream of its
     * device is being captured is refused with HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED and
     * invalidates that capture (it would join work outside the capture, as CUDA's
     * cudaErrorStreamCaptureImplicit); captured work does not wait for the default stream. */
    HAL_DEFAULT_STREAM_LEGACY = 1,
    HAL_DEFAULT_STREAM_MODE_FORCE_UINT32 = 0x7fffffff
} halDefaultStreamMode;

/* Chooses what the default stream is for the whole process, as POLYHAL_DEFAULT_STREAM does
 * (`ordinary` or `legacy`, read when polyhal initialises; this call overrides it). It applies to
 * work submitted after the call: switching to HAL_DEFAULT_STREAM_LEGACY makes the next work of
 * each side wait for everything the other side was given before. Call it before the streams are
 * used from other threads.
 * Errors: HAL_ERROR_INVALID_VALUE (mode not in halDefaultStreamMode), initialisation errors. */
HAL_API halError halSetDefaultStreamMode(halDefaultStreamMode mode);

/* The process's default stream mode. Allowed inside host functions.
 * Errors: HAL_ERROR_INVALID_VALUE (mode NULL), initialisation errors. */
HAL_API halError halGetDefaultStreamMode(halDefaultStreamMode* mode);

/* Creates a stream on the current device with the default priority (0).
 * Errors: HAL_ERROR_INVALID_VALUE (stream NULL), HAL_ERROR_OUT_OF_MEMORY, backend errors. */
HAL_API halError halCreateStream(halStream* stream);

/* Creates a stream with a priority: lower numbers are higher priority, as in CUDA. A priority
 * outside halGetStreamPriorityRange is clamped to the range. `flags`: HAL_STREAM_DEFAULT or
 * HAL_STREAM_NON_BLOCKING.
 * Errors: HAL_ERROR_INVALID_VALUE (stream NULL, unknown flag bits), HAL_ERROR_OUT_OF_MEMORY. */
HAL_API halError halCreateStreamWithConfig(halStream* stream, int priority, uint32_t flags);

/* Destroys a stream. Work already submitted still runs to completion; the call does not wait
 * for it. The default stream (NULL) cannot be destroyed. A stream capturing work ends its
 * capture, which makes no graph; a stream forked into another stream's capture leaves it intact
 * once its captured work was joined back into the capturing stream (as CUDA's graphMemoryNodes
 * sample does before it ends the capture).
 * Errors: HAL_ERROR_INVALID_HANDLE (NULL, destroyed or foreign),
 * HAL_ERROR_STREAM_CAPTURE_UNJOINED (a forked stream whose captured work was not joined back:
 * neither the stream nor the capture changes). */
HAL_API halError halDestroyStream(halStream stream);

/* Blocks until all work submitted to `stream` has finished.
 * Errors: HAL_ERROR_INVALID_HANDLE; an asynchronous failure of that work (e.g.
 * HAL_ERROR_LAUNCH_FAILED), reported once, with the message of the failing operation;
 * HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED (`stream` is being captured, or a capture's mode forbids
 * the call: see Graphs and halCaptureMode). */
HAL_API halError halSynchronizeStream(halStream stream);

/* HAL_SUCCESS when all work submitted to `stream` has finished, HAL_ERROR_NOT_READY otherwise.
 * Errors: HAL_ERROR_INVALID_HANDLE; asynchronous failures and capture as halSynchronizeStream. */
HAL_API halError halQueryStream(halStream stream);

/* Makes all work submitted to `stream` after this call wait until the work captured by `event`
 * has finished. Does not block the host. A never-recorded event imposes no wait. An event
 * recorded in a stream capture makes `stream` join that capture (see Graphs).
 * Errors: HAL_ERROR_INVALID_HANDLE (either handle), HAL_ERROR_STREAM_CAPTURE_ISOLATION (a
 * capturing `stream` and an event recorded outside its capture). */
HAL_API halError halStreamWaitEvent(halStream stream, halEvent event);

/* Range of stream priorities of the current device: `least` is the lowest priority (largest
 * number), `greatest` the highest (smallest number). A device without priorities gives 0, 0.
 * Either pointer may be NULL. */
HAL_API halError halGetStreamPriorityRange(int* least, int* greatest);

/* The vendor's handle behind `stream` (CUstream, hipStream_t, cl_command_queue,
 * ze_command_list_handle_t; the CPU backend returns its internal queue).
 * Errors: HAL_ERROR_INVALID_VALUE (native NULL), HAL_ERROR_INVALID_HANDLE,
 * HAL_ERROR_NOT_SUPPORTED (backend without HAL_DEVICE_CAP_NATIVE_HANDLES). */
HAL_API halError halStreamGetNativeHandle(halStream stream, void** native);

/* ---------------------------------------------------------------------------------------------
 * Events: a point in a stream.
 * ------------------------------------------------------------------------------------------- */

#define HAL_EVENT_DEFAULT 0u
#define HAL_EVENT_DISABLE_TIMING 1u /* no timestamp: cheaper; halEventElapsedTime refuses it */
#define HAL_EVENT_BLOCKING_SYNC 2u  /* halSynchronizeEvent sleeps instead of spinning */
#define HAL_EVENT_INTERPROCESS                                       \
    4u /* may be shared with other processes (halIpcGetEventHandle); \
          needs HAL_EVENT_DISABLE_TIMING, as in CUDA */

/* Creates an event on the current device with timing enabled.
 * Errors: HAL_ERROR_INVALID_VALUE (event NULL), HAL_ERROR_OUT_OF_MEMORY. */
HAL_API halError halCreateEvent(halEvent* event);

/* Creates an event with HAL_EVENT_* flags.
 * Errors: HAL_ERROR_INVALID_VALUE (event NULL, unknown flag bits, HAL_EVENT_INTERPROCESS
 * without HAL_EVENT_DISABLE_TIMING), HAL_ERROR_NOT_SUPPORTED (HAL_EVENT_INTERPROCESS on a
 * device without HAL_DEVICE_CAP_IPC_EVENTS). */
HAL_API halError halCreateEventWithFlag(halEvent* event, uint32_t flags);

/* Captures all work submitted to `stream` so far; recording again moves the event to the new
 * point. Waits already enqueued keep the point they saw.
 * Errors: HAL_ERROR_INVALID_HANDLE, HAL_ERROR_INVALID_VALUE (event and stream on different
 * devices). */
HAL_API halError halRecordEvent(halEvent event, halStream stream);

/* HAL_SUCCESS when the captured work has finished, failed or not (or the event was never
 * recorded), HAL_ERROR_NOT_READY otherwise. A failure of that work is the stream's to report.
 * Errors: HAL_ERROR_INVALID_HANDLE, HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED (the event was recorded
 * in a stream capture still under way, or a capture's mode forbids the call: halCaptureMode). */
HAL_API halError halQueryEvent(halEvent event);

/* Blocks until the captured work has finished; returns at once for a never-recorded event.
 * Errors: as halQueryEvent. */
HAL_API halError halSynchronizeEvent(halEvent event);

/* Milliseconds between two recorded, completed events, measured on the device's monotonic
 * clock. Errors: HAL_ERROR_INVALID_VALUE (ms NULL, an event created with
 * HAL_EVENT_DISABLE_TIMING or never recorded, events of different devices), HAL_ERROR_NOT_READY
 * (either not completed), HAL_ERROR_INVALID_HANDLE, HAL_ERROR_NOT_SUPPORTED,
 * HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED (either was recorded in a stream capture still under
 * way). */
HAL_API halError halEventElapsedTime(float* ms, halEvent start, halEvent end);

/* Destroys an event. A recorded event may be destroyed before it completes; waits already
 * enqueued on it still hold. Errors: HAL_ERROR_INVALID_HANDLE. */
HAL_API halError halDestroyEvent(halEvent event);

/* ---------------------------------------------------------------------------------------------
 * Host work in stream order
 * ------------------------------------------------------------------------------------------- */

typedef void (*halHostFn)(void* userData);

/* Runs fn(userData) on a host thread after all earlier work of `stream`; later work of the
 * stream starts after fn returns. Without HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS the host
 * functions of all streams may run one at a time on a single thread, so fn must not wait for
 * another stream's host function or for work queued behind one.
 *
 * Inside fn, as in CUDA, polyhal may not be called into the device: only halGetErrorName,
 * halGetErrorString, halGetLastErrorMessage, halGetVersion, halInit, halGetBackendName,
 * halGetDeviceCount, halGetDevice, halSetDevice, halGetDeviceProperties,
 * halGetStreamPriorityRange, halGetDefaultStreamMode, halMemPoolGetStats, halMemPoolGetAttribute,
 * halTraceRangePush, halTraceRangePop, halCheckGetEnabled, halCheckGetFindingCount and
 * halCheckSetCallSite are allowed. Every other function returns HAL_ERROR_NOT_PERMITTED and does
 * nothing, halFree and halFreeAsync included (they record the pool's events): to release memory
 * once fn has run, call halFreeAsync(ptr, stream) after halLaunchHostFunc instead.
 * Errors: HAL_ERROR_INVALID_VALUE (fn NULL), HAL_ERROR_INVALID_HANDLE, HAL_ERROR_NOT_SUPPORTED,
 * HAL_ERROR_NOT_PERMITTED (called from inside a host function). */
HAL_API halError halLaunchHostFunc(halStream stream, halHostFn fn, void* userData);

/* ---------------------------------------------------------------------------------------------
 * Graphs: work captured from streams once, launched many times
 *
 * halStreamBeginCapture puts a stream in capture: the work submitted to it afterwards is
 * recorded, not run, until halStreamEndCapture turns it into a graph (as cudaStreamBeginCapture
 * and AscendCL's aclmdlRICaptureBegin). Captured: copies (halMemcpyAsync, halMemcpy2DAsync,
 * halMemcpy3DAsync between memory of the stream's device and host memory), memsets, kernel
 * launches (the arguments' values are copied when captured), host functions, event records and
 * waits, and halMallocAsync / halFreeAsync (graph-owned memory, below). Other work on a
 * capturing stream returns HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED.
 *
 * Fork and join: an event recorded on a capturing stream marks a point in the capture; a stream
 * that waits on it joins the capture (fork), and the origin stream must wait on an event
 * recorded on every joined stream after its last captured work (join) before the capture ends,
 * or halStreamEndCapture returns HAL_ERROR_STREAM_CAPTURE_UNJOINED. Waiting on an event that is
 * not part of the capture returns HAL_ERROR_STREAM_CAPTURE_ISOLATION. Events recorded inside a
 * capture order the capture only: they are not recorded by a launch. Once the capture has ended,
 * such an event is as its last record outside a capture left it (or never recorded): waiting on
 * it, querying or synchronising it does not follow a launch of the graph. To wait for a launch,
 * record an event on the launch's stream after halGraphLaunch.
 *
 * Calls that cannot be captured fail with HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate
 * the capture: synchronising or querying a capturing stream, querying or synchronising an event
 * recorded inside a capture, halEventElapsedTime with such an event, halSynchronizeDevice and
 * halResetDevice while a stream of the device is captured, and the calls a capture's mode
 * forbids. Every later capture call on the capture's streams returns
 * HAL_ERROR_STREAM_CAPTURE_INVALIDATED; halStreamEndCapture ends it and returns that error.
 *
 * Launches: a graph runs on any stream of its device, any number of times, as one operation of
 * that stream: later work waits for all of it. Launches of one graph run one after another, in
 * the order of the halGraphLaunch calls, also on different streams (as cudaGraphLaunch). The
 * pool sees a launch's uses like any other work's.
 *
 * Graph-owned memory: halMallocAsync on a capturing stream takes a block from the pool at once
 * and gives it to the graph; it waits on the host for the work the stream had before the capture
 * began (as halMalloc would), since a launch on another stream may use the block. The same
 * address is used by every launch, and the pool keeps the block reserved (counted in use) until
 * halGraphDestroy, which releases it once the last launch is over. Its contents are not kept
 * from one launch to the next. halFreeAsync of it inside the capture ends its use in the graph,
 * and a later halMallocAsync of the capture that follows the free (on the same stream, or on a
 * stream ordered after it by an event) may be given the same block, as CUDA reuses graph memory
 * within a graph: a graph that allocates and frees in a loop holds the most it has live at once,
 * not the sum of its allocations. Freeing it outside the capture (halFree, halFreeAsync) returns
 * HAL_ERROR_INVALID_VALUE. Since
 * launches of one graph never overlap, repeated and concurrent launches stay correct. Freeing,
 * inside a capture, memory allocated outside it returns HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED. A
 * capture that ends without a graph (invalidated, unjoined, or its origin stream destroyed) returns
 * the memory it allocated to the pool at once: those pointers are then no longer the application's.
 *
 * Usage:
 *     halStreamBeginCapture(s, HAL_CAPTURE_MODE_GLOBAL);
 *     halMemsetAsync(a, n, 0, n, s); halLaunchKernel(f, grid, block, 0, args, 2, s);
 *     halStreamEndCapture(s, &graph);
 *     for (...) halGraphLaunch(graph, s);
 *     halGraphDestroy(graph);
 * ------------------------------------------------------------------------------------------- */

typedef struct halGraph_t* halGraph;

/* Which calls, made while a capture is under way, are refused as unsafe (CUDA's capture modes).
 * The unsafe calls are those that may wait for the device behind the capture's back, or ask
 * whether its work is done, on any object (not only those of the capture): halMalloc, halFree,
 * halMallocHost, halFreeHost, halMemcpy, halMemcpy2D, halMemcpy3D, halMemset, halModuleUnload,
 * halSynchronizeDevice, halResetDevice, halSynchronizeStream, halQueryStream,
 * halSynchronizeEvent, halQueryEvent and halIpcCloseMemHandle. They fail with
 * HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidate the captures that forbade them. */
typedef enum halCaptureMode {
    /* Refused on the capturing thread, and on every thread while a GLOBAL capture is under way. */
    HAL_CAPTURE_MODE_GLOBAL = 0,
    /* Refused on the capturing thread only. */
    HAL_CAPTURE_MODE_THREAD_LOCAL = 1,
    /* Not refused (the application takes care). */
    HAL_CAPTURE_MODE_RELAXED = 2,
    HAL_CAPTURE_MODE_FORCE_UINT32 = 0x7fffffff
} halCaptureMode;

typedef enum halCaptureStatus {
    HAL_CAPTURE_STATUS_NONE = 0,        /* the stream is not being captured */
    HAL_CAPTURE_STATUS_ACTIVE = 1,      /* work submitted to the stream is being captured */
    HAL_CAPTURE_STATUS_INVALIDATED = 2, /* captured, but invalidated: end it and start again */
    HAL_CAPTURE_STATUS_FORCE_UINT32 = 0x7fffffff
} halCaptureStatus;

/* Starts capturing `stream`. The default stream (NULL) cannot be captured. Thread-safety: a
 * GLOBAL or THREAD_LOCAL capture must be ended on the thread that began it.
 * Errors: HAL_ERROR_INVALID_HANDLE, HAL_ERROR_INVALID_VALUE (unknown mode, stream already in a
 * capture), HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED (the default stream). */
HAL_API halError halStreamBeginCapture(halStream stream, halCaptureMode mode);

/* Ends the capture begun on `stream` and returns its work as a new graph in *graph. The streams
 * that joined the capture leave it. An invalidated capture ends with no graph.
 * Errors: HAL_ERROR_INVALID_VALUE (graph NULL), HAL_ERROR_INVALID_HANDLE,
 * HAL_ERROR_STREAM_CAPTURE_UNMATCHED (`stream` did not begin a capture: not capturing, or a
 * stream that joined one), HAL_ERROR_STREAM_CAPTURE_WRONG_THREAD (a GLOBAL or THREAD_LOCAL
 * capture begun on another thread; it goes on), HAL_ERROR_STREAM_CAPTURE_UNJOINED (a joined
 * stream was not joined back; the capture is ended), HAL_ERROR_STREAM_CAPTURE_INVALIDATED,
 * HAL_ERROR_OUT_OF_MEMORY. */
HAL_API halError halStreamEndCapture(halStream stream, halGraph* graph);

/* Whether `stream` is being captured. Never invalidates a capture.
 * Errors: HAL_ERROR_INVALID_VALUE (status NULL), HAL_ERROR_INVALID_HANDLE. */
HAL_API halError halStreamGetCaptureInfo(halStream stream, halCaptureStatus* status);

/* Enqueues all of `graph`'s work on `stream`, after the work submitted to it before and after
 * the graph's previous launch. A launch may be captured into another capture, except a launch of
 * a graph that owns memory (as CUDA refuses child graphs with memory nodes): its launches could
 * then overlap, writing its memory at once.
 * Errors: HAL_ERROR_INVALID_HANDLE (either handle, or a kernel, of the graph or of a graph it
 * launches, whose module was unloaded), HAL_ERROR_INVALID_VALUE (a stream of another device),
 * HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED (`stream` is being captured and `graph` owns memory; the
 * capture is invalidated), backend errors. */
HAL_API halError halGraphLaunch(halGraph graph, halStream stream);

/* Destroys a graph. Launches already enqueued still run to completion; the call does not wait.
 * Its graph-owned memory returns to the pool once they are over. It must not be made while
 * another thread launches the same graph (as cudaGraphDestroy): the application orders the two.
 * Errors: HAL_ERROR_INVALID_HANDLE. */
HAL_API halError halGraphDestroy(halGraph graph);

/* ---------------------------------------------------------------------------------------------
 * Memory
 * ------------------------------------------------------------------------------------------- */

typedef enum halMemcpyKind {
    HAL_MEMCPY_HOST_TO_HOST = 0,
    HAL_MEMCPY_HOST_TO_DEVICE = 1,
    HAL_MEMCPY_DEVICE_TO_HOST = 2,
    HAL_MEMCPY_DEVICE_TO_DEVICE = 3,
    HAL_MEMCPY_DEFAULT = 4, /* inferred from where each pointer was allocated */
    HAL_MEMCPY_FORCE_UINT32 = 0x7fffffff
} halMemcpyKind;

/* Allocates `size` bytes of device memory on the current device from its stream-aware pool,
 * aligned to 256 bytes, usable at once by every stream of that device. The block comes from the
 * pool in the order of the device's default stream; if that stream still has work queued,
 * halMalloc waits for it, so no earlier work can still touch the memory.
 * Errors: HAL_ERROR_INVALID_VALUE (ptr NULL or size 0), HAL_ERROR_OUT_OF_MEMORY (after the pool
 * reclaimed what it could; the message gives requested, in use, reserved, pending and largest
 * free bytes). */
HAL_API halError halMalloc(void** ptr, size_t size);

/* Returns memory from halMalloc or halMallocAsync to its device's pool in the order of that
 * device's default stream, without waiting: work already submitted that uses the memory still
 * runs safely. The default stream's later work may reuse the block at once; another stream only
 * once every use polyhal saw (copy and memset operands, pointer kernel arguments,
 * halRecordStream) is ordered before it by events or observed finished. The host must not touch
 * the memory after the call. halFree(NULL) does nothing.
 * Managed memory (halMallocManaged) is freed too: halFree first waits for all work of its device
 * (as cudaFree does), then frees it.
 * Errors: HAL_ERROR_INVALID_VALUE (not the start of a live pool allocation: never allocated,
 * freed already, an interior pointer, or pinned host memory), HAL_ERROR_NOT_PERMITTED (inside a
 * host function; see halLaunchHostFunc). */
HAL_API halError halFree(void* ptr);

/* Allocates page-locked host memory suited to fast transfers with the current device.
 * Errors: HAL_ERROR_INVALID_VALUE (ptr NULL or size 0), HAL_ERROR_OUT_OF_MEMORY. */
HAL_API halError halMallocHost(void** ptr, size_t size);

/* Frees memory from halMallocHost. Errors: HAL_ERROR_INVALID_VALUE (not from halMallocHost). */
HAL_API halError halFreeHost(void* ptr);

/* Page-locks `size` bytes of existing host memory from `ptr` for the current device's backend, as
 * cudaHostRegister and hipHostRegister: copies from and to it then count as pinned (asynchronous,
 * as from halMallocHost memory, and HAL_MEMCPY_DEFAULT takes it for host memory). The memory
 * stays the caller's: it must stay allocated until halHostUnregister, and must not be freed
 * with halFreeHost. `flags` is reserved and must be 0. Backends (docs/backends.md): CUDA and
 * HIP page-lock the range for all their devices (cuMemHostRegister, hipHostRegister, portable);
 * the CPU backend only records it (its devices reach all host memory alike); Level Zero and
 * OpenCL have no HAL_DEVICE_CAP_HOST_REGISTER and refuse (Level Zero's core API has no import of
 * existing host memory, OpenCL none at all).
 * Errors: HAL_ERROR_INVALID_VALUE (ptr NULL, size 0, the range wrapping the address space or
 * starting or ending in device or managed memory polyhal allocated, flags not 0; the core checks
 * the range's two ends there, the vendor the rest), HAL_ERROR_HOST_MEMORY_ALREADY_REGISTERED
 * (any byte of the range is registered already, through polyhal or the vendor's own API, or is
 * halMallocHost memory; the message names the range), HAL_ERROR_NOT_SUPPORTED (no
 * HAL_DEVICE_CAP_HOST_REGISTER), backend errors. */
HAL_API halError halHostRegister(void* ptr, size_t size, unsigned int flags);

/* Ends a registration: `ptr` must be the pointer halHostRegister was given. Copies already
 * enqueued from or to the range must have completed (synchronise first), as with CUDA.
 * Errors: HAL_ERROR_HOST_MEMORY_NOT_REGISTERED (ptr is not the start of a registered range: never
 * registered, unregistered already, or an interior pointer), backend errors. */
HAL_API halError halHostUnregister(void* ptr);

/* Allocates `size` bytes of managed memory on the current device, as cudaMallocManaged: one
 * pointer that the device's kernels, copies and memsets and the host may all use. Aligned to
 * 256 bytes. `flags` is reserved and must be 0 (as cudaMemAttachGlobal: every stream may use
 * it). halFree frees it, after waiting for the device's work (as cudaFree does).
 * Host access rules, those of CUDA on devices without concurrentManagedAccess, which hold on
 * every backend: the host may read or write managed memory only while no work that uses it is
 * pending on any stream of its device, that is after halSynchronizeDevice, or after
 * synchronising (a stream, an event) every stream that used it since the last such point. A
 * host access while a kernel may run is undefined (a fault on CUDA and HIP, stale or torn data
 * elsewhere). Checked mode (POLYHAL_CHECK) sees the device's uses of managed memory, but not the
 * host's loads and stores: it cannot report a host access that breaks these rules.
 * Backends: cuMemAllocManaged and hipMallocManaged (CU_MEM_ATTACH_GLOBAL), on devices whose
 * driver reports managed memory; zeMemAllocShared on Level Zero devices with read-write
 * single-device shared allocations; a fine-grain SVM buffer on OpenCL devices that have them;
 * device memory on the CPU backend (host memory there, counted against the device's capacity).
 * Errors: HAL_ERROR_INVALID_VALUE (ptr NULL, size 0, flags not 0), HAL_ERROR_NOT_SUPPORTED (no
 * HAL_DEVICE_CAP_MANAGED_MEMORY), HAL_ERROR_OUT_OF_MEMORY. */
HAL_API halError halMallocManaged(void** ptr, size_t size, unsigned int flags);

/* Copies `count` bytes from `src` to `dst` and returns when the copy is complete. The copy runs
 * on the default stream of the device that owns the device operand (the destination's, when both
 * are devices; the current device for host-to-host), after the work already submitted to it and,
 * for a copy between two devices, to the source device's default stream.
 * Between two devices of one backend with HAL_DEVICE_CAP_PEER_COPY the backend's peer path
 * copies directly; between devices of different backends the bytes travel through host memory.
 * Errors: HAL_ERROR_INVALID_VALUE (NULL pointer with count > 0, count > dstMax, count beyond the
 * end of a known allocation, source and destination bytes overlapping, kind invalid or
 * contradicting where a pointer lives). */
HAL_API halError halMemcpy(void* dst, size_t dstMax, const void* src, size_t count,
                           halMemcpyKind kind);

/* Enqueues the copy on `stream`; returns at once. Host memory involved must stay valid until the
 * copy has run. On GPU backends, as in CUDA, a copy to or from pageable host memory (not from
 * halMallocHost) may return only once it is done; use halMallocHost memory for transfers that
 * must overlap other work. A copy between two devices of one backend with
 * HAL_DEVICE_CAP_PEER_COPY, on a stream of either device, is enqueued like any other copy; the
 * other device's default stream then also waits for it, so that its pool cannot hand the operand
 * out again before the copy has run. Any other copy that involves a device not owning `stream`
 * (devices of different backends, no peer path, or a stream of a third device) first waits for
 * `stream`, then copies through host memory, and returns when done.
 * Errors: as halMemcpy, and HAL_ERROR_INVALID_HANDLE. */
HAL_API halError halMemcpyAsync(void* dst, size_t dstMax, const void* src, size_t count,
                                halMemcpyKind kind, halStream stream);

/* Copies a rectangle of `height` rows of `width` bytes, as aclrtMemcpy2d and cuMemcpy2D: row r
 * is read from src + r * spitch and written to dst + r * dpitch, and returns when the copy is
 * complete (on the default stream that halMemcpy would use). Nothing is copied when width or
 * height is 0. Errors: HAL_ERROR_INVALID_VALUE (dst or src NULL, width larger than dpitch or
 * spitch, the rows spanning more than the address space or past the end of a known
 * allocation, the bytes from the first row's start to the last row's end overlapping between
 * src and dst, kind invalid or contradicting where a pointer lives). */
HAL_API halError halMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,
                             size_t height, halMemcpyKind kind);

/* Enqueues halMemcpy2D's copy on `stream`; returns at once, with halMemcpyAsync's rules for
 * pageable host memory and for copies between devices. Errors: as halMemcpy2D, and
 * HAL_ERROR_INVALID_HANDLE. */
HAL_API halError halMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                  size_t width, size_t height, halMemcpyKind kind,
                                  halStream stream);

/* A pitched box to copy, as cudaMemcpy3DParms and cuMemcpy3D: `depth` slices of `height` rows
 * of `width` bytes. Byte (x, y, z) is read from src + z * srcSlicePitch + y * srcPitch + x and
 * written to the same place relative to dst. Set `size` to sizeof(halMemcpy3DParams); members
 * added later will take their zero value from callers that set an older size. */
typedef struct halMemcpy3DParams {
    size_t size;
    void* dst;
    size_t dstPitch;      /* bytes between the starts of two rows, >= width */
    size_t dstSlicePitch; /* bytes between the starts of two slices (ignored when depth is 1) */
    const void* src;
    size_t srcPitch;
    size_t srcSlicePitch;
    size_t width;  /* bytes per row */
    size_t height; /* rows per slice */
    size_t depth;  /* slices */
    halMemcpyKind kind;
} halMemcpy3DParams;

/* Copies the box `params` describes and returns when the copy is complete (on the default
 * stream that halMemcpy would use). Nothing is copied when width, height or depth is 0.
 * Errors: HAL_ERROR_INVALID_VALUE (params NULL or params->size smaller than
 * sizeof(halMemcpy3DParams), dst or src NULL, width larger than a pitch, a slice's rows larger
 * than a slice pitch, the box spanning more than the address space or past the end of a known
 * allocation, the bytes from the box's first byte to its last overlapping between src and dst,
 * kind invalid or contradicting where a pointer lives). */
HAL_API halError halMemcpy3D(const halMemcpy3DParams* params);

/* Enqueues halMemcpy3D's copy on `stream`; returns at once, with halMemcpyAsync's rules for
 * pageable host memory and for copies between devices. Errors: as halMemcpy3D, and
 * HAL_ERROR_INVALID_HANDLE. */
HAL_API halError halMemcpy3DAsync(const halMemcpy3DParams* params, halStream stream);

/* Sets `count` bytes at `dst` to (unsigned char)value and returns when done (default stream of
 * the device that owns dst, or of the current device for host memory). Host memory (pageable or
 * from halMallocHost) is set by the device only when it has HAL_DEVICE_CAP_HOST_ACCESSIBLE;
 * otherwise the host sets it once the work already submitted to that stream has finished.
 * Errors: HAL_ERROR_INVALID_VALUE (dst NULL with count > 0, count > dstMax). */
HAL_API halError halMemset(void* dst, size_t dstMax, int value, size_t count);

/* Enqueues the memset on `stream`; returns at once. Host memory the device cannot reach (no
 * HAL_DEVICE_CAP_HOST_ACCESSIBLE) is set by the host in stream order: in a host function where
 * the device has HAL_DEVICE_CAP_HOST_FUNCTIONS (the memory must stay valid until it has run),
 * otherwise after waiting for `stream`, before returning.
 * Errors: as halMemset, HAL_ERROR_INVALID_HANDLE, and HAL_ERROR_INVALID_VALUE (dst is memory of
 * another device than the stream's). */
HAL_API halError halMemsetAsync(void* dst, size_t dstMax, int value, size_t count,
                                halStream stream);

/* ---------------------------------------------------------------------------------------------
 * Stream-ordered allocation: the stream-aware pool
 *
 * Each device has one pool. A block freed on a stream is reused by later work of that stream at
 * once; by another stream only when polyhal can prove (events ordered the uses before it) or
 * observe (the host saw the uses finish) that every use is over. Uses are captured
 * automatically for copy and memset operands and for kernel arguments of pointer size whose
 * value points into a live block; halRecordStream declares the rest. Nothing is ever made to
 * wait on the device behind the application's back, with one exception: a copy between two
 * devices of one backend makes the other device's default stream wait for it (halMemcpyAsync),
 * since that device's pool cannot see the copying stream.
 *
 * Usage (memory made on s0, read by a long operation on s1, freed while s1 still reads it):
 *     halMallocAsync(&a, n, s0);  ...work on s0 writes a...
 *     halRecordEvent(e0, s0); halStreamWaitEvent(s1, e0);
 *     halMemcpyAsync(out, n, a, n, HAL_MEMCPY_DEVICE_TO_DEVICE, s1);   (a use on s1)
 *     halFreeAsync(a, s0);          s0 does not get a back until the copy is ordered or done
 * ------------------------------------------------------------------------------------------- */

/* Allocates `size` bytes from the pool of `stream`'s device for use by work submitted to
 * `stream` after this call (other streams must be ordered after it, e.g. by an event).
 * Errors: HAL_ERROR_INVALID_VALUE (ptr NULL, size 0), HAL_ERROR_INVALID_HANDLE,
 * HAL_ERROR_OUT_OF_MEMORY (as halMalloc). */
HAL_API halError halMallocAsync(void** ptr, size_t size, halStream stream);

/* Frees a pool block in the order of `stream`: `stream`'s later work may reuse it at once, other
 * streams once every captured use is ordered before them or observed finished.
 * Errors: HAL_ERROR_INVALID_VALUE (ptr NULL, not the start of a live pool block of the stream's
 * device, or freed already), HAL_ERROR_INVALID_HANDLE, HAL_ERROR_NOT_PERMITTED (inside a host
 * function). */
HAL_API halError halFreeAsync(void* ptr, halStream stream);

/* Declares that work submitted to `stream` so far uses the pool block containing `ptr`, for uses
 * polyhal cannot see (a pointer stored inside a struct passed to a kernel). Pointers outside the
 * pool are accepted and ignored. Errors: HAL_ERROR_INVALID_VALUE (ptr NULL),
 * HAL_ERROR_INVALID_HANDLE. */
HAL_API halError halRecordStream(void* ptr, halStream stream);

/* Statistics of a device's pool. Set `size` to sizeof(halMemPoolStats) before the call. Byte
 * counts are of blocks rounded to the pool's 512-byte granule. */
typedef struct halMemPoolStats {
    size_t size;
    uint64_t bytesInUse; /* handed out and not freed */
    uint64_t peakBytesInUse;
    uint64_t bytesReserved; /* obtained from the backend */
    uint64_t peakBytesReserved;
    uint64_t bytesCached;            /* reserved but not in use (pending included) */
    uint64_t bytesPending;           /* freed, still awaiting a use on another stream */
    uint64_t reusedSameStream;       /* allocations served by a block freed on the same stream */
    uint64_t reusedProvenOrder;      /* ... whose other-stream uses events ordered before */
    uint64_t reusedObservedComplete; /* ... whose other-stream uses the host saw finish */
    uint64_t newSegments;            /* ... from a segment newly obtained from the backend */
    uint64_t oomSynchronized;        /* ... only after synchronising and releasing on exhaustion */
    uint64_t backendAllocations;     /* segments obtained from the backend */
    uint64_t backendFrees;           /* segments returned to the backend */
} halMemPoolStats;

/* Fills `stats` for `device`'s pool (the members that fit in stats->size).
 * Errors: HAL_ERROR_INVALID_VALUE (stats NULL or stats->size too small for `size` and
 * bytesInUse), HAL_ERROR_INVALID_DEVICE. */
HAL_API halError halMemPoolGetStats(int device, halMemPoolStats* stats);

/* Returns cached segments whose every use has finished to the backend, keeping at least
 * `bytesToKeep` bytes reserved (as cudaMemPoolTrimTo); halMemPoolTrim(device, 0) releases every
 * such segment. Does not wait for the device.
 * Errors: HAL_ERROR_INVALID_DEVICE, backend errors. */
HAL_API halError halMemPoolTrim(int device, size_t bytesToKeep);

typedef enum halMemPoolAttribute {
    /* Reserved bytes above which cached segments go back to the backend whenever the host
     * synchronises (default UINT64_MAX: keep everything). */
    HAL_MEMPOOL_ATTR_RELEASE_THRESHOLD = 0,
    /* 1 (default) or 0: reuse blocks whose other-stream uses are ordered by events. */
    HAL_MEMPOOL_ATTR_REUSE_PROVEN_ORDER = 1,
    /* 1 (default) or 0: reuse blocks whose other-stream uses the host saw finish. */
    HAL_MEMPOOL_ATTR_REUSE_OBSERVED_COMPLETION = 2,
    HAL_MEMPOOL_ATTR_FORCE_UINT32 = 0x7fffffff
} halMemPoolAttribute;

/* Errors: HAL_ERROR_INVALID_DEVICE, HAL_ERROR_INVALID_VALUE (unknown attribute, a switch other
 * than 0 or 1). */
HAL_API halError halMemPoolSetAttribute(int device, halMemPoolAttribute attribute, uint64_t value);

/* Errors: HAL_ERROR_INVALID_DEVICE, HAL_ERROR_INVALID_VALUE (value NULL, unknown attribute). */
HAL_API halError halMemPoolGetAttribute(int device, halMemPoolAttribute attribute, uint64_t* value);

/* ---------------------------------------------------------------------------------------------
 * Sharing memory and events between processes on one node, as cudaIpc* and
 * aclrtIpcMemGetExportKey: one process exports a handle, sends its bytes to another by any means
 * (a pipe, a socket, a file) and the other opens it.
 *
 * Lifetime. The exporter must keep an exported block allocated until every importer has closed
 * it (halIpcCloseMemHandle), as in CUDA. polyhal does not extend it: once the exporter frees the
 * block, its pool may give the same bytes to a later allocation of the exporter (which an
 * importer still using them would then share) or return the segment to the backend. An
 * importer's mapping stays valid until it closes it or exits, even if the exporter exits or
 * frees first (the CPU backend keeps the pages mapped; on GPU backends the vendor's rules
 * apply). A handle whose exporter has exited or released the memory cannot be opened.
 *
 * Ordering. Memory of another process carries no ordering of its own: use an event created
 * with HAL_EVENT_INTERPROCESS, exported with halIpcGetEventHandle and opened with
 * halIpcOpenEventHandle. Either process may record it; halStreamWaitEvent, halQueryEvent and
 * halSynchronizeEvent in either process see the latest record of either, as one CUDA IPC
 * event. An event whose recording process exits before the recorded work finishes never
 * completes. The exporter must keep an exported event until every importer has destroyed the
 * one it opened (CUDA and HIP leave any later use undefined).
 *
 * Per backend: cpu shares memory and events (shared-memory file descriptors, opened through
 * /proc/<pid>/fd); cuda and hip share both through the vendor's IPC calls (cuIpc*, hipIpc*);
 * level_zero shares events (records kept in shared memory, reached through each stream's
 * host-function thread) and device memory (zeMemGetIpcHandle) only where
 * POLYHAL_LEVEL_ZERO_IPC_MEMORY=portable-handles says the driver's handles hold in another
 * process (docs/distributed.md); opencl neither (HAL_ERROR_NOT_SUPPORTED).
 * HAL_DEVICE_CAP_IPC_MEMORY and HAL_DEVICE_CAP_IPC_EVENTS say which.
 * ------------------------------------------------------------------------------------------- */

#define HAL_IPC_HANDLE_SIZE 128

/* An exported block: plain bytes, to be copied to the importing process as they are. */
typedef struct halIpcMemHandle {
    unsigned char reserved[HAL_IPC_HANDLE_SIZE];
} halIpcMemHandle;

/* An exported HAL_EVENT_INTERPROCESS event: plain bytes, as halIpcMemHandle. */
typedef struct halIpcEventHandle {
    unsigned char reserved[HAL_IPC_HANDLE_SIZE];
} halIpcEventHandle;

/* Exports the pool block that starts at `devPtr` (from halMalloc or halMallocAsync; the memory
 * need not be initialised) so that another process can open it (see "Lifetime" above).
 * Exporting a block again gives an equivalent handle.
 * Errors: HAL_ERROR_INVALID_VALUE (handle NULL, devPtr not the start of a live pool block),
 * HAL_ERROR_NOT_SUPPORTED (the block's device lacks HAL_DEVICE_CAP_IPC_MEMORY, or the
 * backend could not make this allocation shareable; the message says why), backend errors. */
HAL_API halError halIpcGetMemHandle(halIpcMemHandle* handle, void* devPtr);

/* Maps the block `handle` names into this process, on the current device, which must be of the
 * backend that exported it; *devPtr receives the block's start. The memory is device memory of
 * the current device for copies and memsets (HAL_MEMCPY_DEFAULT infers it), but not a pool
 * block: halFree refuses it and the pool does not order its uses; order them with IPC events.
 * Opening one handle twice gives two mappings, each closed on its own. `flags` must be 0.
 * Errors: HAL_ERROR_INVALID_VALUE (devPtr NULL, flags not 0, bytes that are not a polyhal
 * handle, a handle exported by this very process (use the pointer itself), a handle of another
 * backend than the current device's), HAL_ERROR_NOT_SUPPORTED (no HAL_DEVICE_CAP_IPC_MEMORY),
 * HAL_ERROR_NOT_FOUND (the exporter has exited or released the memory, where the backend can
 * tell; a vendor error otherwise), HAL_ERROR_NOT_PERMITTED (the OS refused access to the exporter's
 * memory; with the OS error), HAL_ERROR_OUT_OF_MEMORY, backend errors. */
HAL_API halError halIpcOpenMemHandle(void** devPtr, halIpcMemHandle handle, uint32_t flags);

/* Unmaps memory opened with halIpcOpenMemHandle, after waiting for the work of the device that
 * opened it (the memory must not be in use). The exporter's memory is unaffected.
 * Errors: HAL_ERROR_INVALID_VALUE (devPtr is not a pointer halIpcOpenMemHandle returned, or
 * was closed already), HAL_ERROR_STREAM_CAPTURE_UNSUPPORTED (a capture's mode forbids the call:
 * halCaptureMode), backend errors. */
HAL_API halError halIpcCloseMemHandle(void* devPtr);

/* Exports an event created with HAL_EVENT_INTERPROCESS.
 * Errors: HAL_ERROR_INVALID_VALUE (handle NULL, event created without HAL_EVENT_INTERPROCESS),
 * HAL_ERROR_INVALID_HANDLE, backend errors. */
HAL_API halError halIpcGetEventHandle(halIpcEventHandle* handle, halEvent event);

/* Opens an event another process exported, on the current device (of the exporter's backend).
 * The event has the flags HAL_EVENT_INTERPROCESS | HAL_EVENT_DISABLE_TIMING and is used and
 * destroyed like any other; recording it here is seen by the other process too.
 * Errors: HAL_ERROR_INVALID_VALUE (event NULL, bytes that are not a polyhal event handle, a
 * handle exported by this very process, a handle of another backend),
 * HAL_ERROR_NOT_SUPPORTED (no HAL_DEVICE_CAP_IPC_EVENTS), HAL_ERROR_NOT_FOUND (the exporter has
 * exited or destroyed the event), HAL_ERROR_NOT_PERMITTED (the OS refused access; with the OS
 * error), HAL_ERROR_OUT_OF_MEMORY, backend errors. */
HAL_API halError halIpcOpenEventHandle(halEvent* event, halIpcEventHandle handle);

/* ---------------------------------------------------------------------------------------------
 * Kernels
 * ------------------------------------------------------------------------------------------- */

typedef struct halDim3 {
    uint32_t x, y, z;
} halDim3;

/* One kernel argument: `size` bytes read from `value` at launch time (they are copied, so the
 * caller's storage may be reused as soon as halLaunchKernel returns). */
typedef struct halKernelArg {
    const void* value;
    size_t size;
} halKernelArg;

/* Loads a module on the current device from an in-memory image: a host shared object for the
 * CPU backend (see <polyhal/cpu_kernel.h>), PTX/cubin/fatbin for CUDA, SPIR-V for Level Zero,
 * OpenCL C source or SPIR-V for OpenCL. The image is copied; the caller may free it on return.
 * Errors: HAL_ERROR_INVALID_VALUE (module or image NULL, size 0), HAL_ERROR_INVALID_IMAGE (the
 * backend cannot load it; the message says why), HAL_ERROR_NOT_SUPPORTED. */
HAL_API halError halModuleLoadData(halModule* module, const void* image, size_t size);

/* Loads a module from a file; as halModuleLoadData. The file type is checked before the file is
 * opened, and opening does not block, so a FIFO or device is refused rather than waited on.
 * Errors: also HAL_ERROR_INVALID_VALUE (path NULL; not a readable, non-empty regular file, e.g. a
 * directory, FIFO, device or socket; with the OS error). */
HAL_API halError halModuleLoadFile(halModule* module, const char* path);

/* Looks up a kernel by name. The function handle is valid until its module is unloaded.
 * Errors: HAL_ERROR_INVALID_VALUE (function or name NULL), HAL_ERROR_INVALID_HANDLE,
 * HAL_ERROR_NOT_FOUND (no such kernel in the module; on the CPU backend also a name that is not
 * a function, such as an exported variable, with the symbol's kind in the message). */
HAL_API halError halModuleGetFunction(halFunction* function, halModule module, const char* name);

/* Unloads a module once the kernels already launched from it have finished (it waits for the
 * device); its functions become invalid. A failure of the awaited work is left to
 * halSynchronizeDevice. Errors: HAL_ERROR_INVALID_HANDLE. */
HAL_API halError halModuleUnload(halModule module);

/* Enqueues a launch of `function` over `grid` blocks of `block` threads on `stream`.
 * Arguments are copied at launch.
 * Errors: HAL_ERROR_INVALID_HANDLE (function or stream), HAL_ERROR_INVALID_VALUE (a zero
 * dimension, block larger than maxThreadsPerBlock, dynamicSharedBytes above
 * maxSharedMemoryPerBlock, args NULL with numArgs > 0, an argument with NULL value or size 0,
 * argument sizes summing to more than maxKernelArgumentBytes, function of another device than
 * stream). A kernel that fails while running reports
 * HAL_ERROR_LAUNCH_FAILED at the next synchronisation of the stream. */
HAL_API halError halLaunchKernel(halFunction function, halDim3 grid, halDim3 block,
                                 size_t dynamicSharedBytes, const halKernelArg* args,
                                 uint32_t numArgs, halStream stream);

/* How a kernel reads or writes the memory one argument points to, for checked mode's race
 * detector (POLYHAL_CHECK=races, docs/check.md) and the stream-aware pool. Backends ignore it: a
 * kernel that writes through an argument declared read-only is not stopped, only misreported. */
typedef enum halKernelArgAccess {
    HAL_KERNEL_ARG_READ_WRITE = 0, /* what halLaunchKernel assumes of every pointer argument */
    HAL_KERNEL_ARG_READ_ONLY = 1,
    HAL_KERNEL_ARG_WRITE_ONLY = 2,
    HAL_KERNEL_ARG_NO_ACCESS = 3, /* a value, or a pointer the kernel never dereferences */
    HAL_KERNEL_ARG_ACCESS_FORCE_UINT32 = 0x7fffffff
} halKernelArgAccess;

/* As halLaunchKernel, with `access[i]` saying how the kernel uses the memory argument i points
 * to (access NULL: every argument HAL_KERNEL_ARG_READ_WRITE). The race detector reads it: two
 * kernels on unordered streams that only read one buffer are then not reported. The pool reads
 * HAL_KERNEL_ARG_NO_ACCESS: such an argument is no use of the block it points into, which a free
 * may hand out again while the kernel runs.
 * Errors: as halLaunchKernel, and HAL_ERROR_INVALID_VALUE (an access value not in
 * halKernelArgAccess). */
HAL_API halError halLaunchKernelWithAccess(halFunction function, halDim3 grid, halDim3 block,
                                           size_t dynamicSharedBytes, const halKernelArg* args,
                                           const halKernelArgAccess* access, uint32_t numArgs,
                                           halStream stream);

/* How a kernel uses the memory one pointer argument points to: how it touches it, and how many
 * bytes from the pointer it may touch (0: to the end of the allocation, as halLaunchKernel and
 * halLaunchKernelWithAccess assume). */
typedef struct halKernelArgUse {
    halKernelArgAccess access;
    size_t bytes;
} halKernelArgUse;

/* As halLaunchKernelWithAccess, with `uses[i]` saying how the kernel uses the memory argument i
 * points to and how far (uses NULL: as halLaunchKernel). The race detector reads the extents:
 * kernels on unordered streams that each write their own slice of one allocation (the usual way
 * to split a buffer among streams) are then not reported, and an access past the extent is not
 * seen. Captured launches keep the uses. Errors: as halLaunchKernelWithAccess, for
 * uses[i].access. */
HAL_API halError halLaunchKernelWithUses(halFunction function, halDim3 grid, halDim3 block,
                                         size_t dynamicSharedBytes, const halKernelArg* args,
                                         const halKernelArgUse* uses, uint32_t numArgs,
                                         halStream stream);

/* ---------------------------------------------------------------------------------------------
 * Checked mode: a race detector between streams, a leak report at exit and costly API checks,
 * the same on every backend (docs/check.md).
 *
 * POLYHAL_CHECK, a comma list read when polyhal initialises, switches them on: `races` (two
 * accesses to overlapping bytes of pool or halMallocHost memory from different streams, at least
 * one a write, that no stream order, event wait or host synchronisation orders; and operations
 * on freed pool blocks), `leaks` (every stream, event, module and allocation still alive at
 * exit, with where it was created), `api` (waits for events never recorded, calls refused inside
 * host functions), or `all`. POLYHAL_CHECK_ACTION=report (the default) writes each finding to
 * stderr through the logger and counts it; =abort writes the first finding and calls abort().
 * While POLYHAL_CHECK is unset, checking costs a predictable branch on one flag at each of the
 * few places a call passes (docs/benchmarks.md measures it).
 * ------------------------------------------------------------------------------------------- */

/* Flags of the checks that are on (POLYHAL_CHECK). */
typedef enum halCheck {
    HAL_CHECK_RACES = 1,
    HAL_CHECK_LEAKS = 2,
    HAL_CHECK_API = 4,
    HAL_CHECK_FORCE_UINT32 = 0x7fffffff
} halCheck;

/* Writes the halCheck flags of the checks that are on (0: checking is off). Allowed inside host
 * functions.
 * Errors: HAL_ERROR_INVALID_VALUE (checks NULL), initialisation errors. */
HAL_API halError halCheckGetEnabled(uint32_t* checks);

/* Writes how many findings checked mode has reported since the process started. Thread-safe;
 * allowed inside host functions.
 * Errors: HAL_ERROR_INVALID_VALUE (count NULL), initialisation errors. */
HAL_API halError halCheckGetFindingCount(uint64_t* count);

/* Names the calling thread's own call site, for a caller in a language whose frames polyhal
 * cannot unwind (the Python binding passes "python: file:line in function"): findings quote it
 * for the calls this thread makes until it is changed; NULL clears it. The text is copied.
 * Allowed inside host functions.
 * Errors: initialisation errors. */
HAL_API halError halCheckSetCallSite(const char* site);

/* ---------------------------------------------------------------------------------------------
 * Tracing: a timeline in the Chrome Trace Event format (JSON), which Perfetto's UI and
 * chrome://tracing open, the same on every backend (docs/trace.md).
 *
 * A trace holds a track per host thread with each polyhal call as a span (its stream, size and
 * result), a track per stream with each operation's device span where the backend runs host
 * functions (timed by one enqueued behind it; docs/trace.md gives the accuracy per backend),
 * flows from each event record to the waits on it, from halLaunchHostFunc to the function's run
 * and from a stream's last operation to the calls that waited for it, the pool's counters
 * (bytes in use, reserved and pending) with markers for out-of-memory synchronisations, trims
 * and released segments, and the ranges of halTraceRangePush / halTraceRangePop.
 *
 * POLYHAL_TRACE=<path> starts a trace when polyhal initialises and completes it when the
 * process exits; a path that cannot be written is logged and the program runs untraced.
 * POLYHAL_TRACE_MAX_EVENTS (a whole number from 1 to 2^64-1; anything else refuses the trace
 * as a path that cannot be written) caps the records a trace keeps (default 4194304); the records
 * beyond, and any a thread produced faster than they could be written, are dropped, and the
 * file then ends with a "trace truncated" marker and "truncated": true in its otherData.
 * While no trace is written, tracing costs a predictable branch on one flag at each of the few
 * places a call passes (docs/benchmarks.md measures it).
 * ------------------------------------------------------------------------------------------- */

/* Starts writing a trace to `path` (created or truncated), as POLYHAL_TRACE does. Each "%p" in
 * `path` is replaced by the process id; a path without one that another live process is tracing
 * to, or that the parent was tracing to when it forked this process, gets ".<pid>" appended
 * (logged as a warning), so that each process writes a file of its own (docs/trace.md).
 * Errors: HAL_ERROR_INVALID_VALUE (path NULL or empty, a trace already being written,
 * POLYHAL_TRACE_MAX_EVENTS set to anything but a whole number from 1 to 2^64-1, or a file that
 * cannot be created: the message has the OS error). */
HAL_API halError halTraceStart(const char* path);

/* Completes the trace being written and closes its file. Work still queued on the device is not
 * waited for: synchronise first for its device spans to be in the trace.
 * Errors: HAL_ERROR_INVALID_VALUE (no trace being written), HAL_ERROR_UNKNOWN (writing the file
 * failed; the message has the OS error). */
HAL_API halError halTraceStop(void);

/* Opens a range named `name` on the calling thread's track, as NVTX's nvtxRangePushA: ranges nest
 * and each halTraceRangePop closes the innermost. The name is copied. Ranges cost a few
 * nanoseconds while no trace is written and may be used inside host functions; a range still
 * open when the trace stops stays open in the file.
 * Errors: HAL_ERROR_INVALID_VALUE (name NULL), initialisation errors. */
HAL_API halError halTraceRangePush(const char* name);

/* Closes the calling thread's innermost range.
 * Errors: HAL_ERROR_INVALID_VALUE (no range open on this thread), initialisation errors. */
HAL_API halError halTraceRangePop(void);

#ifdef __cplusplus
}
#endif

#endif /* POLYHAL_HAL_H_ */
