// The operating system's shared-library interface (load, look up a symbol, unload), shared by the
// core (plugins) and the plugins (vendor runtimes).
#ifndef POLYHAL_SUPPORT_DYNAMIC_LIBRARY_HPP_
#define POLYHAL_SUPPORT_DYNAMIC_LIBRARY_HPP_

#include <cstddef>
#include <string>
#include <utility>

namespace polyhal {

class DynamicLibrary {
  public:
    DynamicLibrary() = default;
    DynamicLibrary(DynamicLibrary&& other) noexcept;
    DynamicLibrary& operator=(DynamicLibrary&& other) noexcept;
    DynamicLibrary(const DynamicLibrary&) = delete;
    DynamicLibrary& operator=(const DynamicLibrary&) = delete;
    // Unloads the library, unless keepLoaded() was called.
    ~DynamicLibrary();

    // Loads `path` with every symbol resolved now and kept local. On failure returns an empty
    // library and sets `error` to the loader's text (dlerror()).
    static DynamicLibrary open(const std::string& path, std::string* error);

    // Loads the first of `candidates[0..count)` that loads, e.g. a vendor runtime under the names
    // of its versions. When none does, `error` holds each candidate's dlerror() text, ";
    // "-separated.
    static DynamicLibrary openFirst(const char* const* candidates, size_t count,
                                    std::string* error);

    // The address of `name`, or nullptr.
    void* symbol(const char* name) const;

    // The name or path the library was opened by.
    const std::string& name() const { return name_; }

    // Keeps the library loaded until the process exits, even once this object is gone. Vendor
    // runtimes need it: their drivers tear themselves down at exit, and unloading one while the
    // core may still free memory through a plugin would leave dangling function pointers.
    void keepLoaded() { kept_ = true; }

    explicit operator bool() const { return handle_ != nullptr; }

  private:
    DynamicLibrary(void* handle, std::string name) : handle_(handle), name_(std::move(name)) {}
    void* handle_ = nullptr;
    std::string name_;
    bool kept_ = false;
};

// The folder of the shared object that contains `address` ("" if unknown).
std::string folderOfLibraryContaining(const void* address);

}  // namespace polyhal

#endif  // POLYHAL_SUPPORT_DYNAMIC_LIBRARY_HPP_
