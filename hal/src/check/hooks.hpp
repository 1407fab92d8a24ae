// Where the core tells checked mode (POLYHAL_CHECK) what happens: the memory each stream
// operation touches, allocations and frees, host synchronisations and object lifetimes. Every
// hook costs one predictable branch while checking is off; the work is out of line (races.cpp,
// leaks.cpp, api_checks.cpp; findings.cpp reports).
#ifndef POLYHAL_HAL_SRC_CHECK_HOOKS_HPP_
#define POLYHAL_HAL_SRC_CHECK_HOOKS_HPP_

#include <polyhal/hal.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

struct halStream_t;
struct halEvent_t;

namespace polyhal {
struct Device;
namespace allocator {
class VectorClock;
}  // namespace allocator
}  // namespace polyhal

namespace polyhal::check {

// The checks POLYHAL_CHECK names (a comma list).
enum Check : uint32_t {
    kRaces = 1u << 0,  // unordered accesses between streams, and use after free
    kLeaks = 1u << 1,  // objects still alive at exit
    kApi = 1u << 2,    // misuse too costly to look for on the default path
};

namespace detail {
// The checks switched on; 0 while checking is off. Every hook tests it first.
extern std::atomic<uint32_t> g_checks;
}  // namespace detail

// Is one of `checks` on? One relaxed load: the whole cost of checked mode while it is off.
inline bool enabled(uint32_t checks) noexcept {
    return __builtin_expect((detail::g_checks.load(std::memory_order_relaxed) & checks) != 0, 0);
}

// Reads POLYHAL_CHECK and POLYHAL_CHECK_ACTION (at initialisation).
void startFromEnvironment();

// How an operation touches memory. Kernel pointer arguments are kReadWrite unless the launch
// says otherwise (halLaunchKernelWithAccess).
enum class AccessMode : uint8_t { kRead = 1, kWrite = 2, kReadWrite = 3 };

// Bytes an access spans when its extent is unknown (a kernel's pointer argument): from the
// pointer to the end of its allocation.
constexpr size_t kToEndOfAllocation = ~size_t{0};

struct Access {
    const void* pointer;
    size_t bytes;
    AccessMode mode;
};

// What a copy of `bytes` from `src` to `dst` touches.
inline std::array<Access, 2> copyAccesses(const void* dst, const void* src, size_t bytes) {
    return {Access{dst, bytes, AccessMode::kWrite}, Access{src, bytes, AccessMode::kRead}};
}

// How a launch says its arguments are used: halLaunchKernelWithAccess's modes, or
// halLaunchKernelWithUses's modes and extents; neither: every argument read and written, from
// its value to the end of its allocation.
struct ArgUses {
    const halKernelArgAccess* access = nullptr;
    const halKernelArgUse* uses = nullptr;

