// What the rest of the core needs of api_host_memory.cpp: freeing managed memory (halFree) and
// releasing a device's registrations and managed memory (device reset and shutdown).
#ifndef POLYHAL_HAL_SRC_API_HOST_MEMORY_HPP_
#define POLYHAL_HAL_SRC_API_HOST_MEMORY_HPP_

#include <optional>

#include "api.hpp"

namespace polyhal {

// Frees `ptr` if it starts a managed allocation, after synchronising its device; nullopt when it
// does not (the caller goes on to the pools).
std::optional<halError> freeManaged(void* ptr, const char* operation);

// Unregisters the host memory registered through `device` and frees its managed memory.
void releaseHostMemory(Device* device);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_API_HOST_MEMORY_HPP_
