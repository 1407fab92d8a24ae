// The dynamic table of a host shared object, checked before the dynamic loader follows it. glibc
// takes every address and size in it at its word (elf/get-dynamic-info.h, dl-load.c, do-rel.h,
// dl-lookup.c, dl-version.c, dl-init.c): a table that points outside the loaded segments, a size
// that runs past them, a missing companion entry it dereferences unchecked, or a relocation that
// writes outside them is a crash inside dlopen, not an error it could report.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_ELF_DYNAMIC_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_ELF_DYNAMIC_HPP_

#include <link.h>

#include <cstddef>

#include "engine/elf_segments.hpp"

namespace polyhal::cpu {

// Where an image's dynamic symbol table is, as addresses relative to its load address: after the
// checks, `count` symbols from `symbols`, each naming a string inside the `stringBytes` bytes at
// `strings`, all in the file part of readable segments.
struct ElfSymbolTable {
    ElfW(Addr) symbols = 0;
    ElfW(Addr) strings = 0;
    size_t count = 0;
    size_t stringBytes = 0;
};

// Why the dynamic table that the program header `dynamic` locates would make the dynamic loader
// read, write or call outside `segments`, or nullptr (then `symbols` says where the symbol table
// is).
const char* elfDynamicProblem(const ElfW(Phdr) & dynamic, const ElfSegments& segments,
                              ElfSymbolTable* symbols);

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_ELF_DYNAMIC_HPP_
