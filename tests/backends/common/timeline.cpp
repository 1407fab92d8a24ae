#include "timeline.hpp"

#include "rules.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>

namespace polyhal::doubles {
namespace {

// The one thread that runs every stream's host functions, one at a time.
class HostFunctionThread {
  public:
    static HostFunctionThread& instance() {
        // Never destroyed: streams may still submit while the process exits.
        static auto* thread = new HostFunctionThread();
        return *thread;
    }

    bool isCurrentThread() const noexcept { return id_.load() == std::this_thread::get_id(); }

    // Runs `call` on the thread and returns once it has returned.
    void run(const std::function<void()>& call) {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return pending_ == nullptr; });
        pending_ = &call;
        changed_.notify_all();
        changed_.wait(lock, [&] { return pending_ != &call; });
    }

  private:
    HostFunctionThread() : thread_([this] { loop(); }) { thread_.detach(); }

    void loop() {
        id_.store(std::this_thread::get_id());
        std::unique_lock<std::mutex> lock(mutex_);
        for (;;) {
            changed_.wait(lock, [&] { return pending_ != nullptr; });
            const std::function<void()>* call = pending_;
            lock.unlock();
            (*call)();
            lock.lock();
            pending_ = nullptr;
            changed_.notify_all();
        }
    }

    std::mutex mutex_;
    std::condition_variable changed_;
    const std::function<void()>* pending_ = nullptr;
    // Its id, compared rather than marked in thread_local storage, which LeakSanitizer's tracer
    // fails to read in a dlopen'ed library at exit.
    std::atomic<std::thread::id> id_{};
    std::thread thread_;
};

}  // namespace

bool onHostFunctionThread() noexcept {
    return HostFunctionThread::instance().isCurrentThread();
}

void runOnHostFunctionThread(void (*fn)(void*), void* userData) {
    HostFunctionThread::instance().run([&] { fn(userData); });
}

void Marker::complete() {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
    time_ = std::chrono::steady_clock::now();
    reached_.notify_all();
}

bool Marker::done() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_;
}

void Marker::wait() const {
    std::unique_lock<std::mutex> lock(mutex_);
    reached_.wait(lock, [&] { return done_; });
}

std::chrono::steady_clock::time_point Marker::time() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return time_;
}

uint64_t HardwareQueue::ticket() {
    std::lock_guard<std::mutex> lock(mutex_);
    return next_++;
}

void HardwareQueue::waitForTurn(uint64_t ticket) {
    std::unique_lock<std::mutex> lock(mutex_);
    served_.wait(lock, [&] { return serving_ == ticket; });
}

void HardwareQueue::finishTurn() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++serving_;
    served_.notify_all();
}

// A queue's streams are the references to it beyond the pool's own.
std::shared_ptr<HardwareQueue> HardwareQueues::acquire() {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto unused = std::find_if(queues_.begin(), queues_.end(),
                                     [](const auto& queue) { return queue.use_count() == 1; });
    if (unused != queues_.end()) return *unused;
    if (queues_.size() < limit_) return queues_.emplace_back(std::make_shared<HardwareQueue>());
    return *std::min_element(queues_.begin(), queues_.end(), [](const auto& a, const auto& b) {
        return a.use_count() < b.use_count();
    });
}

size_t hardwareQueueLimit(const char* variable, size_t fallback) {
    const char* value = std::getenv(variable);
    const long long limit = value != nullptr ? std::atoll(value) : 0;
    return limit > 0 ? static_cast<size_t>(limit) : fallback;
}

Stream::Stream() : Stream(std::make_shared<HardwareQueue>()) {}

Stream::Stream(std::shared_ptr<HardwareQueue> queue)
    : hardware_(std::move(queue)), worker_([this] { run(); }) {}

Stream::~Stream() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        changed_.notify_all();
    }
    worker_.join();
}

// The ticket is taken under the stream's lock, so the stream's own work keeps its order on the
// hardware queue.
void Stream::submit(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.emplace_back(hardware_->ticket(), std::move(work));
    changed_.notify_all();
}

std::shared_ptr<Marker> Stream::mark() {
    auto marker = std::make_shared<Marker>();
    submit([marker] { marker->complete(); });
    return marker;
}

void Stream::waitFor(std::shared_ptr<Marker> marker) {
    submit([marker = std::move(marker)] { marker->wait(); });
}

void Stream::submitHostFunction(void (*fn)(void*), void* userData) {
    submit([fn, userData] { runOnHostFunctionThread(fn, userData); });
}

bool Stream::idle() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return queue_.empty() && running_ == 0;
}

void Stream::synchronize() const {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [&] { return queue_.empty() && running_ == 0; });
}

void Stream::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;
        auto [ticket, work] = std::move(queue_.front());
        queue_.pop_front();
        ++running_;
        lock.unlock();
        hardware_->waitForTurn(ticket);
        work();
        hardware_->finishTurn();
        lock.lock();
        --running_;
        changed_.notify_all();
    }
}

}  // namespace polyhal::doubles
