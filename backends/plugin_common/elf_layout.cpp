// Implements elf_layout.hpp.
#include "plugin_common/elf_layout.hpp"

#include <elf.h>
#include <endian.h>

#include <cstdint>
#include <cstring>

namespace polyhal {

namespace {

// Does the table of `count` entries of `entrySize` bytes at `offset` lie inside `size` bytes?
bool tableFits(uint64_t offset, uint64_t count, uint64_t entrySize, size_t size) {
    uint64_t bytes = 0;
    uint64_t end = 0;
    return !__builtin_mul_overflow(count, entrySize, &bytes) &&
           !__builtin_add_overflow(offset, bytes, &end) && end <= size;
}

// A header field read in the image's byte order.
template <class T>
T field(T value, bool swap) {
    if (!swap) return value;
    if constexpr (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(value));
    if constexpr (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(value));
    if constexpr (sizeof(T) == 8) return static_cast<T>(__builtin_bswap64(value));
    return value;
}

template <class Ehdr, class Phdr, class Shdr>
const char* layoutProblem(const unsigned char* image, size_t size, bool swap) {
    if (size < sizeof(Ehdr)) return "truncated ELF image (shorter than its ELF header)";
    Ehdr header;
    std::memcpy(&header, image, sizeof header);
    const uint64_t phoff = field(header.e_phoff, swap);
    uint64_t phnum = field(header.e_phnum, swap);
    const uint64_t shoff = field(header.e_shoff, swap);
    uint64_t shnum = field(header.e_shnum, swap);
    // Extended numbering: counts too large for the header are in the first section header.
    if ((shnum == 0 && shoff != 0) || phnum == PN_XNUM) {
        if (field(header.e_shentsize, swap) != sizeof(Shdr) ||
            !tableFits(shoff, 1, sizeof(Shdr), size)) {
            return "truncated or malformed ELF image (its first section header, which holds its "
                   "table sizes, runs past the end of the image)";
        }
        Shdr first;
        std::memcpy(&first, image + shoff, sizeof first);
        if (shnum == 0) shnum = field(first.sh_size, swap);
        if (phnum == PN_XNUM) phnum = field(first.sh_info, swap);
    }
    if (phnum != 0 && (field(header.e_phentsize, swap) != sizeof(Phdr) ||
                       !tableFits(phoff, phnum, sizeof(Phdr), size))) {
        return "truncated or malformed ELF image (its program header table runs past the end "
               "of the image)";
    }
    if (shnum != 0 && (field(header.e_shentsize, swap) != sizeof(Shdr) ||
                       !tableFits(shoff, shnum, sizeof(Shdr), size))) {
        return "truncated or malformed ELF image (its section header table runs past the end "
               "of the image)";
    }
    for (uint64_t i = 0; i < phnum; ++i) {
        Phdr segment;
        std::memcpy(&segment, image + phoff + i * sizeof segment, sizeof segment);
        if (!tableFits(field(segment.p_offset, swap), 1, field(segment.p_filesz, swap), size)) {
            return "truncated ELF image (a segment runs past the end of the image)";
        }
    }
    for (uint64_t i = 0; i < shnum; ++i) {
        Shdr section;
        std::memcpy(&section, image + shoff + i * sizeof section, sizeof section);
        if (field(section.sh_type, swap) != SHT_NOBITS &&
            !tableFits(field(section.sh_offset, swap), 1, field(section.sh_size, swap), size)) {
            return "truncated ELF image (a section runs past the end of the image)";
        }
    }
    if (shnum != 0 && field(header.e_shstrndx, swap) >= shnum &&
        field(header.e_shstrndx, swap) != SHN_XINDEX) {
        return "malformed ELF image (its section name table is not one of its sections)";
    }
    return nullptr;
}

}  // namespace

bool isElfImage(const unsigned char* image, size_t size) {
    return size >= SELFMAG && std::memcmp(image, ELFMAG, SELFMAG) == 0;
}

const char* elfLayoutProblem(const unsigned char* image, size_t size) {
    if (!isElfImage(image, size) || size <= EI_DATA) {
        return "not an ELF image (it does not start with the ELF magic number)";
    }
    if (image[EI_DATA] != ELFDATA2LSB && image[EI_DATA] != ELFDATA2MSB) {
        return "malformed ELF image (unknown byte order)";
    }
#if __BYTE_ORDER == __LITTLE_ENDIAN
    const bool swap = image[EI_DATA] == ELFDATA2MSB;
#else
    const bool swap = image[EI_DATA] == ELFDATA2LSB;
#endif
    switch (image[EI_CLASS]) {
    case ELFCLASS64: return layoutProblem<Elf64_Ehdr, Elf64_Phdr, Elf64_Shdr>(image, size, swap);
    case ELFCLASS32: return layoutProblem<Elf32_Ehdr, Elf32_Phdr, Elf32_Shdr>(image, size, swap);
    default: return "malformed ELF image (unknown word size)";
    }
}

}  // namespace polyhal