    uint32_t mode(uint32_t i) const {
        if (uses != nullptr) return static_cast<uint32_t>(uses[i].access);
        return access != nullptr ? static_cast<uint32_t>(access[i])
                                 : uint32_t{HAL_KERNEL_ARG_READ_WRITE};
    }
    size_t bytes(uint32_t i) const {
        return uses != nullptr && uses[i].bytes != 0 ? uses[i].bytes : kToEndOfAllocation;
    }
};

// Writes to `accesses` (room for `numArgs`) what a kernel launch touches and returns how many:
// each pointer-sized argument, as `uses` says (no access: none).
size_t kernelAccesses(const halKernelArg* args, ArgUses uses, uint32_t numArgs, Access* accesses);

namespace slow {
void beforeSubmit(halStream_t* stream) noexcept;
void submitted(halStream_t* stream, const char* operation, const Access* accesses, size_t count,
               uint64_t ticket) noexcept;
void inStreamOrder(halStream_t* stream, const char* operation, const Access& access) noexcept;
void hostObserved(const allocator::VectorClock& reached) noexcept;
void allocated(Device* device, const void* pointer, size_t size, const char* operation) noexcept;
void freed(Device* device, const void* pointer, const char* operation) noexcept;
void segmentReserved(const void* base, size_t size) noexcept;
void segmentReleased(const void* base) noexcept;
void created(const void* object, const char* kind, const char* operation) noexcept;
void destroyed(const void* object) noexcept;
void awaiting(const halEvent_t* event, const char* operation) noexcept;
void refusedInHostFunction(const char* function) noexcept;
}  // namespace slow

// `stream` is about to be given an operation: what it follows is taken now, before another
// thread's wait on the stream can add to it. submitted() follows on the same thread.
inline void beforeSubmit(halStream_t* stream) noexcept {
    if (enabled(kRaces)) slow::beforeSubmit(stream);
}

// The backend accepted `operation` on `stream` with `ticket`; `accesses` are what it touches.
inline void submitted(halStream_t* stream, const char* operation, const Access* accesses,
                      size_t count, uint64_t ticket) noexcept {
    if (enabled(kRaces)) slow::submitted(stream, operation, accesses, count, ticket);
}

// `operation` accesses memory at `stream`'s current position without enqueuing work on it: a
// stream-ordered allocation (a write-like access: the stream's earlier work on those bytes
// ends before the new owner's) or a host access made after the stream was synchronised.
inline void inStreamOrder(halStream_t* stream, const char* operation,
                          const Access& access) noexcept {
    if (enabled(kRaces)) slow::inStreamOrder(stream, operation, access);
}

// The host has seen the work `reached` describes finish (a synchronisation, or a query that
// found it done): whatever is submitted from now on is ordered after it.
inline void hostObserved(const allocator::VectorClock& reached) noexcept {
    if (enabled(kRaces)) slow::hostObserved(reached);
}

// A pool block (device != nullptr) or pinned host memory (device == nullptr) was handed out.
inline void allocated(Device* device, const void* pointer, size_t size,
                      const char* operation) noexcept {
    if (enabled(kRaces | kLeaks)) slow::allocated(device, pointer, size, operation);
}

// `operation` is freeing the allocation at `pointer` (device nullptr: pinned host memory); called
// before the pool may hand it out again. Nothing happens unless `pointer` starts a live
// allocation of `device`, so a free the pool then refuses changes nothing either.
inline void freed(Device* device, const void* pointer, const char* operation) noexcept {
    if (enabled(kRaces | kLeaks)) slow::freed(device, pointer, operation);
}

// A pool obtained a segment from the backend, or gave it back: the detector forgets what it
// knew of the addresses given back.
inline void segmentReserved(const void* base, size_t size) noexcept {
    if (enabled(kRaces | kLeaks)) slow::segmentReserved(base, size);
}
inline void segmentReleased(const void* base) noexcept {
    if (enabled(kRaces | kLeaks)) slow::segmentReleased(base);
}

// A stream, event or module (`kind`) was created or destroyed, for the report at exit.
inline void created(const void* object, const char* kind, const char* operation) noexcept {
    if (enabled(kLeaks)) slow::created(object, kind, operation);
}
inline void destroyed(const void* object) noexcept {
    if (enabled(kLeaks)) slow::destroyed(object);
}

// `operation` makes a stream wait for `event`: reported if it was never recorded (the wait then
// orders nothing). Only stream waits: hal.h defines a never-recorded event as complete, so a
// query or synchronisation of one is legal and means what it says. An interprocess event may
// have been recorded by another process: never reported.
inline void awaiting(const halEvent_t* event, const char* operation) noexcept {
    if (enabled(kApi)) slow::awaiting(event, operation);
}

// `function` was called inside a host function, where hal.h forbids it.
inline void refusedInHostFunction(const char* function) noexcept {
    if (enabled(kApi)) slow::refusedInHostFunction(function);
}

}  // namespace polyhal::check

#endif  // POLYHAL_HAL_SRC_CHECK_HOOKS_HPP_
