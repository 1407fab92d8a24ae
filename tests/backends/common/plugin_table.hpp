// A plugin's dispatch table, loaded and initialised as the core does it, for tests that call its
// entries directly: the ones the core does not reach on its own (a device's close, a second
// device of the tests' choosing).
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_PLUGIN_TABLE_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_PLUGIN_TABLE_HPP_

#include <dlfcn.h>
#include <polyhal/plugin.h>

#include <catch2/catch.hpp>
#include <string>

namespace polyhal::doubles {

// What the plugin last reported through the host's setError, on this thread.
inline std::string& lastPluginError() {
    static thread_local std::string message;
    return message;
}

#define REQUIRE_PLUGIN_OK(call)                                                          \
    do {                                                                                 \
        const halError result_ = (call);                                                 \
        INFO(#call << " -> " << result_ << ": " << polyhal::doubles::lastPluginError()); \
        REQUIRE(result_ == HAL_SUCCESS);                                                 \
    } while (0)

// The table of the plugin at `path`, loaded once per process (a plugin is initialised once): one
// plugin per test program.
inline const halPluginDispatchTable& pluginTable(const char* path) {
    static const halPluginHost host = {
        sizeof(halPluginHost),
        HAL_PLUGIN_ABI_VERSION,
        [](halLogLevel, const char*) {},
        [](halLogLevel) { return 0; },
        [](const char* message) { lastPluginError() = message; },
    };
    static const halPluginDispatchTable table = [path] {
        halPluginDispatchTable loaded{};
        void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (library == nullptr) FAIL(dlerror());
        auto entry = reinterpret_cast<halPluginEntryFn>(dlsym(library, HAL_PLUGIN_ENTRY_NAME));
        REQUIRE(entry != nullptr);
        loaded.size = sizeof loaded;
        REQUIRE_PLUGIN_OK(entry(HAL_PLUGIN_ABI_VERSION, &host, &loaded));
        REQUIRE_PLUGIN_OK(loaded.initialize());
        return loaded;
    }();
    static const std::string loadedPath = path;
    REQUIRE(loadedPath == path);
    return table;
}

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_PLUGIN_TABLE_HPP_
