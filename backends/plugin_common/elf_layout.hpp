// Checks that an ELF image's tables and the file ranges they name lie inside the image, before
// a loader that takes the headers at their word reads it (a dynamic loader maps segments past the
// end of a file and faults on first touch; vendor loaders take no size at all).
#ifndef POLYHAL_BACKENDS_PLUGIN_COMMON_ELF_LAYOUT_HPP_
#define POLYHAL_BACKENDS_PLUGIN_COMMON_ELF_LAYOUT_HPP_

#include <cstddef>

namespace polyhal {

// Whether `image` starts with the ELF magic number (and has room for it).
bool isElfImage(const unsigned char* image, size_t size);

// Why the ELF image `image` (`size` bytes, 32- or 64-bit, either byte order as its header says)
// has a header, program header table, section header table, segment or section that runs past
// its end, or nullptr if everything it names lies inside it.
const char* elfLayoutProblem(const unsigned char* image, size_t size);

}  // namespace polyhal

#endif  // POLYHAL_BACKENDS_PLUGIN_COMMON_ELF_LAYOUT_HPP_
