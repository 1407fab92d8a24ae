#include "cts.hpp"

#include <cstdint>
#include <cstring>

namespace cts {

std::string describe(halError error) {
    const std::string message = halGetLastErrorMessage();
    if (error == HAL_SUCCESS) return halGetErrorName(error);
    return std::string(halGetErrorName(error)) + ": " + message;
}

halDeviceProperties deviceProperties() {
    int device = 0;
    HAL_REQUIRE_OK(halGetDevice(&device));
    halDeviceProperties props;
    std::memset(&props, 0, sizeof props);
    props.size = sizeof props;
    HAL_REQUIRE_OK(halGetDeviceProperties(device, &props));
    return props;
}

std::string backendName() {
    const char* name = nullptr;
    HAL_REQUIRE_OK(halGetBackendName(&name));
    return name;
}

void skip(const std::string& reason) {
    WARN("skipped: " << reason);
}

bool lacksCapability(uint64_t capability, const char* capabilityName) {
    if ((deviceProperties().capabilities & capability) != 0) return false;
    skip("backend '" + backendName() + "' lacks " + capabilityName);
    return true;
}

Gate::~Gate() {
    open();
    if (enqueued_.load()) {
        // If the backend is broken the stream may never reach the host function; the bounded
        // wait keeps the suite moving (the test has failed already in that case).
        waitUntil([this] { return finished(); });
    }
}

void Gate::enqueue(halStream stream) {
    HAL_REQUIRE_OK(halLaunchHostFunc(stream, &Gate::hold, this));
    enqueued_.store(true);
}

void Gate::hold(void* opaque) {
    auto* gate = static_cast<Gate*>(opaque);
    gate->entered_.store(true);
    if (!waitUntil([gate] { return gate->open_.load(); })) gate->timedOut_.store(true);
    gate->finished_.store(true);
}

void enqueueSleep(halStream stream, std::chrono::milliseconds duration) {
    // The duration travels in the pointer itself, so nothing has to outlive this call.
    HAL_REQUIRE_OK(halLaunchHostFunc(
        stream,
        [](void* ms) {
            std::this_thread::sleep_for(std::chrono::milliseconds(reinterpret_cast<uintptr_t>(ms)));
        },
        reinterpret_cast<void*>(static_cast<uintptr_t>(duration.count()))));
}

void enqueueSet(halStream stream, std::atomic<bool>* flag) {
    HAL_REQUIRE_OK(halLaunchHostFunc(
        stream, [](void* f) { static_cast<std::atomic<bool>*>(f)->store(true); }, flag));
}

Stream::Stream() {
    HAL_REQUIRE_OK(halCreateStream(&stream_));
}

Stream::Stream(int priority, uint32_t flags) {
    HAL_REQUIRE_OK(halCreateStreamWithConfig(&stream_, priority, flags));
}

Event::Event(uint32_t flags) {
    HAL_REQUIRE_OK(halCreateEventWithFlag(&event_, flags));
}

DeviceMemory::DeviceMemory(size_t bytes) : size_(bytes) {
    HAL_REQUIRE_OK(halMalloc(&ptr_, bytes));
}

HostMemory::HostMemory(size_t bytes) : size_(bytes) {
    HAL_REQUIRE_OK(halMallocHost(&ptr_, bytes));
}

}  // namespace cts
