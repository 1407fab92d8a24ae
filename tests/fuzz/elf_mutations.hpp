// Single-field mutants of a host ELF shared object: each field of its ELF header, program
// headers, section headers, dynamic table, dynamic symbols and relocations, set in turn to values
// on the edges a loader has to check (zero, all ones, one past, just outside the file or the
// loaded segments, huge, the top of the address space).
#ifndef POLYHAL_TESTS_FUZZ_ELF_MUTATIONS_HPP_
#define POLYHAL_TESTS_FUZZ_ELF_MUTATIONS_HPP_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace polyhal::testing {

using Image = std::vector<unsigned char>;

struct ElfField {
    std::string name;  // e.g. "PT_LOAD#1.p_vaddr", "DT_STRTAB.d_val", ".dynsym.sh_offset"
    size_t offset;     // of its bytes in the image
    size_t width;      // 1, 2, 4 or 8 bytes, in the image's (the host's) byte order
};

// The fields of `image`, a shared object of the host's word size and byte order.
std::vector<ElfField> elfFields(const Image& image);

// The field called `name`, or nullptr.
const ElfField* findField(const std::vector<ElfField>& fields, const std::string& name);

// The values worth trying in `field` of `image` (distinct, and different from its own).
std::vector<uint64_t> edgeValues(const Image& image, const ElfField& field);

// `image` with `field` set to `value` (truncated to the field's width).
Image mutated(const Image& image, const ElfField& field, uint64_t value);

// Whether setting `field` to `value` rewrites what the module's code computes rather than
// corrupting what the dynamic loader reads: a symbol's value or section (an undefined symbol
// made defined), a relocation's addend, a relocation's type or symbol when the symbol stays in
// the table, a relocation table dropped or shortened (pointers left unrelocated), DT_INIT or
// DT_FINI moved within the code. Such a mutant is another program, which
// no check of the image can tell from a real one (docs/reliability.md): its constructors and
// destructors run whatever its relocations now make of its pointers.
bool rewritesProgram(const Image& image, const ElfField& field, uint64_t value);

// The first address past every loadable segment of `image`.
uint64_t loadedEnd(const Image& image);

// The start of the highest page of the host's address space.
constexpr uint64_t kTopPage = ~uint64_t{0xfff};

}  // namespace polyhal::testing

#endif  // POLYHAL_TESTS_FUZZ_ELF_MUTATIONS_HPP_
