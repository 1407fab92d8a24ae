// The plugin folders and the libpolyhal_<name>.so files in them.
#include "plugin_folders.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "log.hpp"
#include "split.hpp"
#include "support/dynamic_library.hpp"

namespace polyhal {
namespace {

constexpr const char* kPrefix = "libpolyhal_";
constexpr const char* kSuffix = ".so";

// The <name> of libpolyhal_<name>.so, or "" for any other file name.
std::string backendNameOf(const std::string& fileName) {
    const size_t prefix = std::strlen(kPrefix);
    const size_t suffix = std::strlen(kSuffix);
    if (fileName.size() <= prefix + suffix || fileName.compare(0, prefix, kPrefix) != 0 ||
        fileName.compare(fileName.size() - suffix, suffix, kSuffix) != 0) {
        return {};
    }
    return fileName.substr(prefix, fileName.size() - prefix - suffix);
}

}  // namespace

bool isRegularFile(const std::string& path) {
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

bool sameFile(const std::string& a, const std::string& b) {
    struct stat infoA {};
    struct stat infoB {};
    return stat(a.c_str(), &infoA) == 0 && stat(b.c_str(), &infoB) == 0 &&
           infoA.st_dev == infoB.st_dev && infoA.st_ino == infoB.st_ino;
}

std::vector<std::string> pluginFolders() {
    std::vector<std::string> folders;
    if (const char* path = std::getenv("POLYHAL_PLUGIN_PATH")) {
        for (auto& folder : split(path, ':')) {
            if (!folder.empty()) folders.push_back(folder);
        }
    }
    const std::string self = folderOfLibraryContaining(reinterpret_cast<const void*>(&halInit));
    if (!self.empty()) folders.push_back(self + "/" POLYHAL_PLUGIN_DIRNAME);
    folders.push_back(POLYHAL_PLUGIN_INSTALL_FULL_DIR);
    std::vector<std::string> unique;
    for (auto& folder : folders) {
        if (std::find(unique.begin(), unique.end(), folder) == unique.end()) {
            unique.push_back(folder);
        }
    }
    return unique;
}

std::string findPlugin(const std::string& name, std::string* tried) {
    for (const auto& folder : pluginFolders()) {
        const std::string path = folder + "/" + kPrefix + name + kSuffix;
        if (isRegularFile(path)) return path;
        logger().debug("backend '{}': {} does not exist", name, path);
        *tried += fmt::format("\n  {} (no such file)", path);
    }
    return {};
}

std::vector<PluginFile> installedPlugins() {
    std::vector<PluginFile> plugins;
    for (const auto& folder : pluginFolders()) {
        DIR* directory = opendir(folder.c_str());
        if (directory == nullptr) continue;
        std::vector<PluginFile> here;
        while (const dirent* entry = readdir(directory)) {
            const std::string name = backendNameOf(entry->d_name);
            const std::string path = folder + "/" + entry->d_name;
            if (name.empty() || !isRegularFile(path)) continue;
            const bool hidden =
                std::any_of(plugins.begin(), plugins.end(),
                            [&](const PluginFile& seen) { return seen.name == name; });
            if (!hidden) here.push_back({name, path});
        }
        closedir(directory);
        std::sort(here.begin(), here.end(),
                  [](const PluginFile& a, const PluginFile& b) { return a.name < b.name; });
        plugins.insert(plugins.end(), here.begin(), here.end());
    }
    return plugins;
}

}  // namespace polyhal
