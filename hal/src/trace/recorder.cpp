// The trace recorder: records go to the calling thread's buffer under its own (uncontended)
// mutex; a writer thread drains the buffers every few milliseconds, and when one is half full,
// into the JSON file; stopping (halTraceStop, or the exit of the process) drains what is left
// and completes the file.
#include "recorder.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "../call_gate.hpp"
#include "../error.hpp"
#include "../log.hpp"
#include "trace_file.hpp"

namespace polyhal::trace {

namespace detail {
std::atomic<uint64_t> g_session{0};
}  // namespace detail

namespace {

// Records one thread holds before the writer drains them. The writer is woken at half; a thread
// that fills its buffer waits for the writer.
constexpr size_t kBufferRecords = 8192;
// Records one trace holds at most unless POLYHAL_TRACE_MAX_EVENTS says otherwise (about 150
// bytes of JSON each).
constexpr uint64_t kDefaultMaxRecords = uint64_t{1} << 22;
// Distinct interned strings at most: user range names are meant to be few and repeated.
constexpr size_t kMaxInternedStrings = 65536;
constexpr auto kDrainPeriod = std::chrono::milliseconds(20);

struct ThreadBuffer {
    std::mutex mutex;
    std::condition_variable drained;  // the writer took the records
    std::vector<Record> records;
    uint64_t tid = 0;
    const char* name = nullptr;  // interned; null: named after its thread id
    bool exited = false;         // its thread has ended: dropped from the registry once drained
    // In a forked child, the buffer of a thread the child does not have: never drained, woken
    // or destroyed (that thread may still count as waiting on `drained`).
    bool orphaned = false;
};

// Every thread's buffer. Buffers are shared with their threads, so a thread that exits leaves
// its records for the writer.
struct Registry {
    std::mutex mutex;
    std::vector<std::shared_ptr<ThreadBuffer>> buffers;
};

Registry& registry() {
    static auto* instance = new Registry();  // never destroyed: threads may outlive statics
    return *instance;
}

// Owned by the calling thread; tells the registry when the thread ends.
struct LocalBuffer {
    std::shared_ptr<ThreadBuffer> buffer;
    ~LocalBuffer() {
        if (!buffer) return;
        std::lock_guard<std::mutex> lock(buffer->mutex);
        buffer->exited = true;
    }
};

// The running session's writer state; guarded by g_control except where noted. The file is
// written with write(2), unbuffered, so that a forked child has no copy of pending output to
// flush into it.
struct Session {
    std::string path;
    int fd = -1;
    uint64_t startNs = 0;
    uint64_t maxRecords = kDefaultMaxRecords;
    uint64_t written = 0;  // writer thread only while it runs
    bool first = true;     // no record written yet (the JSON array's commas)
    int writeError = 0;    // the first failed write's errno; writer thread only while it runs
    std::unordered_set<uint64_t> namedThreads;  // writer thread only while it runs
    // Ranges begun and not yet ended, per host thread; closed at the end of the file so that it
    // stays balanced when a trace stops inside a range. Writer thread only while it runs.
    std::unordered_map<uint64_t, uint64_t> openRanges;
    std::unique_ptr<std::thread> writer;
};

std::mutex g_control;  // starting and stopping
Session g_current;
std::atomic<uint64_t> g_nextSession{0};
std::atomic<uint64_t> g_dropped{0};
std::atomic<uint64_t> g_firstDropNs{0};
std::atomic<uint64_t> g_nextFlowId{0};

std::mutex g_wakeMutex;
// The writer's wake-up. A forked child makes it anew in place (resetInChild).
std::condition_variable g_wake;
bool g_stopRequested = false;   // guarded by g_wakeMutex
bool g_drainRequested = false;  // a buffer is half full; guarded by g_wakeMutex

// Wakes the writer to drain the buffers now. The writer's wait ends on a condition, not on the
// notification alone.
void requestDrain() {
    {
        std::lock_guard<std::mutex> lock(g_wakeMutex);
        g_drainRequested = true;
    }
    g_wake.notify_one();
}

void noteDropped(uint64_t count, uint64_t when) noexcept {
    g_dropped.fetch_add(count, std::memory_order_relaxed);
    uint64_t none = 0;
    g_firstDropNs.compare_exchange_strong(none, when, std::memory_order_relaxed);
}

thread_local LocalBuffer t_local;

ThreadBuffer& localBuffer() {
    LocalBuffer& local = t_local;
    if (!local.buffer) {
        auto buffer = std::make_shared<ThreadBuffer>();
        buffer->tid = threadId();
        buffer->records.reserve(kBufferRecords);
        Registry& all = registry();
        std::lock_guard<std::mutex> lock(all.mutex);
        all.buffers.push_back(buffer);
        local.buffer = std::move(buffer);
    }
    return *local.buffer;
}

// ---- JSON ------------------------------------------------------------------------------------

// The length of the well-formed UTF-8 sequence at `p` (1 to 4), or 0 if it is not one.
size_t utf8Length(const unsigned char* p) {
    auto continuation = [](unsigned char c) { return (c & 0xC0) == 0x80; };
    if (p[0] < 0x80) return 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF) return continuation(p[1]) ? 2 : 0;
    if (p[0] >= 0xE0 && p[0] <= 0xEF) {
        // No overlong forms (E0 80..9F) and no surrogates (ED A0..BF).
        const bool second = p[0] == 0xE0   ? p[1] >= 0xA0 && p[1] <= 0xBF
                            : p[0] == 0xED ? p[1] >= 0x80 && p[1] <= 0x9F
                                           : continuation(p[1]);
        return second && continuation(p[2]) ? 3 : 0;
    }
    if (p[0] >= 0xF0 && p[0] <= 0xF4) {
        const bool second = p[0] == 0xF0   ? p[1] >= 0x90 && p[1] <= 0xBF
                            : p[0] == 0xF4 ? p[1] >= 0x80 && p[1] <= 0x8F
                                           : continuation(p[1]);
        return second && continuation(p[2]) && continuation(p[3]) ? 4 : 0;
    }
    return 0;
}

// A JSON string of `text`: control characters escaped, and bytes that are not UTF-8 (names come
// from applications and modules) replaced by U+FFFD, so the file always parses.
void appendEscaped(fmt::memory_buffer& out, const char* text) {
    out.push_back('"');
    const auto* p = reinterpret_cast<const unsigned char*>(text);
    while (*p != '\0') {
        const unsigned char c = *p;
        switch (c) {
        case '"': out.append(std::string_view("\\\"")); break;
        case '\\': out.append(std::string_view("\\\\")); break;
        case '\n': out.append(std::string_view("\\n")); break;
        case '\t': out.append(std::string_view("\\t")); break;
        default:
            if (c < 0x20) {
                fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
            } else if (const size_t length = utf8Length(p); length > 0) {
                out.append(reinterpret_cast<const char*>(p),
                           reinterpret_cast<const char*>(p) + length);
                p += length;
                continue;
            } else {
                out.append(std::string_view("\\ufffd"));
            }
        }
        ++p;
    }
    out.push_back('"');
}

// Microseconds with nanosecond digits, as the format's "ts" and "dur" are read.
void appendMicroseconds(fmt::memory_buffer& out, uint64_t ns) {
    fmt::format_to(std::back_inserter(out), "{}.{:03}", ns / 1000, ns % 1000);
}

void appendRecord(fmt::memory_buffer& out, const Record& record, uint64_t startNs) {
    fmt::format_to(std::back_inserter(out), "{{\"ph\":\"{}\",\"name\":", record.phase);
    appendEscaped(out, record.name);
    if (record.category[0] != '\0') {
        out.append(std::string_view(",\"cat\":"));
        appendEscaped(out, record.category);
    }
    fmt::format_to(std::back_inserter(out), ",\"pid\":{},\"tid\":{},\"ts\":", record.pid,
                   record.tid);
    appendMicroseconds(out, record.ts > startNs ? record.ts - startNs : 0);
    if (record.phase == 'X') {
        out.append(std::string_view(",\"dur\":"));
        appendMicroseconds(out, record.dur);
    }
    if (record.phase == 's' || record.phase == 'f') {
        fmt::format_to(std::back_inserter(out), ",\"id\":{}", record.id);
        if (record.phase == 'f') out.append(std::string_view(",\"bp\":\"e\""));
    }
    if (record.phase == 'i') out.append(std::string_view(",\"s\":\"p\""));
    if (record.args[0].key != nullptr) {
        out.append(std::string_view(",\"args\":{"));
        for (size_t i = 0; i < std::size(record.args) && record.args[i].key != nullptr; ++i) {
            const Arg& arg = record.args[i];
            if (i > 0) out.push_back(',');
            appendEscaped(out, arg.key);
            out.push_back(':');
            if (arg.text != nullptr) {
                appendEscaped(out, arg.text);
            } else {
                fmt::format_to(std::back_inserter(out), "{}", arg.number);
            }
        }
        out.push_back('}');
    }
    out.push_back('}');
}

void writeOut(Session& session, fmt::memory_buffer& out) {
    const char* data = out.data();
    size_t left = out.size();
    while (left > 0 && session.writeError == 0) {
        const ssize_t written = ::write(session.fd, data, left);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            session.writeError = written < 0 ? errno : EIO;
            break;
        }
        data += written;
        left -= static_cast<size_t>(written);
    }
    out.clear();
}

