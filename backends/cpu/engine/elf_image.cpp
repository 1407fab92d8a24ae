// Implements elf_image.hpp.
#include "engine/elf_image.hpp"

#include <elf.h>
#include <endian.h>
#include <link.h>

#include <cstring>

#include "support/elf_layout.hpp"

namespace polyhal::cpu {

namespace {

#if __BYTE_ORDER == __LITTLE_ENDIAN
constexpr unsigned char kHostElfData = ELFDATA2LSB;
#else
constexpr unsigned char kHostElfData = ELFDATA2MSB;
#endif
constexpr unsigned char kHostElfClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;

}  // namespace

const char* elfImageProblem(const unsigned char* image, size_t size) {
    if (!isElfImage(image, size)) {
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
    if (header.e_phnum == 0) {
        return "malformed ELF image (it has no program header table)";
    }
    return elfLayoutProblem(image, size);
}

}  // namespace polyhal::cpu
