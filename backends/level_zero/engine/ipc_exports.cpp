// One IPC handle per exported allocation, put back when the allocation is freed.
#include "engine/ipc_exports.hpp"

#include <polyhal/plugin_support.hpp>

#include "error.hpp"
#include "symbols.hpp"

namespace polyhal::level_zero {

ze_result_t IpcExports::handleOf(void* base, ze_ipc_mem_handle_t* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = handles_.find(base);
    if (found != handles_.end()) {
        *handle = found->second;
        return ZE_RESULT_SUCCESS;
    }
    const ze_result_t result = ze.zeMemGetIpcHandle.address(context_, base, handle);
    if (result == ZE_RESULT_SUCCESS) handles_.emplace(base, *handle);
    return result;
}

void IpcExports::release(void* base) {
    ze_ipc_mem_handle_t handle;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = handles_.find(base);
        if (found == handles_.end()) return;
        handle = found->second;
        handles_.erase(found);
    }
    if (ze.zeMemPutIpcHandle.address == nullptr) return;
    const ze_result_t result = ze.zeMemPutIpcHandle.address(context_, handle);
    if (result != ZE_RESULT_SUCCESS) {
        plugin::log(HAL_LOG_WARN, "putting back the IPC handle of %p: zeMemPutIpcHandle: %s", base,
                    resultName(result));
    }
}

}  // namespace polyhal::level_zero
