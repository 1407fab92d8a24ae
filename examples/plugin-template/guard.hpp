// No C++ exception may leave a plugin: entries that can throw (allocations, thread creation) run
// their body through guarded(), which turns an exception into a halError with a message.
#ifndef POLYHAL_TEMPLATE_GUARD_HPP_
#define POLYHAL_TEMPLATE_GUARD_HPP_

#include <polyhal/plugin_support.hpp>

#include <exception>
#include <new>

namespace polyhal_template {

template <typename Body>
halError guarded(const char* entry, Body&& body) noexcept {
    using polyhal::plugin::fail;
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return fail(HAL_ERROR_OUT_OF_MEMORY, "%s: out of host memory", entry);
    } catch (const std::exception& error) {
        return fail(HAL_ERROR_BACKEND, "%s: %s", entry, error.what());
    } catch (...) {
        return fail(HAL_ERROR_UNKNOWN, "%s: unknown exception", entry);
    }
}

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_GUARD_HPP_
