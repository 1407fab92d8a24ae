// Where plugins are looked for: the plugin folders in search order, and the plugins in them.
#ifndef POLYHAL_HAL_SRC_PLUGIN_FOLDERS_HPP_
#define POLYHAL_HAL_SRC_PLUGIN_FOLDERS_HPP_

#include <string>
#include <vector>

namespace polyhal {

// Is `path` a regular file (a symbolic link to one included)?
bool isRegularFile(const std::string& path);

// Are `a` and `b` one file (the same device and inode, symbolic links followed)?
bool sameFile(const std::string& a, const std::string& b);

// POLYHAL_PLUGIN_PATH's folders, then the polyhal/ folder next to libpolyhal.so, then the
// install's plugin folder; each once.
std::vector<std::string> pluginFolders();

// The path of libpolyhal_<name>.so in the first folder that has it, or "" after appending each
// path tried to `tried` ("\n  <path> (no such file)").
std::string findPlugin(const std::string& name, std::string* tried);

// A plugin file found in the folders: its backend name (from libpolyhal_<name>.so) and path.
struct PluginFile {
    std::string name;
    std::string path;
};

// Every libpolyhal_<name>.so in the folders, by name; a name in an earlier folder hides the
// same name in later ones, as findPlugin finds it.
std::vector<PluginFile> installedPlugins();

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_PLUGIN_FOLDERS_HPP_
