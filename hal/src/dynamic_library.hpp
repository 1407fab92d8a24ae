// The operating system's shared-library interface: load, look up a symbol, unload.
#ifndef POLYHAL_HAL_SRC_DYNAMIC_LIBRARY_HPP_
#define POLYHAL_HAL_SRC_DYNAMIC_LIBRARY_HPP_

#include <string>

namespace polyhal {

class DynamicLibrary {
  public:
    DynamicLibrary() = default;
    DynamicLibrary(DynamicLibrary&& other) noexcept;
    DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
    DynamicLibrary(const DynamicLibrary&) = delete;
    DynamicLibrary& operator=(const DynamicLibrary&) = delete;
    ~DynamicLibrary();

    // Loads `path` with every symbol resolved now and kept local. On failure returns an empty
    // library and sets `error` to the loader's text (dlerror()).
    static DynamicLibrary open(const std::string& path, std::string* error);

    // The address of `name`, or nullptr.
    void* symbol(const char* name) const;

    explicit operator bool() const { return handle_ != nullptr; }

  private:
    explicit DynamicLibrary(void* handle) : handle_(handle) {}
    void* handle_ = nullptr;
};

// The folder of the shared object that contains `address` ("" if unknown).
std::string folderOfLibraryContaining(const void* address);

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_DYNAMIC_LIBRARY_HPP_
