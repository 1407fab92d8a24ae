// A stand-in for a Level Zero loader from 1.16 on (the release that took specification 1.9.1),
// built as libze_loader.so.1 in a folder of its own: Debian's loader 1.8 with the two exports the
// plugin looks for that only newer loaders have. Every other function comes from Debian's loader,
// which this library depends on under another name (CMakeLists.txt), so that the plugin's
// dlsym() on this library finds it.
//
// As the loader does (oneapi-src/level-zero v1.16.0, source/loader/ze_ldrddi.cpp:3265-3286 and
// 5989-6032), each call goes to the driver's own dispatch table, filled by the driver's
// zeGet*ProcAddrTable, with the loader's handles translated to the driver's where the loader
// wraps them. The driver is the one ZE_ENABLE_ALT_DRIVERS names, which Debian's loader has
// loaded.
#include <dlfcn.h>

#include <level_zero/loader/ze_loader.h>

#include <cstdlib>
#include <vector>

#include "../newer_ddi.hpp"

namespace {

using zedouble::CommandListExpTable1_9;
using zedouble::MemTable1_6;

// The driver's tables, read once; an entry stays null when the driver has none.
struct DriverTables {
    MemTable1_6 mem{};
    CommandListExpTable1_9 commandListExp{};

    DriverTables() {
        const char* path = std::getenv("ZE_ENABLE_ALT_DRIVERS");
        void* driver = path == nullptr ? nullptr : dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (driver == nullptr) return;
        using GetMem = ze_result_t(ZE_APICALL*)(ze_api_version_t, MemTable1_6*);
        using GetCommandListExp =
            ze_result_t(ZE_APICALL*)(ze_api_version_t, CommandListExpTable1_9*);
        if (auto get = reinterpret_cast<GetMem>(dlsym(driver, "zeGetMemProcAddrTable"))) {
            get(zedouble::kApiVersion1_6, &mem);
        }
        if (auto get = reinterpret_cast<GetCommandListExp>(
                dlsym(driver, "zeGetCommandListExpProcAddrTable"))) {
            get(zedouble::kApiVersion1_9, &commandListExp);
        }
    }
};

const DriverTables& driverTables() {
    static const DriverTables tables;
    return tables;
}

// The driver's handle behind `handle` (itself where the loader does not wrap handles).
template <typename Handle>
Handle driverHandle(zel_handle_type_t type, Handle handle) {
    if (handle == nullptr) return nullptr;
    void* translated = handle;
    if (zelLoaderTranslateHandle(type, handle, &translated) != ZE_RESULT_SUCCESS) return handle;
    return static_cast<Handle>(translated);
}

}  // namespace

#define NEWER_LOADER_EXPORT extern "C" __attribute__((visibility("default"))) ze_result_t ZE_APICALL

NEWER_LOADER_EXPORT zeMemPutIpcHandle(ze_context_handle_t context, ze_ipc_mem_handle_t handle) {
    const auto put = driverTables().mem.pfnPutIpcHandle;
    if (put == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
    return put(driverHandle(ZEL_HANDLE_CONTEXT, context), handle);
}

NEWER_LOADER_EXPORT zeCommandListImmediateAppendCommandListsExp(
    ze_command_list_handle_t immediate, uint32_t numCommandLists, ze_command_list_handle_t* lists,
    ze_event_handle_t signal, uint32_t numWaitEvents, ze_event_handle_t* waitEvents) {
    const auto append = driverTables().commandListExp.pfnImmediateAppendCommandListsExp;
    if (append == nullptr) return ZE_RESULT_ERROR_UNINITIALIZED;
    std::vector<ze_command_list_handle_t> driverLists(numCommandLists);
    for (uint32_t i = 0; lists != nullptr && i < numCommandLists; ++i) {
        driverLists[i] = driverHandle(ZEL_HANDLE_COMMAND_LIST, lists[i]);
    }
    std::vector<ze_event_handle_t> driverWaits(numWaitEvents);
    for (uint32_t i = 0; waitEvents != nullptr && i < numWaitEvents; ++i) {
        driverWaits[i] = driverHandle(ZEL_HANDLE_EVENT, waitEvents[i]);
    }
    return append(driverHandle(ZEL_HANDLE_COMMAND_LIST, immediate), numCommandLists,
                  driverLists.data(), driverHandle(ZEL_HANDLE_EVENT, signal), numWaitEvents,
                  driverWaits.data());
}
