// Each GPU plugin, loaded and initialised as the core does it, on whatever machine runs the test.
#include <dlfcn.h>
#include <polyhal/plugin.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

namespace {

struct GpuPlugin {
    const char* name;
    const char* path;
    std::vector<const char*> vendorLibraries;  // what the plugin opens, in its order
    // How the message starts when the library loads but the vendor's runtime finds no device.
    std::vector<const char*> vendorRefusals;
};

std::vector<GpuPlugin> builtPlugins() {
    std::vector<GpuPlugin> plugins;
#ifdef POLYHAL_CUDA_PLUGIN
    plugins.push_back({"cuda",
                       POLYHAL_CUDA_PLUGIN,
                       {"libcuda.so.1"},
                       {"cuInit: CUDA_ERROR_", "cuDeviceGetCount: "}});
#endif
#ifdef POLYHAL_HIP_PLUGIN
    plugins.push_back({"hip",
                       POLYHAL_HIP_PLUGIN,
                       {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"},
                       {"hipInit: hipError", "hipGetDeviceCount: "}});
#endif
    return plugins;
}

thread_local std::string lastErrorMessage;

const halPluginHost kHost = {
    sizeof(halPluginHost),
    HAL_PLUGIN_ABI_VERSION,
    [](halLogLevel, const char*) {},
    [](halLogLevel) { return 0; },
    [](const char* message) { lastErrorMessage = message; },
};

// A plugin loaded once per process, its table negotiated and initialize() called, as the core
// does; later test cases see the same outcome.
struct LoadedPlugin {
    std::string loadError;
    halError negotiated = HAL_ERROR_UNKNOWN;
    halPluginDispatchTable table{};
    halError initialized = HAL_ERROR_UNKNOWN;
    std::string initializeMessage;
};

const LoadedPlugin& load(const GpuPlugin& plugin) {
    static std::map<std::string, LoadedPlugin> loaded;
    auto found = loaded.find(plugin.name);
    if (found != loaded.end()) return found->second;
    LoadedPlugin& result = loaded[plugin.name];
    void* library = dlopen(plugin.path, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
        result.loadError = dlerror();
        return result;
    }
    auto entry = reinterpret_cast<halPluginEntryFn>(dlsym(library, HAL_PLUGIN_ENTRY_NAME));
    if (entry == nullptr) {
        result.loadError = dlerror();
        return result;
    }
    result.table.size = sizeof result.table;
    result.negotiated = entry(HAL_PLUGIN_ABI_VERSION, &kHost, &result.table);
    if (result.negotiated != HAL_SUCCESS || result.table.initialize == nullptr) return result;
    lastErrorMessage.clear();
    result.initialized = result.table.initialize();
    result.initializeMessage = lastErrorMessage;
    return result;
}

// The dlerror() text of each vendor library that does not load here, or "" when one loads.
std::string vendorLibraryErrors(const GpuPlugin& plugin) {
    std::string errors;
    for (const char* name : plugin.vendorLibraries) {
        if (void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
            dlclose(library);
            return {};
        }
        errors += errors.empty() ? "" : "; ";
        errors += dlerror();
    }
    return errors;
}

}  // namespace

TEST_CASE("a GPU plugin exports a complete dispatch table", "[gpu][plugin]") {
    for (const GpuPlugin& plugin : builtPlugins()) {
        DYNAMIC_SECTION(plugin.name) {
            const LoadedPlugin& loaded = load(plugin);
            INFO(loaded.loadError);
            REQUIRE(loaded.loadError.empty());
            REQUIRE(loaded.negotiated == HAL_SUCCESS);
            const halPluginDispatchTable& table = loaded.table;
            CHECK(table.size == sizeof(halPluginDispatchTable));
            CHECK(table.abiVersion == HAL_PLUGIN_ABI_VERSION);
            CHECK(std::string(table.name) == plugin.name);
            // Every entry, the optional ones too: the plugin implements all of them.
            const std::vector<std::pair<const char*, bool>> entries = {
                {"initialize", table.initialize != nullptr},
                {"deviceGetCount", table.deviceGetCount != nullptr},
                {"deviceOpen", table.deviceOpen != nullptr},
                {"deviceClose", table.deviceClose != nullptr},
                {"deviceGetInfo", table.deviceGetInfo != nullptr},
                {"deviceSynchronize", table.deviceSynchronize != nullptr},
                {"streamCreate", table.streamCreate != nullptr},
                {"streamDestroy", table.streamDestroy != nullptr},
                {"streamSynchronize", table.streamSynchronize != nullptr},
                {"streamQuery", table.streamQuery != nullptr},
                {"streamWaitEvent", table.streamWaitEvent != nullptr},
                {"eventCreate", table.eventCreate != nullptr},
                {"eventDestroy", table.eventDestroy != nullptr},
                {"eventRecord", table.eventRecord != nullptr},
                {"eventQuery", table.eventQuery != nullptr},
                {"eventSynchronize", table.eventSynchronize != nullptr},
                {"eventElapsedTime", table.eventElapsedTime != nullptr},
                {"memAllocDevice", table.memAllocDevice != nullptr},
                {"memFreeDevice", table.memFreeDevice != nullptr},
                {"memAllocHost", table.memAllocHost != nullptr},
                {"memFreeHost", table.memFreeHost != nullptr},
                {"memcpyAsync", table.memcpyAsync != nullptr},
                {"memsetAsync", table.memsetAsync != nullptr},
                {"launchHostFunc", table.launchHostFunc != nullptr},
                {"moduleLoadData", table.moduleLoadData != nullptr},
                {"moduleUnload", table.moduleUnload != nullptr},
                {"moduleGetFunction", table.moduleGetFunction != nullptr},
                {"launchKernel", table.launchKernel != nullptr},
                {"streamGetNativeHandle", table.streamGetNativeHandle != nullptr},
            };
            for (const auto& [entry, present] : entries) {
                CAPTURE(entry);
                CHECK(present);
            }
        }
    }
}

TEST_CASE("a GPU plugin without a usable device says why, in the vendor's words", "[gpu][plugin]") {
    for (const GpuPlugin& plugin : builtPlugins()) {
        DYNAMIC_SECTION(plugin.name) {
            const LoadedPlugin& loaded = load(plugin);
            REQUIRE(loaded.negotiated == HAL_SUCCESS);
            if (loaded.initialized == HAL_SUCCESS) {
                WARN(plugin.name << " has a device here; see the next test");
                continue;
            }
            const std::string& message = loaded.initializeMessage;
            INFO("initialize: " << message);
            REQUIRE(loaded.initialized == HAL_ERROR_NO_DEVICE);
            const std::string libraryErrors = vendorLibraryErrors(plugin);
            if (!libraryErrors.empty()) {
                // No vendor library here: the plugin passes on the loader's reason.
                CHECK_THAT(message, Catch::Contains(libraryErrors));
                CHECK_THAT(message, Catch::Contains("was not found"));
            } else {
                // The library loaded, and the runtime refused to start or found no device.
                bool fromVendor = false;
                for (const char* prefix : plugin.vendorRefusals) {
                    fromVendor = fromVendor || message.rfind(prefix, 0) == 0;
                }
                CHECK(fromVendor);
            }
        }
    }
}

TEST_CASE("a GPU plugin with a device describes it", "[gpu][plugin]") {
    for (const GpuPlugin& plugin : builtPlugins()) {
        DYNAMIC_SECTION(plugin.name) {
            const LoadedPlugin& loaded = load(plugin);
            if (loaded.initialized != HAL_SUCCESS) continue;  // no device here
            const halPluginDispatchTable& table = loaded.table;
            int count = 0;
            REQUIRE(table.deviceGetCount(&count) == HAL_SUCCESS);
            REQUIRE(count >= 1);
            halPluginDevice device = nullptr;
            REQUIRE(table.deviceOpen(0, &device) == HAL_SUCCESS);
            halPluginDeviceInfo info{};
            info.size = sizeof info;
            REQUIRE(table.deviceGetInfo(device, &info) == HAL_SUCCESS);
            CHECK(info.size == sizeof info);
            CHECK(info.name[0] != '\0');
            CHECK(info.totalMemory > 0);
            CHECK(info.computeUnits > 0);
            CHECK(info.maxThreadsPerBlock >= 256);
            CHECK(info.maxSharedMemoryPerBlock >= 16 * 1024);
            CHECK(info.leastStreamPriority >= info.greatestStreamPriority);
            const uint64_t always = HAL_DEVICE_CAP_TIMING_EVENTS | HAL_DEVICE_CAP_HOST_FUNCTIONS |
                                    HAL_DEVICE_CAP_KERNELS | HAL_DEVICE_CAP_NATIVE_HANDLES;
            CHECK((info.capabilities & always) == always);
            CHECK((info.capabilities & HAL_DEVICE_CAP_HOST_ACCESSIBLE) == 0);
            table.deviceClose(device);
        }
    }
}
