// Memory another process can map: a shared-memory file (memfd) mapped MAP_SHARED. The exporter
// names it by its process id and file descriptor; the importer opens the descriptor through
// /proc/<pid>/fd/<n> and checks the file's identity, so a descriptor number the exporter has
// closed and reused is never mistaken for the memory.
#ifndef POLYHAL_BACKENDS_PLUGIN_COMMON_SHARED_MEMORY_HPP_
#define POLYHAL_BACKENDS_PLUGIN_COMMON_SHARED_MEMORY_HPP_

#include <polyhal/plugin.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace polyhal {

// A plugin's part of an IPC handle (plain bytes in halPluginIpcHandle).
struct SharedMemoryName {
    uint32_t pid;
    int32_t fd;
    uint64_t inode;
    uint64_t device;
    uint64_t size;
};
static_assert(sizeof(SharedMemoryName) <= HAL_PLUGIN_IPC_HANDLE_SIZE, "must fit the handle");

class SharedMemory {
  public:
    // A new zero-filled mapping of `size` bytes (a multiple of the page size is best).
    // Errors: HAL_ERROR_OUT_OF_MEMORY (no memory, or no file descriptor; with the OS error).
    static halError create(size_t size, std::unique_ptr<SharedMemory>* created);
    // Maps the memory another process named. Errors: HAL_ERROR_NOT_FOUND (the process exited,
    // or the memory is gone), HAL_ERROR_NOT_PERMITTED (the OS refused access),
    // HAL_ERROR_INVALID_VALUE (a size other than the exporter's), HAL_ERROR_OUT_OF_MEMORY.
    static halError open(const SharedMemoryName& name, size_t size,
                         std::unique_ptr<SharedMemory>* opened);

    ~SharedMemory();
    SharedMemory(const SharedMemory&) = delete;
    SharedMemory& operator=(const SharedMemory&) = delete;

    void* data() const { return data_; }
    size_t size() const { return size_; }
    SharedMemoryName name() const;

    // Writes name() into a plugin handle.
    void exportTo(halPluginIpcHandle* handle) const;
    // Reads a name from a plugin handle.
    static SharedMemoryName nameIn(const halPluginIpcHandle& handle);

  private:
    SharedMemory(int fd, void* data, size_t size, uint64_t inode, uint64_t device)
        : fd_(fd), data_(data), size_(size), inode_(inode), device_(device) {}

    int fd_;
    void* data_;
    size_t size_;
    uint64_t inode_;
    uint64_t device_;
};

}  // namespace polyhal

#endif  // POLYHAL_BACKENDS_PLUGIN_COMMON_SHARED_MEMORY_HPP_
