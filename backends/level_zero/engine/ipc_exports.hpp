// The IPC handles a driver context's allocations were exported with, one per allocation.
//
// Each zeMemGetIpcHandle takes a reference to the allocation's exported handle (a dma-buf file
// descriptor on Intel's driver) that zeMemPutIpcHandle gives back; where Intel's driver pools
// device memory, zeMemFree drops only one (compute-runtime level_zero/core/source/context/
// context.cpp:584-585), so handles taken at every export would leak. The first export of an
// allocation takes its handle and later ones reuse it; freeing the allocation puts it back, where
// the loader has zeMemPutIpcHandle (1.10 on), and otherwise leaves it to zeMemFree.
#ifndef POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_IPC_EXPORTS_HPP_
#define POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_IPC_EXPORTS_HPP_

#include <level_zero/ze_api.h>

#include <map>
#include <mutex>

namespace polyhal::level_zero {

class IpcExports {
  public:
    explicit IpcExports(ze_context_handle_t context) : context_(context) {}

    // The handle of the allocation `base`, taken at its first export.
    ze_result_t handleOf(void* base, ze_ipc_mem_handle_t* handle);
    // Called before `base` is freed: puts its handle back, if it was exported.
    void release(void* base);

  private:
    const ze_context_handle_t context_;
    std::mutex mutex_;
    std::map<void*, ze_ipc_mem_handle_t> handles_;
};

}  // namespace polyhal::level_zero

#endif  // POLYHAL_BACKENDS_LEVEL_ZERO_ENGINE_IPC_EXPORTS_HPP_
