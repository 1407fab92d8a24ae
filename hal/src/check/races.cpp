// The race detector: every access of a stream operation to pool or pinned host memory, with the
// stream's clock, checked against the earlier accesses to the same bytes (docs/check.md).
//
// Happens-before is the pool's: an access (stream s, ticket t) is ordered before a later
// operation when that operation's stream is s, when its clock (stream order merged with the
// snapshots of the events it waited for) holds s at t or more, or when the host has seen
// (s, t) finish (a synchronisation, or a query that found it done) before submitting it. The
// pool's own completion polling does not count: the program did not wait for it.
#include <algorithm>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "../device.hpp"
#include "../enum_bits.hpp"
#include "../legacy_stream.hpp"
#include "../objects.hpp"
#include "findings.hpp"
#include "hooks.hpp"

namespace polyhal::check {

namespace {

// Freed pool blocks remembered for use-after-free, the oldest forgotten first.
constexpr size_t kFreedBlocksKept = 4096;
// Unordered accesses kept per block; beyond, the oldest is forgotten (a race with it may then
// go unreported, never a false one).
constexpr size_t kAccessesPerBlock = 256;

// One operation as a finding names it.
struct Operation {
    const char* name;
    const halStream_t* stream;
    bool defaultStream;
    int device;
    uint64_t ticket;  // the stream's sequence number of the operation
    CallSite site;
};

struct RecordedAccess {
    uintptr_t begin, end;
    const allocator::Stream* stream;
    const allocator::DevicePool* pool;
    uint64_t ticket;
    AccessMode mode;
    std::shared_ptr<const Operation> operation;
    // No extent was declared (a kernel argument): the access was taken to reach the end of its
    // allocation, which a finding says.
    bool extentAssumed;

    bool writes() const { return (static_cast<uint8_t>(mode) & 2) != 0; }
};

struct Block {
    size_t size = 0;
    int device = -1;  // -1: pinned host memory
    const char* allocatedBy = nullptr;
    CallSite allocationSite;
    const char* freedBy = nullptr;  // set once freed
    CallSite freeSite;
    std::vector<RecordedAccess> accesses;
};

// What a finding needs, gathered under the detector's lock and written after it is released:
// resolving call sites' symbols and formatting take longer than the check itself.
struct Finding {
    const char* hazard;  // nullptr: a use after free
    uintptr_t from, to;  // the bytes both touch (a use after free: the pointer used)
    uintptr_t base;
    Block block;                               // as it was, without its accesses
    std::shared_ptr<const Operation> earlier;  // nullptr for a use after free
    AccessMode earlierMode;
    std::shared_ptr<const Operation> later;
    AccessMode laterMode;
    bool extentAssumed = false;  // for either access (RecordedAccess::extentAssumed)
};

class Detector {
  public:
    void allocated(Device* device, uintptr_t base, size_t size, const char* operation,
                   CallSite site);
    void freed(Device* device, uintptr_t base, const char* operation, CallSite site);
    void segmentReserved(uintptr_t base, size_t size);
    void segmentReleased(uintptr_t base);
    void hostObserved(const allocator::VectorClock& reached);
    // Checks and records `operation`'s accesses; `clock`: what it follows (its stream's clock
    // before it was enqueued). What it finds is added to `findings`.
    void submitted(halStream_t* stream, const std::shared_ptr<const Operation>& operation,
                   const allocator::VectorClock& clock, const Access* accesses, size_t count,
                   std::vector<Finding>* findings);
    std::vector<std::string> liveBlocks();
    // Does one of the accesses touch memory the detector tracks? Only then is the operation
    // worth describing (its call site costs a backtrace).
    bool touchesTracked(const Access* accesses, size_t count);

  private:
    // The block whose bytes hold `address`, or end().
    std::map<uintptr_t, Block>::iterator find(uintptr_t address);
    // Adds to `findings` each earlier access that races with `access`, unless its operation is
    // in `reported` (one finding per pair of operations, however many buffers they share).
    void check(Block& block, uintptr_t base, const RecordedAccess& access,
               const allocator::VectorClock& clock, std::vector<const Operation*>* reported,
               std::vector<Finding>* findings);
    void forgetOldFreed();

