// Device memory of another process, for the doubles' IPC calls (cuIpcOpenMemHandle and HIP's):
// the exporter names an allocation by its process, the descriptor and identity of its heap's
// memory file and the allocation's place in it; the importer maps that range twice, as its own
// heap is mapped (a PROT_NONE view to hand out, an alias the double reads and writes through).
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_IPC_MAPPINGS_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_IPC_MAPPINGS_HPP_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "device_heap.hpp"

namespace polyhal::doubles {

// What a double's IPC memory handle holds (it fits the vendors' 64 bytes).
struct IpcName {
    uint32_t magic;
    uint32_t pid;
    int32_t file;
    int32_t device;
    uint64_t inode;
    uint64_t offset;
    uint64_t size;
};

constexpr uint32_t kIpcNameMagic = 0x44495043u;  // "DIPC"

// The name of the allocation of `heap` (of `device`) that starts at `base` and has `size` bytes.
IpcName nameAllocation(const DeviceHeap& heap, int device, const void* base, size_t size);

// Opens the memory file `name` names, through /proc/<pid>/fd, read and write; -1 when the
// exporter has exited or closed it, or the descriptor is now another file or too small.
int openNamedFile(const IpcName& name);

enum class IpcOpenStatus { kOpened, kSameProcess, kGone, kNotAName };

class IpcMappings {
  public:
    ~IpcMappings();
    // Maps the named allocation for `device`; *base is where it starts.
    IpcOpenStatus open(const IpcName& name, int device, void** base);
    // False if `base` is not a mapping open() returned.
    bool close(const void* base);
    // As AddressSpace::locate for the mapped ranges: true if `pointer` lies in one (then *inside
    // says whether [pointer, pointer + count) stays within it, and *device and *alias are set).
    bool find(const void* pointer, size_t count, bool* inside, int* device, void** alias) const;

  private:
    struct Mapping {
        char* visible;  // PROT_NONE pages handed out
        char* alias;    // the same pages, read and written by the double
        size_t length;  // of each mapping, whole pages
        size_t lead;    // bytes of the first page before the allocation
        size_t size;    // of the allocation
        int device;
    };
    mutable std::mutex mutex_;
    std::map<const char*, Mapping> byBase_;  // allocation start -> mapping
};

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_IPC_MAPPINGS_HPP_
