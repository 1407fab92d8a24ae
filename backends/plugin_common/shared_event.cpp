// Implements shared_event.hpp.
#include "plugin_common/shared_event.hpp"

#include <unistd.h>

namespace polyhal {

namespace {

size_t pageSize() {
    return static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

halError SharedEventState::create(std::shared_ptr<SharedEventState>* created) {
    std::unique_ptr<SharedMemory> memory;
    if (halError e = SharedMemory::create(pageSize(), &memory)) return e;  // zero-filled
    created->reset(new SharedEventState(std::move(memory)));
    return HAL_SUCCESS;
}

halError SharedEventState::open(const halPluginIpcHandle& handle,
                                std::shared_ptr<SharedEventState>* opened) {
    std::unique_ptr<SharedMemory> memory;
    if (halError e = SharedMemory::open(SharedMemory::nameIn(handle), pageSize(), &memory)) {
        return e;
    }
    opened->reset(new SharedEventState(std::move(memory)));
    return HAL_SUCCESS;
}

}  // namespace polyhal