// Appends one record to the file, or counts it dropped once the trace holds its maximum.
void writeRecord(Session& session, fmt::memory_buffer& out, const Record& record) {
    if (session.written >= session.maxRecords) {
        noteDropped(1, record.ts);
        return;
    }
    ++session.written;
    if (record.phase == 'B') ++session.openRanges[record.tid];
    if (record.phase == 'E') --session.openRanges[record.tid];
    if (!session.first) out.append(std::string_view(",\n"));
    session.first = false;
    appendRecord(out, record, session.startNs);
}

void nameThread(Session& session, fmt::memory_buffer& out, const ThreadBuffer& buffer,
                const char* name) {
    if (!session.namedThreads.insert(buffer.tid).second) return;
    Record record;
    record.phase = 'M';
    record.name = "thread_name";
    record.pid = hostPid();
    record.tid = buffer.tid;
    const std::string fallback = buffer.tid == static_cast<uint64_t>(hostPid())
                                     ? std::string("main thread")
                                     : fmt::format("thread {}", buffer.tid);
    record.args[0] = Arg{"name", name != nullptr ? name : intern(fallback)};
    record.ts = session.startNs;
    writeRecord(session, out, record);
}

// Moves every buffer's records into the file. Called by the writer thread, and by stop() once
// the writer has ended.
void drainAll(Session& session) {
    std::vector<std::shared_ptr<ThreadBuffer>> buffers;
    {
        Registry& all = registry();
        std::lock_guard<std::mutex> lock(all.mutex);
        buffers = all.buffers;
    }
    std::vector<Record> taken;
    taken.reserve(kBufferRecords);
    fmt::memory_buffer out;
    bool anyExited = false;
    for (const auto& buffer : buffers) {
        if (buffer->orphaned) continue;
        const char* name = nullptr;
        {
            std::lock_guard<std::mutex> lock(buffer->mutex);
            std::swap(taken, buffer->records);
            name = buffer->name;
            anyExited = anyExited || buffer->exited;
        }
        buffer->drained.notify_all();
        // A thread's track is named once it holds records of its own: a backend thread that only
        // timed stream operations (records on the streams' tracks) gets no empty track.
        for (const Record& record : taken) {
            if (record.pid == hostPid() && record.tid == buffer->tid) {
                nameThread(session, out, *buffer, name);
                break;
            }
        }
        for (const Record& record : taken) writeRecord(session, out, record);
        taken.clear();
        writeOut(session, out);
    }
    if (!anyExited) return;
    Registry& all = registry();
    std::lock_guard<std::mutex> lock(all.mutex);
    auto& list = all.buffers;
    for (size_t i = 0; i < list.size();) {
        std::lock_guard<std::mutex> bufferLock(list[i]->mutex);
        if (list[i]->exited && list[i]->records.empty()) {
            list[i] = list.back();
            list.pop_back();
        } else {
            ++i;
        }
    }
}

