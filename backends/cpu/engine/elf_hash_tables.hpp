// The symbol hash tables of a host shared object, checked as glibc walks them (dl-lookup.c,
// dl-addr.c): their buckets and chains name the symbols a lookup reads, and, as the dynamic table
// holds no symbol count, they say how many symbols there are.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_ELF_HASH_TABLES_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_ELF_HASH_TABLES_HPP_

#include <link.h>

#include <cstddef>

#include "engine/elf_segments.hpp"

namespace polyhal::cpu {

// Why the DT_HASH table at `address` would lead a lookup outside `segments`, or nullptr; then
// `count` is the number of symbols it covers.
const char* sysvHashProblem(const ElfSegments& segments, ElfW(Addr) address, size_t* count);

// The same for the DT_GNU_HASH table at `address`.
const char* gnuHashProblem(const ElfSegments& segments, ElfW(Addr) address, size_t* count);

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_ELF_HASH_TABLES_HPP_
