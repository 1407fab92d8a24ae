#include "backend_fixture.hpp"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <iterator>

#include "cpu_backend.h"

namespace cpu_tests {

namespace {

thread_local std::string lastMessage;

void hostLog(halLogLevel, const char*) {}
int hostShouldLog(halLogLevel) {
    return 0;
}
void hostSetErrorMessage(const char* message) {
    lastMessage = message;
}

halPluginDispatchTable negotiated() {
    halPluginDispatchTable table = {};
    table.size = sizeof table;
    const halError status = polyhalCpuGetDispatchTable(HAL_PLUGIN_ABI_VERSION, &testHost(), &table);
    if (status != HAL_SUCCESS) FAIL("negotiating the CPU dispatch table: " << lastError());
    return table;
}

}  // namespace

const halPluginHost& testHost() {
    static const halPluginHost host = {sizeof(halPluginHost), HAL_PLUGIN_ABI_VERSION, hostLog,
                                       hostShouldLog, hostSetErrorMessage};
    return host;
}

std::string lastError() {
    return lastMessage;
}

const halPluginDispatchTable& table() {
    static const halPluginDispatchTable table = negotiated();
    return table;
}

const halPluginDispatchTable& backend() {
    static const bool initialized = [] {
        const halError status = table().initialize();
        if (status != HAL_SUCCESS) FAIL("initialize: " << lastError());
        return true;
    }();
    (void)initialized;
    return table();
}

halPluginDevice device0() {
    static const halPluginDevice device = [] {
        halPluginDevice opened = nullptr;
        if (backend().deviceOpen(0, &opened) != HAL_SUCCESS) FAIL("deviceOpen: " << lastError());
        return opened;
    }();
    return device;
}

std::vector<unsigned char> readFile(const char* path) {
    std::ifstream file(path, std::ios::binary);
    REQUIRE(file.good());
    return std::vector<unsigned char>(std::istreambuf_iterator<char>(file), {});
}

Gate::~Gate() {
    open();
    std::unique_lock<std::mutex> lock(mutex_);
    left_.wait(lock, [this] { return waiting_ == 0; });
}

void Gate::open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    opened_.notify_all();
}

void Gate::wait(void* gate) {
    Gate& self = *static_cast<Gate*>(gate);
    std::unique_lock<std::mutex> lock(self.mutex_);
    ++self.waiting_;
    if (!self.opened_.wait_for(lock, std::chrono::seconds(60), [&] { return self.open_; })) {
        self.timedOut_ = true;
    }
    --self.waiting_;
    self.left_.notify_all();
}

bool Gate::timedOut() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return timedOut_;
}

Stream::Stream(int priority) {
    REQUIRE(backend().streamCreate(device0(), priority, 0, &stream_) == HAL_SUCCESS);
}

Stream::~Stream() {
    if (stream_ != nullptr) backend().streamDestroy(stream_);
}

void Stream::destroy() {
    REQUIRE(backend().streamDestroy(stream_) == HAL_SUCCESS);
    stream_ = nullptr;
}

Event::Event(uint32_t flags) {
    REQUIRE(backend().eventCreate(device0(), flags, &event_) == HAL_SUCCESS);
}

Event::~Event() {
    if (event_ != nullptr) backend().eventDestroy(event_);
}

void Event::destroy() {
    REQUIRE(backend().eventDestroy(event_) == HAL_SUCCESS);
    event_ = nullptr;
}

}  // namespace cpu_tests
