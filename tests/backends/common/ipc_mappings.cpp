#include "ipc_mappings.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iterator>

namespace polyhal::doubles {

IpcName nameAllocation(const DeviceHeap& heap, int device, const void* base, size_t size) {
    struct stat info {};
    fstat(heap.file(), &info);
    return IpcName{kIpcNameMagic, static_cast<uint32_t>(getpid()),    heap.file(),
                   device,        static_cast<uint64_t>(info.st_ino), heap.offsetOf(base),
                   size};
}

IpcMappings::~IpcMappings() {
    for (const auto& [base, mapping] : byBase_) {
        munmap(mapping.visible, mapping.length);
        munmap(mapping.alias, mapping.length);
    }
}

int openNamedFile(const IpcName& name) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%u/fd/%d", name.pid, name.file);
    const int file = ::open(path, O_RDWR | O_CLOEXEC);
    if (file < 0) return -1;
    struct stat info {};
    if (fstat(file, &info) != 0 || static_cast<uint64_t>(info.st_ino) != name.inode ||
        static_cast<uint64_t>(info.st_size) < name.offset + name.size) {
        ::close(file);
        return -1;
    }
    return file;
}

IpcOpenStatus IpcMappings::open(const IpcName& name, int device, void** base) {
    if (name.magic != kIpcNameMagic || name.size == 0) return IpcOpenStatus::kNotAName;
    if (name.pid == static_cast<uint32_t>(getpid())) return IpcOpenStatus::kSameProcess;
    const int file = openNamedFile(name);
    if (file < 0) return IpcOpenStatus::kGone;
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t lead = name.offset % page;
    const size_t length = (lead + name.size + page - 1) / page * page;
    const off_t start = static_cast<off_t>(name.offset - lead);
    void* visible = mmap(nullptr, length, PROT_NONE, MAP_SHARED, file, start);
    void* alias = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, file, start);
    ::close(file);
    if (visible == MAP_FAILED || alias == MAP_FAILED) {
        if (visible != MAP_FAILED) munmap(visible, length);
        if (alias != MAP_FAILED) munmap(alias, length);
        return IpcOpenStatus::kGone;
    }
    const Mapping mapping{static_cast<char*>(visible),
                          static_cast<char*>(alias),
                          length,
                          lead,
                          static_cast<size_t>(name.size),
                          device};
    std::lock_guard<std::mutex> lock(mutex_);
    byBase_.emplace(mapping.visible + lead, mapping);
    *base = mapping.visible + lead;
    return IpcOpenStatus::kOpened;
}

bool IpcMappings::close(const void* base) {
    Mapping mapping{};
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto found = byBase_.find(static_cast<const char*>(base));
        if (found == byBase_.end()) return false;
        mapping = found->second;
        byBase_.erase(found);
    }
    munmap(mapping.visible, mapping.length);
    munmap(mapping.alias, mapping.length);
    return true;
}

bool IpcMappings::find(const void* pointer, size_t count, bool* inside, int* device,
                       void** alias) const {
    const char* byte = static_cast<const char*>(pointer);
    std::lock_guard<std::mutex> lock(mutex_);
    auto next = byBase_.upper_bound(byte);
    if (next == byBase_.begin()) return false;
    const auto& [start, mapping] = *std::prev(next);
    if (byte >= mapping.visible + mapping.length) return false;
    *inside = byte >= start && static_cast<size_t>(byte - start) + count <= mapping.size;
    *device = mapping.device;
    *alias = mapping.alias + (byte - mapping.visible);
    return true;
}

}  // namespace polyhal::doubles
