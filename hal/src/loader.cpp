// Loading backends: POLYHAL_BACKEND by name or path, or automatic selection by priority.
#include "loader.hpp"

#include <polyhal/plugin.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "builtin_backends.hpp"
#include "error.hpp"
#include "log.hpp"
#include "plugin_folders.hpp"
#include "split.hpp"

namespace polyhal {
namespace {

const halPluginHost kHost = {sizeof(halPluginHost), HAL_PLUGIN_ABI_VERSION, pluginLog,
                             pluginShouldLog, setPluginErrorMessage};

std::string versionText(uint32_t version) {
    return fmt::format("{}.{}", HAL_PLUGIN_VERSION_MAJOR(version),
                       HAL_PLUGIN_VERSION_MINOR(version));
}

// The groups of entries (HAL_PLUGIN_ENTRIES' last column) the table has only part of, each as
// "has a, b; lacks c", or "" when every group is whole or absent.
std::string partialGroups(const halPluginDispatchTable& table) {
    struct Group {
        std::string has, lacks;
    };
    Group groups[HAL_PLUGIN_GROUP_COUNT];
#define POLYHAL_NOTE_GROUP_ENTRY(entry, requirement, capabilities, group)                      \
    if ((group) != HAL_PLUGIN_ALONE) {                                                         \
        std::string& names = table.entry != nullptr ? groups[group].has : groups[group].lacks; \
        names += names.empty() ? #entry : ", " #entry;                                         \
    }
    HAL_PLUGIN_ENTRIES(POLYHAL_NOTE_GROUP_ENTRY)
#undef POLYHAL_NOTE_GROUP_ENTRY
    std::string partial;
    for (const Group& group : groups) {
        if (group.has.empty() || group.lacks.empty()) continue;
        partial += (partial.empty() ? "has " : "; has ") + group.has + ", lacks " + group.lacks;
    }
    return partial;
}

// What the plugin says of its backend (backendGetInfo). A plugin that cannot say is still usable
// by name: it is treated as one without the entry.
void readBackendInfo(Backend& backend) {
    backend.info = {};
    backend.info.size = sizeof(halPluginBackendInfo);
    if (backend.plugin.backendGetInfo == nullptr) return;
    const halError status =
        pluginResult(backend.plugin.backendGetInfo(&backend.info), "backendGetInfo");
    if (status != HAL_SUCCESS) {
        logger().warn("{}: backendGetInfo failed ({}); the backend is chosen only by name",
                      backend.location,
                      takePluginErrorMessage(status, backend.name.c_str(), "backendGetInfo"));
        backend.info = {};
        backend.info.size = sizeof(halPluginBackendInfo);
        return;
    }
    backend.info.size = sizeof(halPluginBackendInfo);
    const char* kinds = backend.info.moduleImageKinds;
    if (kinds != nullptr && std::strlen(kinds) >= sizeof(halDeviceProperties{}.moduleImageKinds)) {
        logger().warn(
            "{}: the module image kinds '{}' are longer than the {} characters "
            "halDeviceProperties holds; they are cut",
            backend.location, kinds, sizeof(halDeviceProperties{}.moduleImageKinds) - 1);
    }
}

// Calls the entry point and checks what the plugin filled in.
halError negotiate(Backend& backend, halPluginEntryFn entry) {
    halPluginDispatchTable& table = backend.plugin;
    table = {};
    table.size = sizeof(halPluginDispatchTable);
    const halError status =
        pluginResult(entry(HAL_PLUGIN_ABI_VERSION, &kHost, &table), HAL_PLUGIN_ENTRY_NAME);
    if (status != HAL_SUCCESS) {
        adoptPluginError(status, backend.location.c_str(), HAL_PLUGIN_ENTRY_NAME);
        return fail(
            status == HAL_ERROR_BACKEND_INCOMPATIBLE ? status : HAL_ERROR_BACKEND_INCOMPATIBLE,
            "{} refused plugin ABI {} ({}): {}", backend.location,
            versionText(HAL_PLUGIN_ABI_VERSION), halGetErrorName(status), lastErrorMessage());
    }
    if (HAL_PLUGIN_VERSION_MAJOR(table.abiVersion) != HAL_PLUGIN_ABI_VERSION_MAJOR) {
        return fail(HAL_ERROR_BACKEND_INCOMPATIBLE,
                    "{} speaks plugin ABI {}, this polyhal speaks {} (major versions differ)",
                    backend.location, versionText(table.abiVersion),
                    versionText(HAL_PLUGIN_ABI_VERSION));
    }
    // A plugin of an older minor version fills a prefix; whatever lies past it is absent.
    const size_t filled = std::min(table.size, sizeof(halPluginDispatchTable));
    std::memset(reinterpret_cast<char*>(&table) + filled, 0, sizeof(table) - filled);
    table.size = filled;
    if (filled < offsetof(halPluginDispatchTable, name) + sizeof(table.name) ||
        table.name == nullptr) {
        return fail(HAL_ERROR_BACKEND_INCOMPATIBLE, "{} did not name its backend",
                    backend.location);
    }
#define POLYHAL_CHECK_REQUIRED_ENTRY(entry, requirement, capabilities, group)                     \
    if ((requirement) == HAL_PLUGIN_REQUIRED && table.entry == nullptr) {                         \
        return fail(HAL_ERROR_BACKEND_INCOMPATIBLE,                                               \
                    "{} (plugin ABI {}) lacks the required entry '" #entry "'", backend.location, \
                    versionText(table.abiVersion));                                               \
    }
    HAL_PLUGIN_ENTRIES(POLYHAL_CHECK_REQUIRED_ENTRY)
#undef POLYHAL_CHECK_REQUIRED_ENTRY
    if (const std::string partial = partialGroups(table); !partial.empty()) {
        return fail(HAL_ERROR_BACKEND_INCOMPATIBLE,
                    "{} (plugin ABI {}) implements part of a group of entries that work only "
                    "together (all or none): {}",
                    backend.location, versionText(table.abiVersion), partial);
    }
    backend.name = table.name;
    readBackendInfo(backend);
    if (logger().should_log(spdlog::level::debug)) {
        std::string absent;
#define POLYHAL_NOTE_ABSENT_ENTRY(entry, requirement, capabilities, group) \
    if (table.entry == nullptr) absent += " " #entry;
        HAL_PLUGIN_ENTRIES(POLYHAL_NOTE_ABSENT_ENTRY)
#undef POLYHAL_NOTE_ABSENT_ENTRY
        logger().debug(
            "{}: backend '{}', plugin ABI {}, table of {} bytes (core: {}), automatic "
            "selection priority {}; absent entries:{}",
            backend.location, backend.name, versionText(table.abiVersion), filled,
            sizeof(halPluginDispatchTable), backend.info.selectionPriority,
            absent.empty() ? " none" : absent);
    }
    return HAL_SUCCESS;
}

// Devices one backend may report: more than any machine has (16 GPUs split into 7 instances
// each are 112), few enough that opening them all stays small. A plugin that answers INT_MAX
// would otherwise have the core open devices until memory runs out.
constexpr int kMaxDevicesPerBackend = 1024;

// Starts the vendor runtime and asks how many devices it has: the runtime opens exactly that
// many (Backend::deviceCount), then checks that the answer still holds. A plugin loaded from a
// file is called behind the guard; a built-in backend is compiled with the core, answers only
// halError values, and is called directly, which keeps the guard's cost (about 2 ns a call)
// off the CPU backend's hot paths.
halError initialize(Backend& backend) {
    if (!backend.library) {
        backend.table = backend.plugin;
    } else if (halError status = backend.guard.install(&backend.plugin, &backend.table)) {
        return status;
    }
    halError status = backend.table.initialize();
    if (status != HAL_SUCCESS) {
        return adoptPluginError(status, backend.name.c_str(), "initialize");
    }
    int count = 0;
    status = backend.table.deviceGetCount(&count);
    if (status != HAL_SUCCESS) {
        return adoptPluginError(status, backend.name.c_str(), "deviceGetCount");
    }
    if (count < 0) {
        return fail(HAL_ERROR_BACKEND_INCOMPATIBLE,
                    "{} ({}): deviceGetCount answered {}, a negative number of devices",
                    backend.name, backend.location, count);
    }
    if (count > kMaxDevicesPerBackend) {
        return fail(HAL_ERROR_BACKEND_INCOMPATIBLE,
                    "{} ({}): deviceGetCount answered {} devices, more than the {} a backend "
                    "may have",
                    backend.name, backend.location, count, kMaxDevicesPerBackend);
    }
    if (count == 0) {
        return fail(HAL_ERROR_NO_DEVICE, "{}: the backend loaded but reports no device",
                    backend.name);
    }
    backend.deviceCount = count;
    return HAL_SUCCESS;
}

halError loadBuiltin(const BuiltinBackend& builtin, std::unique_ptr<Backend>* out) {
    auto backend = std::make_unique<Backend>();
    backend->location = "embedded";
    halError status = negotiate(*backend, builtin.entry);
    if (status == HAL_SUCCESS) status = initialize(*backend);
    if (status != HAL_SUCCESS) return status;
    logger().info("using the embedded {} backend", builtin.name);
    *out = std::move(backend);
    return HAL_SUCCESS;
}

// Loads the plugin at `path` and negotiates its table; its runtime is not started yet.
halError openFile(const std::string& path, std::unique_ptr<Backend>* out) {
    auto backend = std::make_unique<Backend>();
    backend->location = path;
    std::string dlError;
    backend->library = DynamicLibrary::open(path, &dlError);
    if (!backend->library) {
        return fail(HAL_ERROR_BACKEND_NOT_FOUND, "cannot load plugin {}: {}", path, dlError);
    }
    auto entry = reinterpret_cast<halPluginEntryFn>(backend->library.symbol(HAL_PLUGIN_ENTRY_NAME));
    if (entry == nullptr) {
        return fail(HAL_ERROR_BACKEND_NOT_FOUND,
                    "{} is not a polyhal plugin: it does not export " HAL_PLUGIN_ENTRY_NAME, path);
    }
    // Once its entry point has run, a plugin stays loaded: it may have started threads or
    // registered callbacks with its vendor runtime, whatever it answers.
    backend->library.keepLoaded();
    if (halError status = negotiate(*backend, entry)) return status;
    *out = std::move(backend);
    return HAL_SUCCESS;
}

// Starts an opened plugin's runtime; it is then in use.
halError start(std::unique_ptr<Backend> backend, std::unique_ptr<Backend>* out) {
    if (halError status = initialize(*backend)) return status;
    logger().info("loaded backend '{}' from {}", backend->name, backend->location);
    *out = std::move(backend);
    return HAL_SUCCESS;
}

halError loadFile(const std::string& path, std::unique_ptr<Backend>* out) {
    std::unique_ptr<Backend> opened;
    if (halError status = openFile(path, &opened)) return status;
    return start(std::move(opened), out);
}

// The backends a user may name, for messages: the built-in ones and the plugins installed.
std::string knownBackends() {
    std::string known;
    for (size_t i = 0; i < kBuiltinBackendCount; ++i) {
        known +=
            fmt::format("{}{} (built in)", known.empty() ? "" : ", ", kBuiltinBackends[i].name);
    }
    for (const PluginFile& plugin : installedPlugins()) {
        if (findBuiltinBackend(plugin.name.c_str()) == nullptr) known += ", " + plugin.name;
    }
    return known;
}

bool isValidName(const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

// What a POLYHAL_BACKEND entry names: a built-in backend, or a plugin file.
struct Named {
    std::string spec;
    const BuiltinBackend* builtin = nullptr;
    std::string path;  // the plugin file, when not built in
};

// Finds what `spec` names, or fails saying why; loads nothing.
halError resolveNamed(const std::string& spec, Named* named) {
    named->spec = spec;
    if (spec.find('/') != std::string::npos) {
        if (spec.front() != '/') {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "POLYHAL_BACKEND entry '{}' is a relative path; give an absolute path",
                        spec);
        }
        if (!isRegularFile(spec)) {
            return fail(HAL_ERROR_BACKEND_NOT_FOUND, "plugin {} does not exist", spec);
        }
        named->path = spec;
        return HAL_SUCCESS;
    }
    if ((named->builtin = findBuiltinBackend(spec.c_str())) != nullptr) return HAL_SUCCESS;
    if (!isValidName(spec)) {
        return fail(HAL_ERROR_BACKEND_NOT_FOUND,
                    "POLYHAL_BACKEND entry '{}' is neither a backend name ([a-z0-9_]+) nor an "
                    "absolute path. Known backends: {}",
                    spec, knownBackends());
    }
    std::string tried;
    named->path = findPlugin(spec, &tried);
    if (named->path.empty()) {
        return fail(HAL_ERROR_BACKEND_NOT_FOUND,
                    "backend '{}' not found. Known backends: {}; a plugin can also be named by "
                    "its absolute path. Tried:{}",
                    spec, knownBackends(), tried);
    }
    return HAL_SUCCESS;
}

// Do `a` and `b` name one backend: the same built-in one, or one plugin file however its path
// is spelled (a symbolic link, "./", "..", a name found in a plugin folder)?
bool sameBackend(const Named& a, const Named& b) {
    if (a.builtin != nullptr || b.builtin != nullptr) return a.builtin == b.builtin;
    return sameFile(a.path, b.path);
}

// No POLYHAL_BACKEND: the plugins in the plugin folders that ask to be chosen automatically
// (halPluginBackendInfo::selectionPriority), highest priority first, as the OpenCL ICD loader
// scans its vendors; the first whose runtime starts with a device wins. Else the first built-in
// backend (the CPU backend).
halError loadAutomatic(std::vector<std::unique_ptr<Backend>>* backends) {
    std::vector<std::unique_ptr<Backend>> candidates;
    for (const PluginFile& plugin : installedPlugins()) {
        std::unique_ptr<Backend> opened;
        if (openFile(plugin.path, &opened) != HAL_SUCCESS) {
            logger().info("automatic selection skips {}: {}", plugin.path, lastErrorMessage());
        } else if (opened->info.selectionPriority == 0) {
            logger().debug("automatic selection skips {}: it is chosen only by name", plugin.path);
        } else {
            candidates.push_back(std::move(opened));
        }
    }
    std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
        return a->info.selectionPriority > b->info.selectionPriority;
    });
    for (auto& candidate : candidates) {
        const std::string name = candidate->name;
        std::unique_ptr<Backend> started;
        if (start(std::move(candidate), &started) == HAL_SUCCESS) {
            backends->push_back(std::move(started));
            return HAL_SUCCESS;
        }
        logger().info("automatic selection skips '{}': {}", name, lastErrorMessage());
    }
    std::unique_ptr<Backend> fallback;
    const halError status = loadBuiltin(kBuiltinBackends[0], &fallback);
    if (status == HAL_SUCCESS) backends->push_back(std::move(fallback));
    return status;
}

}  // namespace