    std::mutex mutex_;
    std::map<uintptr_t, Block> blocks_;  // by base address
    std::deque<uintptr_t> freedOrder_;
    // The pools' segments, by base: once one goes back to the backend, its addresses may become
    // anything (host memory, on backends whose device memory is the host's).
    std::map<uintptr_t, size_t> segments_;
    // The highest ticket of each stream the host has seen finish.
    std::unordered_map<const allocator::Stream*, uint64_t> observed_;
};

Detector& detector() {
    // Never destroyed: streams may still report while the process exits.
    static Detector* instance = new Detector();
    return *instance;
}

const char* modeName(AccessMode mode) {
    switch (mode) {
    case AccessMode::kRead: return "read";
    case AccessMode::kWrite: return "write";
    default: return "read+write";
    }
}

std::string operationName(const Operation& operation) {
    const std::string stream =
        operation.defaultStream
            ? fmt::format("the default stream of device {}", operation.device)
            : fmt::format("stream {} (device {})", static_cast<const void*>(operation.stream),
                          operation.device);
    return fmt::format("{} #{} on {}", operation.name, operation.ticket, stream);
}

std::string blockName(const Block& block, uintptr_t base) {
    return block.device < 0 ? fmt::format("pinned host block {:#x} ({} bytes)", base, block.size)
                            : fmt::format("pool block {:#x} ({} bytes, device {})", base,
                                          block.size, block.device);
}

std::map<uintptr_t, Block>::iterator Detector::find(uintptr_t address) {
    auto it = blocks_.upper_bound(address);
    if (it == blocks_.begin()) return blocks_.end();
    --it;
    return address < it->first + it->second.size ? it : blocks_.end();
}

void Detector::allocated(Device* device, uintptr_t base, size_t size, const char* operation,
                         CallSite site) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Whatever was recorded of these bytes belonged to blocks the pool has since reused.
    auto it = blocks_.lower_bound(base);
    if (it != blocks_.begin() && std::prev(it)->first + std::prev(it)->second.size > base) --it;
    while (it != blocks_.end() && it->first < base + size) it = blocks_.erase(it);
    Block block;
    block.size = size;
    block.device = device != nullptr ? device->ordinal : -1;
    block.allocatedBy = operation;
    block.allocationSite = std::move(site);
    blocks_.emplace(base, std::move(block));
}

void Detector::freed(Device* device, uintptr_t base, const char* operation, CallSite site) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = blocks_.find(base);
    if (it == blocks_.end() || it->second.freedBy != nullptr ||
        it->second.device != (device != nullptr ? device->ordinal : -1)) {
        return;
    }
    if (it->second.device < 0) {
        // The host allocator may hand these bytes to anything next: nothing to say of them.
        blocks_.erase(it);
        return;
    }
    it->second.freedBy = operation;
    it->second.freeSite = std::move(site);
    it->second.accesses.clear();
    freedOrder_.push_back(base);
    forgetOldFreed();
}

void Detector::forgetOldFreed() {
    while (freedOrder_.size() > kFreedBlocksKept) {
        auto it = blocks_.find(freedOrder_.front());
        if (it != blocks_.end() && it->second.freedBy != nullptr) blocks_.erase(it);
        freedOrder_.pop_front();
    }
}

void Detector::segmentReserved(uintptr_t base, size_t size) {
    std::lock_guard<std::mutex> lock(mutex_);
    segments_[base] = size;
}

void Detector::segmentReleased(uintptr_t base) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto segment = segments_.find(base);
    if (segment == segments_.end()) return;
    const uintptr_t end = base + segment->second;
    segments_.erase(segment);
    for (auto it = blocks_.lower_bound(base); it != blocks_.end() && it->first < end;) {
        it = blocks_.erase(it);
    }
}

void Detector::hostObserved(const allocator::VectorClock& reached) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const allocator::VectorClock::Entry& entry : reached.entries()) {
        uint64_t& ticket = observed_[entry.stream];
        ticket = std::max(ticket, entry.ticket);
    }
}

Block withoutAccesses(const Block& block) {
    Block copy;
    copy.size = block.size;
    copy.device = block.device;
    copy.allocatedBy = block.allocatedBy;
    copy.allocationSite = block.allocationSite;
    copy.freedBy = block.freedBy;
    copy.freeSite = block.freeSite;
    return copy;
}

void Detector::submitted(halStream_t* stream, const std::shared_ptr<const Operation>& operation,
                         const allocator::VectorClock& clock, const Access* accesses, size_t count,
                         std::vector<Finding>* findings) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<const Operation*> reported;
    for (size_t i = 0; i < count; ++i) {
        const auto pointer = reinterpret_cast<uintptr_t>(accesses[i].pointer);
        auto it = find(pointer);
        if (it == blocks_.end()) continue;  // memory polyhal did not allocate
        Block& block = it->second;
        if (block.freedBy != nullptr) {
            findings->push_back(Finding{nullptr, pointer, pointer, it->first,
                                        withoutAccesses(block), nullptr, AccessMode::kRead,
                                        operation, accesses[i].mode});
            continue;
        }
        const bool assumed = accesses[i].bytes == kToEndOfAllocation;
        const uintptr_t end = assumed || accesses[i].bytes > it->first + block.size - pointer
                                  ? it->first + block.size
                                  : pointer + accesses[i].bytes;
        check(block, it->first,
              RecordedAccess{pointer, end, stream->poolStream, stream->device->pool.get(),
                             operation->ticket, accesses[i].mode, operation, assumed},
              clock, &reported, findings);
    }
}

