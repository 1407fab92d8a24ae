// Finding and loading the CTS kernels: the image kinds come from the backend itself.
#include "kernels.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace cts {
namespace {

bool isFile(const std::string& path) {
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// The non-empty entries of a `separator`-separated list.
std::vector<std::string> splitList(const std::string& list, char separator) {
    std::vector<std::string> entries;
    size_t start = 0;
    while (start <= list.size()) {
        const size_t end = list.find(separator, start);
        const std::string entry = list.substr(start, end == std::string::npos ? end : end - start);
        if (!entry.empty()) entries.push_back(entry);
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return entries;
}

std::string executableFolder() {
    char path[4096];
    const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
    if (length <= 0) return {};
    const std::string exe(path, static_cast<size_t>(length));
    return exe.substr(0, exe.rfind('/'));
}

std::vector<std::string> kernelRoots() {
    if (const char* override = std::getenv("POLYHAL_CTS_KERNEL_DIR"))
        return splitList(override, ':');
    std::vector<std::string> roots;
    const std::string exeFolder = executableFolder();
    if (!exeFolder.empty()) roots.push_back(exeFolder + "/" POLYHAL_CTS_KERNEL_DIR_FROM_EXE);
    for (auto& root : splitList(POLYHAL_CTS_KERNEL_BUILD_PATH, ':')) roots.push_back(root);
    return roots;
}

}  // namespace

std::string findKernelImage(const std::string& kernel, std::string* searched) {
    const halDeviceProperties properties = deviceProperties();
    const std::string backend = properties.backend;
    const std::vector<std::string> kinds = splitList(properties.moduleImageKinds, ',');
    if (kinds.empty()) {
        *searched = "backend '" + backend + "' names no module image kind (moduleImageKinds)";
        return {};
    }
    *searched = "searched:";
    for (const auto& root : kernelRoots()) {
        for (const auto& kind : kinds) {
            for (const auto& stem : {kernel, std::string("cts_kernels")}) {
                const std::string path = root + "/" + backend + "/" + stem + "." + kind;
                if (isFile(path)) return path;
                *searched += " " + path;
            }
        }
    }
    return {};
}

bool loadKernel(const char* name, Module& module, halFunction* function) {
    if (lacksCapability(HAL_DEVICE_CAP_KERNELS, "HAL_DEVICE_CAP_KERNELS")) return false;
    const std::string backend = backendName();
    std::string searched;
    const std::string image = findKernelImage(name, &searched);
    if (image.empty()) {
        skip("no CTS kernel image with '" + std::string(name) + "' for backend '" + backend +
             "' (" + searched + ")");
        return false;
    }
    INFO("kernel image " << image);
    HAL_REQUIRE_OK(halModuleLoadFile(module.out(), image.c_str()));
    const halError status = halModuleGetFunction(function, module.get(), name);
    if (status == HAL_ERROR_NOT_FOUND) {
        skip("the CTS kernel image " + image + " has no kernel '" + name + "'");
        return false;
    }
    HAL_REQUIRE_OK(status);
    return true;
}

halError launch1d(halFunction function, uint32_t n, uint32_t block,
                  const std::vector<halKernelArg>& args, halStream stream,
                  size_t dynamicSharedBytes) {
    const halDim3 grid{(n + block - 1) / block, 1, 1};
    return halLaunchKernel(function, grid, halDim3{block, 1, 1}, dynamicSharedBytes, args.data(),
                           static_cast<uint32_t>(args.size()), stream);
}

}  // namespace cts
