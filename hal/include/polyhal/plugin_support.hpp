// C++ helpers for plugin authors: the entry-point negotiation and error reporting that every
// plugin needs, written once. Header-only; include it from exactly the plugins' C++ sources.
#ifndef POLYHAL_PLUGIN_SUPPORT_HPP_
#define POLYHAL_PLUGIN_SUPPORT_HPP_

#include <polyhal/plugin.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <system_error>

namespace polyhal::plugin {

// The core's services, set by negotiate(). Each plugin has its own copy (hidden visibility).
inline const halPluginHost* host = nullptr;

// Sets the calling thread's error detail (printf-style) and returns `code`, so a failing entry
// reads `return fail(HAL_ERROR_BACKEND, "clFinish: %s", name);`.
inline halError fail(halError code, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

inline halError fail(halError code, const char* format, ...) {
    if (host != nullptr && host->setErrorMessage != nullptr) {
        char message[1024];
        va_list args;
        va_start(args, format);
        std::vsnprintf(message, sizeof message, format, args);
        va_end(args);
        host->setErrorMessage(message);
    }
    return code;
}

// Logs through the core (printf-style), formatting only when the level is enabled.
inline void log(halLogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

inline void log(halLogLevel level, const char* format, ...) {
    if (host == nullptr || host->log == nullptr) return;
    if (host->shouldLog != nullptr && !host->shouldLog(level)) return;
    char message[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
    host->log(level, message);
}

// Runs an entry's `body` (returning halError) so that no C++ exception crosses the C ABI:
// std::bad_alloc and thread exhaustion become HAL_ERROR_OUT_OF_MEMORY, anything else
// HAL_ERROR_UNKNOWN, each with a message naming `entry`.
template <class Body>
halError guarded(const char* entry, const Body& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(HAL_ERROR_OUT_OF_MEMORY, "%s: out of host memory", entry);
    } catch (const std::system_error& error) {
        const bool exhausted = error.code() == std::errc::resource_unavailable_try_again ||
                               error.code() == std::errc::not_enough_memory;
        return fail(exhausted ? HAL_ERROR_OUT_OF_MEMORY : HAL_ERROR_UNKNOWN, "%s: %s", entry,
                    error.what());
    } catch (const std::exception& error) {
        return fail(HAL_ERROR_UNKNOWN, "%s: %s", entry, error.what());
    } catch (...) {
        return fail(HAL_ERROR_UNKNOWN, "%s: unknown exception", entry);
    }
}

// Implements the entry point: refuses another major version, remembers the host services and
// copies `mine` into the core's table, truncated to the smaller of the two sizes.
inline halError negotiate(uint32_t coreAbiVersion, const halPluginHost* coreHost,
                          halPluginDispatchTable* table, const halPluginDispatchTable& mine) {
    if (coreHost == nullptr || table == nullptr) return HAL_ERROR_INVALID_VALUE;
    host = coreHost;
    if (HAL_PLUGIN_VERSION_MAJOR(coreAbiVersion) != HAL_PLUGIN_ABI_VERSION_MAJOR) {
        return fail(HAL_ERROR_BACKEND_INCOMPATIBLE,
                    "plugin '%s' speaks plugin ABI %u.%u, the core speaks %u.%u", mine.name,
                    HAL_PLUGIN_ABI_VERSION_MAJOR, HAL_PLUGIN_ABI_VERSION_MINOR,
                    HAL_PLUGIN_VERSION_MAJOR(coreAbiVersion),
                    HAL_PLUGIN_VERSION_MINOR(coreAbiVersion));
    }
    const size_t size = table->size < sizeof(mine) ? table->size : sizeof(mine);
    std::memcpy(table, &mine, size);
    table->size = size;
    table->abiVersion = HAL_PLUGIN_ABI_VERSION;
    return HAL_SUCCESS;
}

}  // namespace polyhal::plugin

#endif  // POLYHAL_PLUGIN_SUPPORT_HPP_
