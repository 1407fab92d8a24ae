// Implements block_pool.hpp.
#include "engine/block_pool.hpp"

#include <climits>
#include <new>

namespace polyhal::cpu {

namespace {

// Claims and runs blocks of `job` until none is left. A helper (`yieldToUrgent`) also stops
// when a more urgent launch is waiting, and goes to that one.
void runBlocks(BlockJob& job, ScratchBuffer& scratch, const std::atomic<int>* yieldToUrgent) {
    while (!job.failed.load(std::memory_order_relaxed)) {
        if (yieldToUrgent != nullptr &&
            yieldToUrgent->load(std::memory_order_relaxed) < job.priority) {
            return;
        }
        const uint64_t index = job.nextBlock.fetch_add(1, std::memory_order_relaxed);
        if (index >= job.blockCount) return;
        runBlock(job, index, scratch);
    }
}

}  // namespace

unsigned BlockPool::defaultHelperCount() {
    const unsigned threads = std::thread::hardware_concurrency();
    return threads > 1 ? threads - 1 : 0;
}

BlockPool::BlockPool(unsigned helperCount) {
    publishQueueState();
    helpers_.reserve(helperCount);
    try {
        for (unsigned i = 0; i < helperCount; ++i) helpers_.emplace_back([this] { helperMain(); });
    } catch (...) {
        stopHelpers();  // those already started
        throw;
    }
}

BlockPool::~BlockPool() {
    stopHelpers();
}

void BlockPool::stopHelpers() {
    stopping_.store(true, std::memory_order_seq_cst);
    work_.notifyAll();
    for (std::thread& helper : helpers_) helper.join();
    helpers_.clear();
}

void BlockPool::publishQueueState() {
    queued_.store(queue_.size(), std::memory_order_seq_cst);
    frontPriority_.store(queue_.frontPriority(), std::memory_order_relaxed);
}

void BlockPool::run(BlockJob& job, ScratchBuffer& scratch) {
    bool shared = job.blockCount > 1 && !helpers_.empty();
    if (shared) {
        std::lock_guard<std::mutex> lock(mutex_);
        try {
            queue_.push(&job, job.priority);
            publishQueueState();
        } catch (const std::bad_alloc&) {
            shared = false;  // no room to advertise the job: the caller runs it alone
        }
    }
    if (shared) work_.notifyAll();

    runBlocks(job, scratch, nullptr);
    if (!shared) return;

    {
        std::lock_guard<std::mutex> lock(mutex_);
        queue_.remove(&job);
        publishQueueState();
    }
    // Helpers entered the job only while it was queued; wait for them to leave it. Their
    // seq_cst decrements also publish the effects of the blocks they ran.
    finished_.await([&job] { return job.activeHelpers.load(std::memory_order_seq_cst) == 0; },
                    WaitPolicy::kSpinThenSleep);
}

BlockJob* BlockPool::enterMostUrgent() {
    std::lock_guard<std::mutex> lock(mutex_);
    while (BlockJob* job = queue_.front()) {
        if (!job->exhausted()) {
            job->activeHelpers.fetch_add(1, std::memory_order_relaxed);
            return job;
        }
        queue_.remove(job);
        publishQueueState();
    }
    return nullptr;
}

void BlockPool::helperMain() {
    ScratchBuffer scratch;
    for (;;) {
        work_.await(
            [this] {
                return queued_.load(std::memory_order_seq_cst) != 0 ||
                       stopping_.load(std::memory_order_seq_cst);
            },
            WaitPolicy::kSpinThenSleep);
        if (stopping_.load(std::memory_order_seq_cst)) return;
        BlockJob* job = enterMostUrgent();
        if (job == nullptr) continue;
        runBlocks(*job, scratch, &frontPriority_);
        // The job may be gone as soon as the count drops: touch only the pool afterwards.
        job->activeHelpers.fetch_sub(1, std::memory_order_seq_cst);
        finished_.notifyAll();
    }
}

}  // namespace polyhal::cpu