void runWriter(Session* session) {
    for (;;) {
        bool stopping = false;
        {
            std::unique_lock<std::mutex> lock(g_wakeMutex);
            g_wake.wait_for(lock, kDrainPeriod, [] { return g_stopRequested || g_drainRequested; });
            stopping = g_stopRequested;
            g_drainRequested = false;
        }
        drainAll(*session);
        if (stopping) return;
    }
}

// POLYHAL_TRACE_MAX_EVENTS, or the default when it is unset. Only digits are read: strtoull
// alone would take "-5" as 2^64-5, and " 5" or "+5" as 5.
halError maxRecordsFromEnvironment(const char* operation, uint64_t* maxRecords) {
    const char* value = std::getenv("POLYHAL_TRACE_MAX_EVENTS");
    *maxRecords = kDefaultMaxRecords;
    if (value == nullptr || *value == '\0') return HAL_SUCCESS;
    char* end = nullptr;
    errno = 0;
    const unsigned long long parsed = std::strtoull(value, &end, 10);
    if (!std::isdigit(static_cast<unsigned char>(*value)) || errno != 0 || *end != '\0' ||
        parsed == 0) {
        return fail(HAL_ERROR_INVALID_VALUE,
                    "{}: POLYHAL_TRACE_MAX_EVENTS='{}' is not a whole number from 1 to {}",
                    operation, value, std::numeric_limits<uint64_t>::max());
    }
    *maxRecords = parsed;
    return HAL_SUCCESS;
}

