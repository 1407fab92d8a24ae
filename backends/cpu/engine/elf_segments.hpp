// The loadable segments of a host shared object, as the dynamic loader will map them, checked
// before it does: glibc's _dl_map_object_from_fd trusts their order, sizes and addresses, and
// maps each segment with MAP_FIXED relative to the first, so one that lies outside the range it
// reserved overwrites whatever the process had mapped there.
#ifndef POLYHAL_BACKENDS_CPU_ENGINE_ELF_SEGMENTS_HPP_
#define POLYHAL_BACKENDS_CPU_ENGINE_ELF_SEGMENTS_HPP_

#include <link.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace polyhal::cpu {

// The `T` at `bytes`, which need not be aligned.
template <class T>
T loadUnaligned(const unsigned char* bytes) {
    T value;
    std::memcpy(&value, bytes, sizeof value);
    return value;
}

class ElfSegments {
  public:
    // The PT_LOAD segments of `image` (a host ELF image whose program header table and segments
    // lie inside its `size` bytes, as elfLayoutProblem checks), or the reason they cannot be
    // mapped safely: none at all, an empty one, out of order or overlapping, a file part larger
    // than the memory part, an end past the user address space, an absurd alignment.
    const char* read(const unsigned char* image, size_t size);

    // Where the `bytes` bytes at address `address` (relative to the load address, as in the
    // dynamic table) are in the image, if they lie in the file part of one readable segment;
    // nullptr otherwise. The caller copies from it (the address need not be aligned).
    const unsigned char* fileBytes(ElfW(Addr) address, size_t bytes) const;

    // Whether the `bytes` bytes at `address` lie in one segment whose flags include `flags`
    // (PF_W for the target of a relocation, PF_X for code; 0 for any segment).
    bool contains(ElfW(Addr) address, size_t bytes, ElfW(Word) flags) const;

  private:
    struct Segment {
        ElfW(Addr) address;
        ElfW(Off) offset;
        ElfW(Xword) fileBytes;
        ElfW(Xword) memoryBytes;
        ElfW(Word) flags;
    };
    const Segment* segmentHolding(ElfW(Addr) address, size_t bytes) const;

    const unsigned char* image_ = nullptr;
    std::vector<Segment> segments_;
};

}  // namespace polyhal::cpu

#endif  // POLYHAL_BACKENDS_CPU_ENGINE_ELF_SEGMENTS_HPP_
