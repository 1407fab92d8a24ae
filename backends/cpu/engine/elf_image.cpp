// Implements elf_image.hpp.
#include "engine/elf_image.hpp"

#include <elf.h>
#include <endian.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace polyhal::cpu {

namespace {

#if __BYTE_ORDER == __LITTLE_ENDIAN
constexpr unsigned char kHostElfData = ELFDATA2LSB;
#else
constexpr unsigned char kHostElfData = ELFDATA2MSB;
#endif
constexpr unsigned char kHostElfClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;

// Does the table of `count` entries of `entrySize` bytes at `offset` lie inside `size` bytes?
bool tableFits(uint64_t offset, uint64_t count, uint64_t entrySize, size_t size) {
    uint64_t bytes = 0;
    uint64_t end = 0;
    return !__builtin_mul_overflow(count, entrySize, &bytes) &&
           !__builtin_add_overflow(offset, bytes, &end) && end <= size;
}

}  // namespace

const char* elfImageProblem(const unsigned char* image, size_t size) {
    if (size < SELFMAG || std::memcmp(image, ELFMAG, SELFMAG) != 0) {
        return "not an ELF shared object (the image does not start with the ELF magic number)";
    }
    if (size < sizeof(ElfW(Ehdr))) {
        return "truncated ELF image (shorter than its ELF header)";
    }
    if (image[EI_CLASS] != kHostElfClass || image[EI_DATA] != kHostElfData) {
        return "an ELF image of another word size or byte order than this host";
    }
    ElfW(Ehdr) header;
    std::memcpy(&header, image, sizeof header);
    if (header.e_type != ET_DYN) {
        return "not an ELF shared object (an executable, object file or core dump; build CPU "
               "modules with -shared -fPIC)";
    }
    if (header.e_phnum == 0 || header.e_phentsize != sizeof(ElfW(Phdr)) ||
        !tableFits(header.e_phoff, header.e_phnum, header.e_phentsize, size)) {
        return "truncated or malformed ELF image (its program header table is missing or runs "
               "past the end of the image)";
    }
    if (header.e_shnum != 0 &&
        !tableFits(header.e_shoff, header.e_shnum, header.e_shentsize, size)) {
        return "truncated ELF image (its section header table runs past the end of the image)";
    }
    for (ElfW(Half) i = 0; i < header.e_phnum; ++i) {
        ElfW(Phdr) segment;
        std::memcpy(&segment, image + header.e_phoff + i * sizeof segment, sizeof segment);
        if (!tableFits(segment.p_offset, 1, segment.p_filesz, size)) {
            return "truncated ELF image (a segment runs past the end of the image)";
        }
    }
    return nullptr;
}

}  // namespace polyhal::cpu
