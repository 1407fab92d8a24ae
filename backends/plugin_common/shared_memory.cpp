// Implements shared_memory.hpp.
#include "plugin_common/shared_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polyhal/plugin_support.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace polyhal {

namespace {

halError mapFile(int fd, size_t size, void** data) {
    void* mapped = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (mapped == MAP_FAILED) {
        const int error = errno;
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "mmap of %zu shared bytes: %s", size,
                            std::strerror(error));
    }
    *data = mapped;
    return HAL_SUCCESS;
}

}  // namespace

halError SharedMemory::create(size_t size, std::unique_ptr<SharedMemory>* created) {
    const int fd = memfd_create("polyhal-shared", MFD_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        return plugin::fail(HAL_ERROR_OUT_OF_MEMORY, "memfd_create: %s", std::strerror(error));
    }
    struct stat info {};
    void* data = nullptr;
    halError status = HAL_SUCCESS;
    if (ftruncate(fd, static_cast<off_t>(size)) != 0 || fstat(fd, &info) != 0) {
        const int error = errno;
        status = plugin::fail(HAL_ERROR_OUT_OF_MEMORY,
                              "sizing a shared-memory file to %zu "
                              "bytes: %s",
                              size, std::strerror(error));
    } else {
        status = mapFile(fd, size, &data);
    }
    if (status != HAL_SUCCESS) {
        close(fd);
        return status;
    }
    created->reset(new SharedMemory(fd, data, size, info.st_ino, info.st_dev));
    return HAL_SUCCESS;
}

halError SharedMemory::open(const SharedMemoryName& name, size_t size,
                            std::unique_ptr<SharedMemory>* opened) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%u/fd/%d", name.pid, name.fd);
    const int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        const int error = errno;
        if (error == EACCES || error == EPERM) {
            return plugin::fail(HAL_ERROR_NOT_PERMITTED,
                                "opening %s: %s (the OS lets a process open another's "
                                "descriptors only under the same user and where ptrace "
                                "access is allowed)",
                                path, std::strerror(error));
        }
        return plugin::fail(error == ENOENT ? HAL_ERROR_NOT_FOUND : HAL_ERROR_BACKEND,
                            "opening %s: %s (has process %u exited, or freed the memory?)", path,
                            std::strerror(error), name.pid);
    }
    struct stat info {};
    halError status = HAL_SUCCESS;
    void* data = nullptr;
    if (fstat(fd, &info) != 0 || info.st_ino != name.inode || info.st_dev != name.device) {
        status = plugin::fail(HAL_ERROR_NOT_FOUND,
                              "%s is no longer the exported memory: process %u freed it", path,
                              name.pid);
    } else if (size > name.size || static_cast<uint64_t>(info.st_size) < size) {
        status = plugin::fail(HAL_ERROR_INVALID_VALUE,
                              "the handle asks for %zu bytes, the exported memory has %llu", size,
                              static_cast<unsigned long long>(info.st_size));
    } else {
        status = mapFile(fd, size, &data);
    }
    if (status != HAL_SUCCESS) {
        close(fd);
        return status;
    }
    opened->reset(new SharedMemory(fd, data, size, info.st_ino, info.st_dev));
    return HAL_SUCCESS;
}

SharedMemory::~SharedMemory() {
    munmap(data_, size_);
    close(fd_);
}

SharedMemoryName SharedMemory::name() const {
    return SharedMemoryName{static_cast<uint32_t>(getpid()), fd_, inode_, device_, size_};
}

void SharedMemory::exportTo(halPluginIpcHandle* handle) const {
    const SharedMemoryName exported = name();
    std::memset(handle->bytes, 0, sizeof handle->bytes);
    std::memcpy(handle->bytes, &exported, sizeof exported);
}

SharedMemoryName SharedMemory::nameIn(const halPluginIpcHandle& handle) {
    SharedMemoryName name;
    std::memcpy(&name, handle.bytes, sizeof name);
    return name;
}

}  // namespace polyhal