// The file's last records and its end: the truncation marker, the process's name, and the
// object's closing members.
void finishFile(Session& session) {
    fmt::memory_buffer out;
    const uint64_t dropped = g_dropped.load(std::memory_order_relaxed);
    // Written past the maximum: a truncated trace says so where it was cut.
    session.maxRecords = UINT64_MAX;
    const uint64_t stoppedNs = now();
    // A copy: writing an end updates the counts.
    const auto openRanges = session.openRanges;
    for (const auto& [tid, open] : openRanges) {
        for (uint64_t i = 0; i < open; ++i) {
            Record end = threadRecord('E', "", "range", stoppedNs);
            end.tid = tid;
            end.args[0] = Arg{"closedBy", "trace stop"};
            writeRecord(session, out, end);
        }
    }
    if (dropped > 0) {
        Record marker = threadRecord('i', "trace truncated", "polyhal",
                                     g_firstDropNs.load(std::memory_order_relaxed));
        marker.args[0] = Arg{"droppedEvents", nullptr, static_cast<int64_t>(dropped)};
        writeRecord(session, out, marker);
    }
    Record process;
    process.phase = 'M';
    process.name = "process_name";
    process.pid = hostPid();
    process.ts = session.startNs;
    process.args[0] = Arg{"name", "polyhal host threads"};
    writeRecord(session, out, process);
    fmt::format_to(std::back_inserter(out),
                   "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"producer\":\"polyhal "
                   "{}.{}.{}\",\"truncated\":{},\"droppedEvents\":{},\"clockStartNs\":{}}}}}\n",
                   HAL_VERSION_MAJOR, HAL_VERSION_MINOR, HAL_VERSION_PATCH,
                   dropped > 0 ? "true" : "false", dropped, session.startNs);
    writeOut(session, out);
}

// Ends the current session (g_control held): stops the writer, drains, completes and closes the
// file. Returns what went wrong writing it, or "".
std::string endSession(const char* operation);

// At exit the thread's error slot may already be destroyed (thread_local objects go before
// atexit handlers): a failure is logged, never stored.
void stopAtExit() {
    std::lock_guard<std::mutex> control(g_control);
    if (session() == 0) return;
    const std::string problem = endSession("exit");
    if (!problem.empty()) logger().error("POLYHAL_TRACE: {}", problem);
}

// Every interned string of the process, under one lock.
struct InternedStrings {
    std::mutex mutex;
    std::unordered_set<std::string> strings;
};

InternedStrings& interned() {
    static auto* instance = new InternedStrings();  // never destroyed: names outlive statics
    return *instance;
}

const char* internShared(std::string_view text) {
    InternedStrings& all = interned();
    std::lock_guard<std::mutex> lock(all.mutex);
    auto found = all.strings.find(std::string(text));
    if (found != all.strings.end()) return found->c_str();
    if (all.strings.size() >= kMaxInternedStrings) {
        return "(name not kept: too many distinct names)";
    }
    return all.strings.emplace(text).first->c_str();
}

}  // namespace

uint64_t now() noexcept {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::steady_clock::now().time_since_epoch())
                                     .count());
}

void emit(const Record& record, uint64_t sessionId) noexcept {
    if (sessionId == 0) return;
    try {
        ThreadBuffer& buffer = localBuffer();
        size_t size = 0;
        {
            std::unique_lock<std::mutex> lock(buffer.mutex);
            if (detail::g_session.load(std::memory_order_acquire) != sessionId) return;
            // The writer is behind: the thread waits for it rather than lose the record (a lost
            // begin would leave its end unmatched), so a tight loop of traced calls runs at the
            // writer's pace. The end of the session ends the wait: the record comes too late.
            while (buffer.records.size() >= kBufferRecords) {
                if (detail::g_session.load(std::memory_order_acquire) != sessionId) return;
                requestDrain();
                buffer.drained.wait_for(lock, kDrainPeriod);
            }
            buffer.records.push_back(record);
            size = buffer.records.size();
        }
        if (size == kBufferRecords / 2) requestDrain();
    } catch (...) {
        noteDropped(1, record.ts);  // out of host memory for a new thread's buffer
    }
}

