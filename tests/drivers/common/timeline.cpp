#include "timeline.hpp"

#include "rules.hpp"

#include <atomic>

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

Stream::Stream() : worker_([this] { run(); }) {}

Stream::~Stream() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
        changed_.notify_all();
    }
    worker_.join();
}

void Stream::submit(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(work));
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
        std::function<void()> work = std::move(queue_.front());
        queue_.pop_front();
        ++running_;
        lock.unlock();
        work();
        lock.lock();
        --running_;
        changed_.notify_all();
    }
}

}  // namespace polyhal::doubles
