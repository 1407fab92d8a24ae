// Checks that a module image is a host shared object the dynamic loader can map and link without
// crashing, before it does: the loader trusts the headers, so a segment past the end of the file
// is a SIGBUS on first touch, and a dynamic table that points outside the loaded segments a
// SIGSEGV inside dlopen, not errors it could report. The check is against corrupt images: a
// module is native code, and the loader runs its constructors and IFUNC resolvers.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_ELF_IMAGE_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_ELF_IMAGE_HPP_

#include <cstddef>

#include "engine/elf_dynamic.hpp"

namespace polyhal::cpu {

// Why `image` (`size` bytes) cannot be a shared object for this host, or nullptr if it may be
// one (the dynamic loader has the last word on the rest); then `symbols` says where its dynamic
// symbol table will be once loaded.
const char* elfImageProblem(const unsigned char* image, size_t size, ElfSymbolTable* symbols);

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_ELF_IMAGE_HPP_
