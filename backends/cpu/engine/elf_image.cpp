// Implements elf_image.hpp.
#include "engine/elf_image.hpp"

#include <elf.h>
#include <endian.h>
#include <link.h>

#include <cstring>

#include "engine/elf_segments.hpp"
#include "plugin_common/elf_layout.hpp"

namespace polyhal::cpu {

namespace {

#if __BYTE_ORDER == __LITTLE_ENDIAN
constexpr unsigned char kHostElfData = ELFDATA2LSB;
#else
constexpr unsigned char kHostElfData = ELFDATA2MSB;
#endif
constexpr unsigned char kHostElfClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;

// The program headers other than PT_LOAD that glibc follows into the mapped image
// (dl-load.c): the dynamic table (returned in `dynamic`), the TLS initialisation image, the
// range made read-only after relocation, the notes it parses, and the program header table it
// hands to dl_iterate_phdr (the unwinder reads it on every throw, in any library).
const char* programHeaderProblem(const unsigned char* image, const ElfSegments& segments,
                                 ElfW(Phdr) * dynamic) {
    ElfW(Ehdr) header;
    std::memcpy(&header, image, sizeof header);
    bool dynamicFound = false;
    for (size_t i = 0; i < header.e_phnum; ++i) {
        ElfW(Phdr) program;
        std::memcpy(&program, image + header.e_phoff + i * sizeof program, sizeof program);
        switch (program.p_type) {
        case PT_DYNAMIC:
            *dynamic = program;  // glibc keeps the last one
            dynamicFound = true;
            break;
        case PT_TLS:
            if (program.p_memsz != 0 &&
                (program.p_filesz > program.p_memsz ||
                 (program.p_align > 1 && (program.p_align & (program.p_align - 1)) != 0) ||
                 segments.fileBytes(program.p_vaddr, program.p_filesz) == nullptr)) {
                return "malformed ELF image (its TLS segment lies outside the loaded segments or "
                       "has an alignment that is not a power of two)";
            }
            break;
        case PT_GNU_RELRO:
            if (!segments.contains(program.p_vaddr, program.p_memsz, 0)) {
                return "malformed ELF image (its read-only-after-relocation range lies outside "
                       "the loaded segments)";
            }
            break;
        case PT_NOTE:
        case PT_GNU_PROPERTY:
            if (segments.fileBytes(program.p_vaddr, program.p_memsz) == nullptr) {
                return "malformed ELF image (a note segment lies outside the loaded segments)";
            }
            break;
        case PT_PHDR:
            if (segments.fileBytes(program.p_vaddr, header.e_phnum * sizeof program) !=
                image + header.e_phoff) {
                return "malformed ELF image (PT_PHDR does not locate the program header table "
                       "in the loaded segments)";
            }
            break;
        default: break;
        }
    }
    if (!dynamicFound) return "malformed ELF image (it has no dynamic table, PT_DYNAMIC)";
    return nullptr;
}

}  // namespace

const char* elfImageProblem(const unsigned char* image, size_t size, ElfSymbolTable* symbols) {
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
    if (header.e_phnum == 0 || header.e_phnum == PN_XNUM) {
        // glibc reads e_phnum entries, with no extended numbering.
        return "malformed ELF image (it has no program header table, or one of 65535 entries "
               "or more)";
    }
    if (const char* problem = elfLayoutProblem(image, size)) return problem;
    ElfSegments segments;
    if (const char* problem = segments.read(image, size)) return problem;
    ElfW(Phdr) dynamic{};
    if (const char* problem = programHeaderProblem(image, segments, &dynamic)) return problem;
    return elfDynamicProblem(dynamic, segments, symbols);
}

}  // namespace polyhal::cpu