const char* intern(std::string_view text) {
    // The names a thread interned last: a range pushed in a loop finds its name here, without
    // the lock.
    constexpr size_t kRecent = 8;
    static thread_local const char* recent[kRecent] = {};
    static thread_local size_t nextRecent = 0;
    for (const char* known : recent) {
        if (known != nullptr && std::string_view(known) == text) return known;
    }
    const char* kept = internShared(text);
    recent[nextRecent++ % kRecent] = kept;
    return kept;
}

uint64_t newFlowId() noexcept {
    return g_nextFlowId.fetch_add(1, std::memory_order_relaxed) + 1;
}

namespace {

// The process and thread ids, read once (getpid and gettid are system calls) and forgotten in a
// forked child, whose ids differ: its one thread is the one that forked.
std::atomic<int64_t> g_pid{0};
thread_local uint64_t t_tid = 0;

// A forked child whose parent was writing a trace (g_current.path) when it forked; the child's
// first start() keeps that path in g_parentPath, which the child's own traces never overwrite.
bool g_forkedWhileTracing = false;
std::string g_parentPath;

// A forked child has only the thread that forked. Every lock of the recorder is taken before the
// fork, in the order the recorder nests them, and let go after it on both sides, so that the
// child never inherits a lock held by a thread it does not have.
void lockBeforeFork() {
    g_control.lock();
    Registry& all = registry();
    all.mutex.lock();
    for (const auto& buffer : all.buffers) buffer->mutex.lock();
    g_wakeMutex.lock();
    interned().mutex.lock();
}

void unlockAfterFork() {
    interned().mutex.unlock();
    g_wakeMutex.unlock();
    Registry& all = registry();
    for (const auto& buffer : all.buffers) buffer->mutex.unlock();
    all.mutex.unlock();
    g_control.unlock();
}

// The child's ids differ; it does not write its parent's trace (the writer thread is not in the
// child) and may start one of its own. The other threads' buffers are orphaned and the writer's
// wake-up made anew: a thread the child lacks may still count as waiting on them, and glibc's
// signal and destroy wait for such a waiter. Nothing here allocates: a child of a multi-threaded
// process may find the allocator unusable.
void resetInChild() noexcept {
    g_pid.store(0, std::memory_order_relaxed);
    t_tid = 0;
    if (t_local.buffer) t_local.buffer->tid = threadId();
    for (const auto& buffer : registry().buffers) {
        if (buffer == t_local.buffer) continue;
        buffer->orphaned = true;
        buffer->records.clear();
    }
    new (&g_wake) std::condition_variable();  // the parent's is abandoned, never destroyed
    g_stopRequested = false;
    g_drainRequested = false;
    if (detail::g_session.load(std::memory_order_relaxed) != 0) {
        detail::g_session.store(0, std::memory_order_relaxed);
        call_gate::release();
        g_current.writer.release();  // NOLINT: the thread is the parent's; nothing to join or free
        g_forkedWhileTracing = true;
        ::close(g_current.fd);
        g_current.fd = -1;
    }
}

void afterForkInChild() {
    unlockAfterFork();  // the forking thread took the locks: in the child it is their owner
    resetInChild();     // single-threaded from here
}

}  // namespace

int64_t hostPid() noexcept {
    int64_t pid = g_pid.load(std::memory_order_relaxed);
    if (pid == 0) {
        static const bool registered =
            pthread_atfork(lockBeforeFork, unlockAfterFork, afterForkInChild) == 0;
        (void)registered;
        pid = ::getpid();
        g_pid.store(pid, std::memory_order_relaxed);
    }
    return pid;
}

uint64_t threadId() noexcept {
    if (t_tid == 0) {
        hostPid();  // registers the fork handler
        t_tid = static_cast<uint64_t>(::syscall(SYS_gettid));
    }
    return t_tid;
}

void nameThisThread(const char* name) noexcept {
    try {
        ThreadBuffer& buffer = localBuffer();
        std::lock_guard<std::mutex> lock(buffer.mutex);
        if (buffer.name == nullptr) buffer.name = name;
    } catch (...) {
    }
}

