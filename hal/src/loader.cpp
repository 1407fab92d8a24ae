#include "loader.hpp"

#include <polyhal/plugin.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "builtin_backends.hpp"
#include "error.hpp"
#include "log.hpp"

namespace polyhal {
namespace {

constexpr const char* kKnownBackends = "cpu, cuda, hip, level_zero, opencl";
constexpr const char* kAutoOrder[] = {"cuda", "hip", "level_zero"};

const halPluginHost kHost = {sizeof(halPluginHost), HAL_PLUGIN_ABI_VERSION, pluginLog,
                             pluginShouldLog, setPluginErrorMessage};

std::string versionText(uint32_t version) {
    return fmt::format("{}.{}", HAL_PLUGIN_VERSION_MAJOR(version),
                       HAL_PLUGIN_VERSION_MINOR(version));
}

bool isFile(const std::string& path) {
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(separator, start);
        std::string part = text.substr(start, end == std::string::npos ? end : end - start);
        const auto first = part.find_first_not_of(" \t");
        const auto last = part.find_last_not_of(" \t");
        parts.push_back(first == std::string::npos ? "" : part.substr(first, last - first + 1));
        if (end == std::string::npos) return parts;
        start = end + 1;
    }
}

// Plugin folders in search order: POLYHAL_PLUGIN_PATH, the folder next to libpolyhal.so, the
// install's plugin folder.
std::vector<std::string> searchFolders() {
    std::vector<std::string> folders;
    if (const char* path = std::getenv("POLYHAL_PLUGIN_PATH")) {
        for (auto& folder : split(path, ':')) {
            if (!folder.empty()) folders.push_back(folder);
        }
    }
    const std::string self = folderOfLibraryContaining(reinterpret_cast<const void*>(&halInit));
    if (!self.empty()) folders.push_back(self + "/" POLYHAL_PLUGIN_DIRNAME);
    folders.push_back(POLYHAL_PLUGIN_INSTALL_FULL_DIR);
    std::vector<std::string> unique;
    for (auto& folder : folders) {
        if (std::find(unique.begin(), unique.end(), folder) == unique.end()) {
            unique.push_back(folder);
        }
    }
    return unique;
}

// Calls the entry point and checks what the plugin filled in.
halError negotiate(Backend& backend, halPluginEntryFn entry) {
    halPluginDispatchTable& table = backend.table;
    table = {};
    table.size = sizeof(halPluginDispatchTable);
    const halError status = entry(HAL_PLUGIN_ABI_VERSION, &kHost, &table);
    if (status != HAL_SUCCESS) {
        adoptPluginError(status, backend.location.c_str(), HAL_PLUGIN_ENTRY_NAME);
        return fail(status == HAL_ERROR_BACKEND_INCOMPATIBLE ? status
                                                             : HAL_ERROR_BACKEND_INCOMPATIBLE,
                    "{} refused plugin ABI {} ({}): {}", backend.location,
                    versionText(HAL_PLUGIN_ABI_VERSION), halGetErrorName(status),
                    lastErrorMessage());
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
#define POLYHAL_CHECK_REQUIRED_ENTRY(entry, requirement, capabilities)                   \
    if ((requirement) == HAL_PLUGIN_REQUIRED && table.entry == nullptr) {                \
        return fail(HAL_ERROR_BACKEND_INCOMPATIBLE,                                      \
                    "{} (plugin ABI {}) lacks the required entry '" #entry "'",          \
                    backend.location, versionText(table.abiVersion));                   \
    }
    HAL_PLUGIN_ENTRIES(POLYHAL_CHECK_REQUIRED_ENTRY)
#undef POLYHAL_CHECK_REQUIRED_ENTRY
    backend.name = table.name;
    logger().debug("{}: backend '{}', plugin ABI {}, table of {} bytes (core: {})",
                   backend.location, backend.name, versionText(table.abiVersion), filled,
                   sizeof(halPluginDispatchTable));
    return HAL_SUCCESS;
}

// Initialises the vendor runtime and makes sure there is at least one device.
halError initialize(Backend& backend) {
    halError status = backend.table.initialize();
    if (status != HAL_SUCCESS) {
        return adoptPluginError(status, backend.name.c_str(), "initialize");
    }
    int count = 0;
    status = backend.table.deviceGetCount(&count);
    if (status != HAL_SUCCESS) {
        return adoptPluginError(status, backend.name.c_str(), "deviceGetCount");
    }
    if (count <= 0) {
        return fail(HAL_ERROR_NO_DEVICE, "{}: the backend loaded but reports no device",
                    backend.name);
    }
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

halError loadFile(const std::string& path, std::unique_ptr<Backend>* out) {
    auto backend = std::make_unique<Backend>();
    backend->location = path;
    std::string dlError;
    backend->library = DynamicLibrary::open(path, &dlError);
    if (!backend->library) {
        return fail(HAL_ERROR_BACKEND_NOT_FOUND, "cannot load plugin {}: {}", path, dlError);
    }
    auto entry = reinterpret_cast<halPluginEntryFn>(
        backend->library.symbol(HAL_PLUGIN_ENTRY_NAME));
    if (entry == nullptr) {
        return fail(HAL_ERROR_BACKEND_NOT_FOUND,
                    "{} is not a polyhal plugin: it does not export " HAL_PLUGIN_ENTRY_NAME,
                    path);
    }
    halError status = negotiate(*backend, entry);
    if (status == HAL_SUCCESS) status = initialize(*backend);
    if (status != HAL_SUCCESS) return status;
    logger().info("loaded backend '{}' from {}", backend->name, path);
    *out = std::move(backend);
    return HAL_SUCCESS;
}

// Finds libpolyhal_<name>.so in the search folders. Returns "" and describes every path tried.
std::string findPlugin(const std::string& name, std::string* tried) {
    for (const auto& folder : searchFolders()) {
        const std::string path = folder + "/libpolyhal_" + name + ".so";
        if (isFile(path)) return path;
        logger().debug("backend '{}': {} does not exist", name, path);
        *tried += fmt::format("\n  {} (no such file)", path);
    }
    return {};
}

bool isValidName(const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

// A backend the user named: it loads, or initialisation fails saying why.
halError loadNamed(const std::string& spec, std::unique_ptr<Backend>* out) {
    if (spec.find('/') != std::string::npos) {
        if (spec.front() != '/') {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "POLYHAL_BACKEND entry '{}' is a relative path; give an absolute path",
                        spec);
        }
        if (!isFile(spec)) {
            return fail(HAL_ERROR_BACKEND_NOT_FOUND, "plugin {} does not exist", spec);
        }
        return loadFile(spec, out);
    }
    if (const BuiltinBackend* builtin = findBuiltinBackend(spec.c_str())) {
        return loadBuiltin(*builtin, out);
    }
    if (!isValidName(spec)) {
        return fail(HAL_ERROR_BACKEND_NOT_FOUND,
                    "POLYHAL_BACKEND entry '{}' is neither a backend name ([a-z0-9_]+) nor an "
                    "absolute path. Known backends: {}",
                    spec, kKnownBackends);
    }
    std::string tried;
    const std::string path = findPlugin(spec, &tried);
    if (path.empty()) {
        return fail(HAL_ERROR_BACKEND_NOT_FOUND,
                    "backend '{}' not found. Known backends: {}; a plugin can also be named by "
                    "its absolute path. Tried:{}",
                    spec, kKnownBackends, tried);
    }
    return loadFile(path, out);
}

// No POLYHAL_BACKEND: the first GPU backend that works, else the first built-in backend (the CPU
// backend).
halError loadAutomatic(std::vector<std::unique_ptr<Backend>>* backends) {
    for (const char* name : kAutoOrder) {
        std::string tried;
        const std::string path = findPlugin(name, &tried);
        if (path.empty()) continue;
        std::unique_ptr<Backend> backend;
        if (loadFile(path, &backend) == HAL_SUCCESS) {
            backends->push_back(std::move(backend));
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
    std::vector<std::string> seen;
    for (const std::string& spec : split(selection, ',')) {
        if (spec.empty()) {
            return fail(HAL_ERROR_INVALID_VALUE, "POLYHAL_BACKEND='{}' has an empty entry",
                        selection);
        }
        if (std::find(seen.begin(), seen.end(), spec) != seen.end()) {
            return fail(HAL_ERROR_INVALID_VALUE,
                        "POLYHAL_BACKEND='{}' names '{}' twice; a backend is loaded once and "
                        "already serves all of its devices",
                        selection, spec);
        }
        seen.push_back(spec);
        std::unique_ptr<Backend> backend;
        const halError status = loadNamed(spec, &backend);
        if (status != HAL_SUCCESS) return status;
        backends->push_back(std::move(backend));
    }
    return HAL_SUCCESS;
}

}  // namespace polyhal
