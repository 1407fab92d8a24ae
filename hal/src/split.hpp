// Splitting a list setting (POLYHAL_BACKEND, POLYHAL_PLUGIN_PATH) into its parts.
#ifndef POLYHAL_HAL_SRC_SPLIT_HPP_
#define POLYHAL_HAL_SRC_SPLIT_HPP_

#include <string>
#include <vector>

namespace polyhal {

// The parts of `text` between `separator`s, each without leading and trailing blanks; empty
// parts are kept, so that a caller can refuse them.
inline std::vector<std::string> split(const std::string& text, char separator) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const size_t end = text.find(separator, start);
        std::string part = text.substr(start, end == std::string::npos ? end : end - start);
        const auto first = part.find_first_not_of(" \t");
        const auto last = part.find_last_not_of(" \t");
        parts.push_back(first == std::string::npos ? "" : part.substr(first, last - first + 1));
        if (end == std::string::npos) return parts;
        start = end + 1;
    }
}

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_SPLIT_HPP_
