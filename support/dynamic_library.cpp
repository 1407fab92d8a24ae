// dlopen, dlsym and dladdr behind DynamicLibrary.
#include "support/dynamic_library.hpp"

#include <dlfcn.h>

#include <utility>

namespace polyhal {
namespace {

std::string lastLoaderError() {
    const char* text = dlerror();
    return text != nullptr ? text : "unknown dlopen error";
}

}  // namespace

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)),
      name_(std::move(other.name_)),
      kept_(other.kept_) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
    if (this != &other) {
        if (handle_ != nullptr && !kept_) dlclose(handle_);
        handle_ = std::exchange(other.handle_, nullptr);
        name_ = std::move(other.name_);
        kept_ = other.kept_;
    }
    return *this;
}

DynamicLibrary::~DynamicLibrary() {
    if (handle_ != nullptr && !kept_) dlclose(handle_);
}

DynamicLibrary DynamicLibrary::open(const std::string& path, std::string* error) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
        *error = lastLoaderError();
        return {};
    }
    return DynamicLibrary(handle, path);
}

DynamicLibrary DynamicLibrary::openFirst(const char* const* candidates, size_t count,
                                         std::string* error) {
    error->clear();
    for (size_t i = 0; i < count; ++i) {
        std::string reason;
        DynamicLibrary library = open(candidates[i], &reason);
        if (library) return library;
        if (!error->empty()) *error += "; ";
        *error += reason;
    }
    return {};
}

void* DynamicLibrary::symbol(const char* name) const {
    return handle_ != nullptr ? dlsym(handle_, name) : nullptr;
}

std::string folderOfLibraryContaining(const void* address) {
    Dl_info info{};
    if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return {};
    std::string path = info.dli_fname;
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

}  // namespace polyhal