void Detector::check(Block& block, uintptr_t base, const RecordedAccess& access,
                     const allocator::VectorClock& clock, std::vector<const Operation*>* reported,
                     std::vector<Finding>* findings) {
    auto& earlier = block.accesses;
    for (auto it = earlier.begin(); it != earlier.end();) {
        const RecordedAccess& old = *it;
        auto seen = observed_.find(old.stream);
        if (seen != observed_.end() && seen->second >= old.ticket) {
            it = earlier.erase(it);  // over before the host went on: ordered before all to come
            continue;
        }
        // Streams of two devices share no clock: such pairs are not judged, and neither speaks
        // for the other.
        const bool comparable = old.pool == access.pool;
        const bool ordered =
            comparable && (old.stream == access.stream || clock.at(old.stream) >= old.ticket);
        const bool overlaps = old.begin < access.end && access.begin < old.end;
        if (comparable && !ordered && overlaps && (old.writes() || access.writes()) &&
            std::find(reported->begin(), reported->end(), old.operation.get()) == reported->end()) {
            reported->push_back(old.operation.get());
            const char* hazard = !old.writes()     ? "write-after-read"
                                 : access.writes() ? "write-after-write"
                                                   : "read-after-write";
            findings->push_back(Finding{hazard, std::max(old.begin, access.begin),
                                        std::min(old.end, access.end), base, withoutAccesses(block),
                                        old.operation, old.mode, access.operation, access.mode,
                                        old.extentAssumed || access.extentAssumed});
        }
        // What the new access covers and follows speaks for the old one from now on: any later
        // operation unordered with the old one is unordered with the new one too.
        const bool covered = old.begin >= access.begin && old.end <= access.end;
        if (ordered && covered && (access.writes() || !old.writes())) {
            it = earlier.erase(it);
            continue;
        }
        ++it;
    }
    if (earlier.size() >= kAccessesPerBlock) earlier.erase(earlier.begin());
    earlier.push_back(access);
}

// A race with the default stream on one side is what a program written for CUDA's legacy default
// stream meets here, where the default stream is an ordinary one: say so, and name the switch.
std::string legacyDefaultStreamHint(const Finding& finding) {
    if (legacyDefaultStream() ||
        !(finding.earlier->defaultStream || finding.later->defaultStream)) {
        return {};
    }
    return "  the default stream is an ordinary stream here: if the program assumed CUDA's legacy "
           "default stream (work on it waits for the blocking streams, and they for it), set "
           "POLYHAL_DEFAULT_STREAM=legacy or call halSetDefaultStreamMode("
           "HAL_DEFAULT_STREAM_LEGACY)\n";
}

void reportFinding(const Finding& finding) {
    const Block& block = finding.block;
    if (finding.hazard == nullptr) {
        check::report(
            "race",
            fmt::format("use after free: {} uses {:#x}, in {} allocated by {}, which {} "
                        "freed\n  the use:\n{}  freed at:\n{}  allocated at:\n{}",
                        operationName(*finding.later), finding.from, blockName(block, finding.base),
                        block.allocatedBy, block.freedBy, describe(finding.later->site, "    "),
                        describe(block.freeSite, "    "), describe(block.allocationSite, "    ")));
        return;
    }
    // Kernels that split one allocation among streams are told apart only by their extents.
    const char* extentNote =
        finding.extentAssumed
            ? "  note: a kernel pointer argument without a declared extent is taken to reach the "
              "end of its allocation; if the kernels touch separate slices, declare each "
              "argument's extent (halLaunchKernelWithUses, halKernelArgUse.bytes)\n"
            : "";
    check::report(
        "race",
        fmt::format("{} race on {} bytes [{:#x}, {:#x}) of {} allocated by {}\n"
                    "  earlier: {} ({})\n{}"
                    "  later:   {} ({}), not ordered after the earlier one (no event "
                    "wait orders the streams, no host synchronisation between them)\n"
                    "{}{}{}  the block was allocated at:\n{}",
                    finding.hazard, finding.to - finding.from, finding.from, finding.to,
                    blockName(block, finding.base), block.allocatedBy,
                    operationName(*finding.earlier), modeName(finding.earlierMode),
                    describe(finding.earlier->site, "    "), operationName(*finding.later),
                    modeName(finding.laterMode), describe(finding.later->site, "    "), extentNote,
                    legacyDefaultStreamHint(finding), describe(block.allocationSite, "    ")));
}

