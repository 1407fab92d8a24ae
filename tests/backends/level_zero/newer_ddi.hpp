// Dispatch tables of Level Zero 1.6 and 1.9 that Debian's 1.4 headers lack, laid out as the
// loader's include/ze_ddi.h lays them out (oneapi-src/level-zero): the double fills them and the
// newer-loader stand-in (newer_loader/) calls through them, as a loader from 1.16 on does.
#ifndef POLYHAL_TESTS_BACKENDS_LEVEL_ZERO_NEWER_DDI_HPP_
#define POLYHAL_TESTS_BACKENDS_LEVEL_ZERO_NEWER_DDI_HPP_

#include <level_zero/ze_ddi.h>

namespace zedouble {

using MemPutIpcHandle = ze_result_t(ZE_APICALL*)(ze_context_handle_t, ze_ipc_mem_handle_t);
using ImmediateAppendCommandLists = ze_result_t(ZE_APICALL*)(
    ze_command_list_handle_t immediate, uint32_t numCommandLists, ze_command_list_handle_t* lists,
    ze_event_handle_t signal, uint32_t numWaitEvents, ze_event_handle_t* waitEvents);

// ze_mem_dditable_t up to Level Zero 1.6: pfnPutIpcHandle follows pfnFreeExt.
struct MemTable1_6 {
    ze_mem_dditable_t upTo1_4;
    MemPutIpcHandle pfnPutIpcHandle;
};

// ze_command_list_exp_dditable_t of Level Zero 1.9 (zeGetCommandListExpProcAddrTable); only
// the entry the double implements is typed.
struct CommandListExpTable1_9 {
    void* pfnCreateCloneExp;
    ImmediateAppendCommandLists pfnImmediateAppendCommandListsExp;
    void* pfnGetNextCommandIdExp;
    void* pfnUpdateMutableCommandsExp;
    void* pfnUpdateMutableCommandSignalEventExp;
    void* pfnUpdateMutableCommandWaitEventsExp;
};

constexpr ze_api_version_t kApiVersion1_6 = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 6));
constexpr ze_api_version_t kApiVersion1_9 = static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 9));

}  // namespace zedouble

#endif  // POLYHAL_TESTS_BACKENDS_LEVEL_ZERO_NEWER_DDI_HPP_
