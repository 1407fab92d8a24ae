// Checks that a module image is a complete host shared object before the dynamic loader maps it:
// the loader trusts the headers, and a segment that lies past the end of the file it maps is a
// SIGBUS on first touch, not an error it could report.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_ELF_IMAGE_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_ELF_IMAGE_HPP_

#include <cstddef>

namespace polyhal::cpu {

// Why `image` (`size` bytes) cannot be a shared object for this host, or nullptr if it may be
// one (the dynamic loader has the last word on the rest).
const char* elfImageProblem(const unsigned char* image, size_t size);

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_ELF_IMAGE_HPP_