bool Detector::touchesTracked(const Access* accesses, size_t count) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < count; ++i) {
        if (find(reinterpret_cast<uintptr_t>(accesses[i].pointer)) != blocks_.end()) return true;
    }
    return false;
}

std::vector<std::string> Detector::liveBlocks() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> live;
    for (const auto& [base, block] : blocks_) {
        if (block.freedBy != nullptr) continue;
        live.push_back(fmt::format("{} allocated by {} at:\n{}", blockName(block, base),
                                   block.allocatedBy,
                                   check::describe(block.allocationSite, "    ")));
    }
    return live;
}

}  // namespace

std::vector<std::string> liveBlocks() {
    return detector().liveBlocks();
}

namespace {

// The clock of the calling thread's operation, reused by every operation of this thread (no
// allocation in steady state). Taken outside the detector's lock, the pool calls into the
// detector (segmentReleased) with its own locks held; and before the operation is enqueued
// (beforeSubmit), as recordEvent does: a wait another thread adds to the stream meanwhile does
// not order the operation.
thread_local allocator::VectorClock t_clock;

// Runs a hook's work: out of host memory while checking, the check is skipped (the operation
// itself went ahead).
template <typename Work>
void guarded(Work&& work) noexcept {
    try {
        work();
    } catch (...) {
    }
}

// The finding's operation as the detector records it, with its call site: taken before the
// detector's lock, as capturing a backtrace takes a while.
std::shared_ptr<const Operation> describeOperation(halStream_t* stream, const char* name,
                                                   uint64_t ticket) {
    return std::make_shared<const Operation>(Operation{
        name, stream, stream->device->defaultStream.load(std::memory_order_relaxed) == stream,
        stream->device->ordinal, ticket, captureCallSite()});
}

// Checks and records the accesses of `name` on `stream`, whose clock is in t_clock; reports
// what it finds once the detector's lock is released.
void record(halStream_t* stream, const char* name, uint64_t ticket, const Access* accesses,
            size_t count) {
    if (count == 0 || !detector().touchesTracked(accesses, count)) return;
    std::vector<Finding> findings;
    detector().submitted(stream, describeOperation(stream, name, ticket), t_clock, accesses, count,
                         &findings);
    for (const Finding& finding : findings) reportFinding(finding);
}

}  // namespace

size_t kernelAccesses(const halKernelArg* args, ArgUses uses, uint32_t numArgs, Access* accesses) {
    size_t count = 0;
    for (uint32_t i = 0; i < numArgs; ++i) {
        const uint32_t mode = uses.mode(i);
        if (args[i].size != sizeof(void*) || mode == HAL_KERNEL_ARG_NO_ACCESS) continue;
        const void* pointer = nullptr;
        std::memcpy(&pointer, args[i].value, sizeof pointer);
        accesses[count++] = Access{pointer, uses.bytes(i),
                                   mode == HAL_KERNEL_ARG_READ_ONLY    ? AccessMode::kRead
                                   : mode == HAL_KERNEL_ARG_WRITE_ONLY ? AccessMode::kWrite
                                                                       : AccessMode::kReadWrite};
    }
    return count;
}

namespace slow {

void beforeSubmit(halStream_t* stream) noexcept {
    guarded([&] { stream->device->pool->captureInto(stream->poolStream, &t_clock); });
}

void submitted(halStream_t* stream, const char* operation, const Access* accesses, size_t count,
               uint64_t ticket) noexcept {
    guarded([&] { record(stream, operation, ticket, accesses, count); });
}

void inStreamOrder(halStream_t* stream, const char* operation, const Access& access) noexcept {
    guarded([&] {
        stream->device->pool->captureInto(stream->poolStream, &t_clock);
        // The stream's last operation: what comes after it on the stream follows the access,
        // what another stream orders after it does too.
        record(stream, operation, t_clock.at(stream->poolStream), &access, 1);
    });
}

void hostObserved(const allocator::VectorClock& reached) noexcept {
    guarded([&] { detector().hostObserved(reached); });
}

void allocated(Device* device, const void* pointer, size_t size, const char* operation) noexcept {
    guarded([&] {
        detector().allocated(device, reinterpret_cast<uintptr_t>(pointer), size, operation,
                             captureCallSite());
    });
}

void freed(Device* device, const void* pointer, const char* operation) noexcept {
    guarded([&] {
        detector().freed(device, reinterpret_cast<uintptr_t>(pointer), operation,
                         captureCallSite());
    });
}

void segmentReserved(const void* base, size_t size) noexcept {
    guarded([&] { detector().segmentReserved(reinterpret_cast<uintptr_t>(base), size); });
}

void segmentReleased(const void* base) noexcept {
    guarded([&] { detector().segmentReleased(reinterpret_cast<uintptr_t>(base)); });
}

}  // namespace slow

}  // namespace polyhal::check