halError loadBackends(std::vector<std::unique_ptr<Backend>>* backends) {
    const char* selection = std::getenv("POLYHAL_BACKEND");
    if (selection == nullptr || *selection == '\0') return loadAutomatic(backends);
    std::vector<Named> seen;
    for (const std::string& spec : split(selection, ',')) {
        if (spec.empty()) {
            return fail(HAL_ERROR_INVALID_VALUE, "POLYHAL_BACKEND='{}' has an empty entry",
                        selection);
        }
        Named named;
        if (halError status = resolveNamed(spec, &named)) return status;
        for (const Named& earlier : seen) {
            if (earlier.spec == spec) {
                return fail(HAL_ERROR_INVALID_VALUE,
                            "POLYHAL_BACKEND='{}' names '{}' twice; a backend is loaded once "
                            "and already serves all of its devices",
                            selection, spec);
            }
            if (sameBackend(earlier, named)) {
                return fail(HAL_ERROR_INVALID_VALUE,
                            "POLYHAL_BACKEND='{}' names one plugin twice: '{}' and '{}' are the "
                            "same file; a backend is loaded once and already serves all of its "
                            "devices",
                            selection, earlier.spec, spec);
            }
        }
        std::unique_ptr<Backend> backend;
        const halError status = named.builtin != nullptr ? loadBuiltin(*named.builtin, &backend)
                                                         : loadFile(named.path, &backend);
        if (status != HAL_SUCCESS) return status;
        backends->push_back(std::move(backend));
        seen.push_back(std::move(named));
    }
    return HAL_SUCCESS;
}

}  // namespace polyhal
