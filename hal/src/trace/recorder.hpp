// The trace recorder: per-thread bounded buffers of Chrome Trace Event records, drained by a
// background writer into one JSON file (POLYHAL_TRACE, halTraceStart).
#ifndef POLYHAL_HAL_SRC_TRACE_RECORDER_HPP_
#define POLYHAL_HAL_SRC_TRACE_RECORDER_HPP_

#include <polyhal/hal.h>

#include <atomic>
#include <cstdint>
#include <string_view>

namespace polyhal::trace {

namespace detail {
// The running session's number, 0 while no trace is being written. Every hook tests it first.
extern std::atomic<uint64_t> g_session;
}  // namespace detail

// Is a trace being written? One relaxed load: the whole cost of tracing while it is off.
inline bool enabled() noexcept {
    return __builtin_expect(detail::g_session.load(std::memory_order_relaxed) != 0, 0);
}

inline uint64_t session() noexcept {
    return detail::g_session.load(std::memory_order_relaxed);
}

// Steady-clock nanoseconds; the writer makes them relative to the session's start.
uint64_t now() noexcept;

// A record's argument: a key and an integer or a string (static or interned).
struct Arg {
    const char* key = nullptr;
    const char* text = nullptr;  // used when not null, else `number`
    int64_t number = 0;
};

// One Chrome Trace Event. `name` and string arguments must outlive the session: string
// literals, or intern()ed text.
struct Record {
    char phase = 'X';  // X complete, B/E begin/end, i instant, s/f flow, C counter, M metadata
    const char* name = "";
    const char* category = "";
    int64_t pid = 0;
    uint64_t tid = 0;
    uint64_t ts = 0;   // now() at the start
    uint64_t dur = 0;  // 'X' only
    uint64_t id = 0;   // flows
    Arg args[4];
};

// Appends `record` to the calling thread's buffer, unless the session that `session` names has
// ended. A full buffer makes the thread wait for the writer.
void emit(const Record& record, uint64_t session) noexcept;

// A stable copy of `text` for records (user range names, track labels).
const char* intern(std::string_view text);

// A fresh flow id, unique in the process.
uint64_t newFlowId() noexcept;

// The calling thread's track: the host process and its OS thread id.
int64_t hostPid() noexcept;
uint64_t threadId() noexcept;

// A record on the calling thread's track, at `ts`.
inline Record threadRecord(char phase, const char* name, const char* category, uint64_t ts) {
    Record record;
    record.phase = phase;
    record.name = name;
    record.category = category;
    record.pid = hostPid();
    record.tid = threadId();
    record.ts = ts;
    return record;
}

// Names the calling thread's track `name` (once per session; the first name sticks).
void nameThisThread(const char* name) noexcept;

// Starts a session writing to `path`; `operation` names the caller in errors.
// HAL_ERROR_INVALID_VALUE: path NULL or empty, a session already running, or a file that cannot
// be created (with the OS error).
halError start(const char* path, const char* operation);

// Ends the session: drains every buffer, completes the JSON and closes the file.
// HAL_ERROR_INVALID_VALUE when no session is running; HAL_ERROR_UNKNOWN when writing failed
// (with the OS error; the file is closed anyway).
halError stop(const char* operation);

// Starts the session POLYHAL_TRACE names, if it is set (at initialisation); a path that cannot
// be written is logged as an error and the program runs untraced.
void startFromEnvironment();

}  // namespace polyhal::trace

#endif  // POLYHAL_HAL_SRC_TRACE_RECORDER_HPP_