halError start(const char* path, const char* operation) {
    if (path == nullptr || *path == '\0') {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: path must name a file", operation);
    }
    hostPid();  // registers the fork handlers before a session exists for a child to inherit
    std::lock_guard<std::mutex> control(g_control);
    if (session() != 0) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: a trace is already being written to {}",
                    operation, g_current.path);
    }
    uint64_t maxRecords = 0;
    if (halError e = maxRecordsFromEnvironment(operation, &maxRecords)) return e;
    if (g_forkedWhileTracing) {
        g_parentPath = g_current.path;
        g_forkedWhileTracing = false;
    }
    std::string chosen;
    const int fd = openTraceFile(path, g_parentPath, hostPid(), &chosen);
    if (fd < 0) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: cannot create {}: {}", operation, chosen,
                    std::strerror(errno));
    }
    if (chosen != expandPid(path, hostPid())) {
        logger().warn("{}: {} is another process's trace; this process {} traces to {}", operation,
                      path, hostPid(), chosen);
    }
    // Records a thread left from an earlier session are dropped with it.
    {
        Registry& all = registry();
        std::lock_guard<std::mutex> lock(all.mutex);
        for (const auto& buffer : all.buffers) {
            std::lock_guard<std::mutex> bufferLock(buffer->mutex);
            buffer->records.clear();
        }
    }
    g_current.path = chosen;
    g_current.fd = fd;
    g_current.startNs = now();
    g_current.maxRecords = maxRecords;
    g_current.written = 0;
    g_current.first = true;
    g_current.writeError = 0;
    g_current.namedThreads.clear();
    g_current.openRanges.clear();
    fmt::memory_buffer header;
    header.append(std::string_view("{\"traceEvents\":[\n"));
    writeOut(g_current, header);
    g_dropped.store(0, std::memory_order_relaxed);
    g_firstDropNs.store(0, std::memory_order_relaxed);
    {
        std::lock_guard<std::mutex> lock(g_wakeMutex);
        g_stopRequested = false;
    }
    static const bool stopsAtExit = std::atexit(stopAtExit) == 0;
    (void)stopsAtExit;
    // The writer first: where it cannot start, no session is left open behind the error.
    try {
        g_current.writer = std::make_unique<std::thread>(runWriter, &g_current);
    } catch (...) {
        ::close(g_current.fd);
        g_current.fd = -1;
        throw;
    }
    detail::g_session.store(g_nextSession.fetch_add(1, std::memory_order_relaxed) + 1,
                            std::memory_order_release);
    call_gate::hold();  // public calls open their spans
    logger().info("{}: tracing to {}", operation, chosen);
    return HAL_SUCCESS;
}

halError stop(const char* operation) {
    std::lock_guard<std::mutex> control(g_control);
    if (session() == 0) {
        return fail(HAL_ERROR_INVALID_VALUE, "{}: no trace is being written", operation);
    }
    const std::string problem = endSession(operation);
    if (!problem.empty()) return fail(HAL_ERROR_UNKNOWN, "{}", problem);
    return HAL_SUCCESS;
}

namespace {

std::string endSession(const char* operation) {
    // Records appended before this store are drained below; later ones see the session over.
    detail::g_session.store(0, std::memory_order_release);
    call_gate::release();
    {
        std::lock_guard<std::mutex> lock(g_wakeMutex);
        g_stopRequested = true;
    }
    g_wake.notify_one();
    g_current.writer->join();
    g_current.writer.reset();
    drainAll(g_current);
    finishFile(g_current);
    int error = g_current.writeError;
    if (::close(g_current.fd) != 0 && error == 0) error = errno;
    g_current.fd = -1;
    if (error != 0) {
        return fmt::format("{}: writing {} failed: {}", operation, g_current.path,
                           std::strerror(error));
    }
    const uint64_t dropped = g_dropped.load(std::memory_order_relaxed);
    if (dropped > 0) {
        logger().warn(
            "{}: {} is truncated: {} records dropped (past the POLYHAL_TRACE_MAX_EVENTS cap, or "
            "out of host memory for a thread's buffer)",
            operation, g_current.path, dropped);
    }
    return {};
}

}  // namespace

void startFromEnvironment() {
    const char* path = std::getenv("POLYHAL_TRACE");
    if (path == nullptr || *path == '\0') return;
    if (start(path, "POLYHAL_TRACE") != HAL_SUCCESS) {
        logger().error("{}; running without a trace", lastErrorMessage());
    }
}

}  // namespace polyhal::trace
