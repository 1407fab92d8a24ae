// Implements elf_segments.hpp.
#include "engine/elf_segments.hpp"

#include <elf.h>

#include <cstdint>
#include <cstring>

namespace polyhal::cpu {

namespace {

// Below every 64-bit host's user address space (x86-64 and AArch64 with 48-bit addresses have
// 2^47 or more); a module asks for far less. On a 32-bit host an overflowing end is refused
// instead.
constexpr uint64_t kAddressLimit = sizeof(void*) == 8 ? uint64_t{1} << 47 : uint64_t{1} << 32;
// glibc reserves the span of every segment plus the largest alignment in one mapping; real
// objects ask for a page up to 2 MiB (x86-64's old max-page-size), 64 KiB on AArch64.
constexpr uint64_t kMaxAlignment = uint64_t{1} << 30;

bool isPowerOfTwo(uint64_t value) {
    return value != 0 && (value & (value - 1)) == 0;
}

}  // namespace

const char* ElfSegments::read(const unsigned char* image, size_t /*size*/) {
    image_ = image;
    segments_.clear();
    ElfW(Ehdr) header;
    std::memcpy(&header, image, sizeof header);
    uint64_t end = 0;      // of the last segment's memory
    uint64_t fileEnd = 0;  // of its bytes in the file
    for (size_t i = 0; i < header.e_phnum; ++i) {
        ElfW(Phdr) program;
        std::memcpy(&program, image + header.e_phoff + i * sizeof program, sizeof program);
        if (program.p_type != PT_LOAD) continue;
        if (program.p_memsz == 0) {
            return "malformed ELF image (an empty loadable segment)";
        }
        if (program.p_filesz > program.p_memsz) {
            return "malformed ELF image (a loadable segment with more file bytes than memory "
                   "bytes)";
        }
        uint64_t segmentEnd = 0;
        if (__builtin_add_overflow(uint64_t{program.p_vaddr}, uint64_t{program.p_memsz},
                                   &segmentEnd) ||
            segmentEnd > kAddressLimit) {
            return "malformed ELF image (a loadable segment ends past the user address space)";
        }
        if (program.p_vaddr < end) {
            return "malformed ELF image (loadable segments out of address order or "
                   "overlapping)";
        }
        // Linkers lay segments out in the file in address order; one that maps bytes an
        // earlier one already maps (its code the ELF header, say) is a corrupt offset.
        if (program.p_offset < fileEnd) {
            return "malformed ELF image (loadable segments out of file order or sharing file "
                   "bytes)";
        }
        // Code is all in the file: zero-filled code is a corrupt size.
        if ((program.p_flags & PF_X) != 0 && program.p_filesz != program.p_memsz) {
            return "malformed ELF image (an executable segment with bytes missing from the "
                   "file)";
        }
        if (program.p_align > 1 &&
            (!isPowerOfTwo(program.p_align) || program.p_align > kMaxAlignment)) {
            return "malformed ELF image (a loadable segment's alignment is not a power of two "
                   "up to 1 GiB)";
        }
        end = segmentEnd;
        fileEnd = program.p_offset + program.p_filesz;
        segments_.push_back(Segment{program.p_vaddr, program.p_offset, program.p_filesz,
                                    program.p_memsz, program.p_flags});
    }
    if (segments_.empty()) return "malformed ELF image (it has no loadable segment)";
    return nullptr;
}

const ElfSegments::Segment* ElfSegments::segmentHolding(ElfW(Addr) address, size_t bytes) const {
    for (const Segment& segment : segments_) {
        if (address >= segment.address && address - segment.address <= segment.memoryBytes &&
            bytes <= segment.memoryBytes - (address - segment.address)) {
            return &segment;
        }
    }
    return nullptr;
}

const unsigned char* ElfSegments::fileBytes(ElfW(Addr) address, size_t bytes) const {
    const Segment* segment = segmentHolding(address, bytes);
    if (segment == nullptr || (segment->flags & PF_R) == 0) return nullptr;
    const uint64_t within = address - segment->address;
    if (within > segment->fileBytes || bytes > segment->fileBytes - within) return nullptr;
    return image_ + segment->offset + within;
}

bool ElfSegments::contains(ElfW(Addr) address, size_t bytes, ElfW(Word) flags) const {
    const Segment* segment = segmentHolding(address, bytes);
    return segment != nullptr && (segment->flags & flags) == flags;
}

}  // namespace polyhal::cpu
