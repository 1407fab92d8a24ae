#include "plugin_fixture.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace opencl_test {

namespace {

thread_local std::string tLastError;

void hostLog(halLogLevel level, const char* message) {
    if (level >= HAL_LOG_WARN) std::fprintf(stderr, "[opencl plugin] %s\n", message);
}
int hostShouldLog(halLogLevel level) {
    return level >= HAL_LOG_WARN;
}
void hostSetErrorMessage(const char* message) {
    tLastError = message;
}

const halPluginHost kHost = {sizeof(halPluginHost), HAL_PLUGIN_ABI_VERSION, hostLog, hostShouldLog,
                             hostSetErrorMessage};

void check(halError status, const char* what) {
    if (status != HAL_SUCCESS) {
        throw std::runtime_error(std::string(what) + " failed (" + std::to_string(status) +
                                 "): " + tLastError);
    }
}

// Loaded on first use and, like the core's plugins, never unloaded; a failure makes every test
// that needs the plugin fail with the reason.
struct NegotiatedPlugin {
    NegotiatedPlugin() {
        void* library = dlopen(POLYHAL_OPENCL_PLUGIN, RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) throw std::runtime_error(std::string("dlopen: ") + dlerror());
        entry = reinterpret_cast<halPluginEntryFn>(dlsym(library, HAL_PLUGIN_ENTRY_NAME));
        if (entry == nullptr) throw std::runtime_error(std::string("dlsym: ") + dlerror());
        table.size = sizeof table;
        check(entry(HAL_PLUGIN_ABI_VERSION, &kHost, &table), HAL_PLUGIN_ENTRY_NAME);
    }

    halPluginEntryFn entry = nullptr;
    halPluginDispatchTable table{};
};

NegotiatedPlugin& negotiatedPlugin() {
    static NegotiatedPlugin instance;
    return instance;
}

halPluginDevice openedDevice() {
    static const halPluginDevice device = [] {
        check(negotiated().initialize(), "initialize");
        halPluginDevice opened = nullptr;
        check(negotiated().deviceOpen(0, &opened), "deviceOpen(0)");
        return opened;
    }();
    return device;
}

}  // namespace

const halPluginDispatchTable& negotiated() {
    return negotiatedPlugin().table;
}

const halPluginDispatchTable& plugin() {
    openedDevice();
    return negotiated();
}

halPluginDevice device() {
    return openedDevice();
}
halPluginEntryFn entryPoint() {
    return negotiatedPlugin().entry;
}
const halPluginHost& testHost() {
    return kHost;
}
std::string lastError() {
    return tLastError;
}

cl_device_id clDevice() {
    Stream stream;
    void* queue = nullptr;
    REQUIRE_OK(plugin().streamGetNativeHandle(stream.get(), &queue));
    cl_device_id id = nullptr;
    REQUIRE(clGetCommandQueueInfo(static_cast<cl_command_queue>(queue), CL_QUEUE_DEVICE, sizeof id,
                                  &id, nullptr) == CL_SUCCESS);
    return id;
}

Stream::Stream(int priority) {
    REQUIRE_OK(plugin().streamCreate(device(), priority, 0, &handle_));
}

Stream::~Stream() {
    destroy();
}

void Stream::synchronize() const {
    REQUIRE_OK(plugin().streamSynchronize(handle_));
}

void Stream::destroy() {
    if (handle_ != nullptr) plugin().streamDestroy(handle_);
    handle_ = nullptr;
}

Event::Event() {
    REQUIRE_OK(plugin().eventCreate(device(), 0, &handle_));
}

Event::~Event() {
    destroy();
}

void Event::destroy() {
    if (handle_ != nullptr) plugin().eventDestroy(handle_);
    handle_ = nullptr;
}

DeviceMemory::DeviceMemory(size_t size) {
    REQUIRE_OK(plugin().memAllocDevice(device(), size, &ptr_));
}

DeviceMemory::~DeviceMemory() {
    if (ptr_ != nullptr) plugin().memFreeDevice(device(), ptr_);
}

Gate::~Gate() {
    open();
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return waiting_ == 0; });
}

void Gate::block(const Stream& stream) {
    {
        std::lock_guard lock(mutex_);
        ++waiting_;
    }
    const halError status = plugin().launchHostFunc(stream.get(), &Gate::wait, this);
    if (status != HAL_SUCCESS) {
        std::lock_guard lock(mutex_);
        --waiting_;
    }
    REQUIRE_OK(status);
}

void Gate::open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    changed_.notify_all();
}

void Gate::wait(void* gate) {
    auto* self = static_cast<Gate*>(gate);
    std::unique_lock lock(self->mutex_);
    self->changed_.wait(lock, [self] { return self->open_; });
    --self->waiting_;
    self->changed_.notify_all();
}

halPluginModule ctsModule() {
    static halPluginModule module = [] {
        std::ifstream file(POLYHAL_OPENCL_CTS_KERNELS);
        std::stringstream source;
        source << file.rdbuf();
        const std::string image = source.str();
        REQUIRE(!image.empty());
        halPluginModule loaded = nullptr;
        REQUIRE_OK(plugin().moduleLoadData(device(), image.data(), image.size(), &loaded));
        return loaded;
    }();
    return module;
}

halPluginFunction ctsKernel(const char* name) {
    halPluginFunction function = nullptr;
    REQUIRE_OK(plugin().moduleGetFunction(ctsModule(), name, &function));
    return function;
}

}  // namespace opencl_test
