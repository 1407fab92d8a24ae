// Implements elf_hash_tables.hpp.
#include "engine/elf_hash_tables.hpp"

#include <algorithm>
#include <cstdint>

namespace polyhal::cpu {

namespace {

constexpr size_t kWord = sizeof(ElfW(Addr));

}  // namespace

const char* sysvHashProblem(const ElfSegments& segments, ElfW(Addr) address, size_t* count) {
    const unsigned char* header = segments.fileBytes(address, 2 * sizeof(uint32_t));
    if (header == nullptr) {
        return "malformed ELF image (DT_HASH lies outside the loaded segments)";
    }
    const uint64_t buckets = loadUnaligned<uint32_t>(header);
    const uint64_t chains = loadUnaligned<uint32_t>(header + sizeof(uint32_t));
    const uint64_t words = 2 + buckets + chains;
    const unsigned char* table = segments.fileBytes(address, words * sizeof(uint32_t));
    if (buckets == 0 || table == nullptr) {
        return "malformed ELF image (DT_HASH has no buckets, or its buckets and chains run "
               "outside the loaded segments)";
    }
    for (uint64_t i = 2; i < words; ++i) {
        if (loadUnaligned<uint32_t>(table + i * sizeof(uint32_t)) >= chains) {
            return "malformed ELF image (a DT_HASH bucket or chain names a symbol past the "
                   "table)";
        }
    }
    *count = chains;
    return nullptr;
}

// Layout: nbuckets, symoffset, bloom words, bloom shift; the bloom filter; the buckets; one
// chain word per symbol from symoffset on, the last of each chain with bit 0 set (the
// GNU hash section as binutils writes it; glibc's _dl_setup_hash and dl-addr.c read it so).
const char* gnuHashProblem(const ElfSegments& segments, ElfW(Addr) address, size_t* count) {
    const unsigned char* header = segments.fileBytes(address, 4 * sizeof(uint32_t));
    if (header == nullptr) {
        return "malformed ELF image (DT_GNU_HASH lies outside the loaded segments)";
    }
    const uint64_t buckets = loadUnaligned<uint32_t>(header);
    const uint64_t offset = loadUnaligned<uint32_t>(header + 4);
    const uint64_t bloomWords = loadUnaligned<uint32_t>(header + 8);
    const uint64_t bloomShift = loadUnaligned<uint32_t>(header + 12);
    if (buckets == 0 || bloomWords == 0 || (bloomWords & (bloomWords - 1)) != 0 ||
        bloomShift >= 8 * kWord) {
        return "malformed ELF image (DT_GNU_HASH: no buckets, or a bloom filter whose size "
               "is not a power of two or whose shift exceeds a word)";
    }
    const uint64_t chainStart = 16 + bloomWords * kWord + buckets * sizeof(uint32_t);
    const unsigned char* table = segments.fileBytes(address, chainStart);
    if (table == nullptr) {
        return "malformed ELF image (DT_GNU_HASH: its buckets run outside the loaded "
               "segments)";
    }
    uint64_t lastChain = 0;
    for (uint64_t i = 0; i < buckets; ++i) {
        const uint64_t first = loadUnaligned<uint32_t>(table + chainStart - (buckets - i) * 4);
        if (first != 0 && first < offset) {
            return "malformed ELF image (a DT_GNU_HASH bucket names a symbol below the "
                   "hashed ones)";
        }
        lastChain = std::max(lastChain, first);
    }
    uint64_t symbols = offset;
    if (lastChain != 0) {
        // Chains are laid out in bucket order: the one that starts last ends the table.
        uint64_t symbol = lastChain;
        for (;; ++symbol) {
            const unsigned char* word =
                segments.fileBytes(address + chainStart + (symbol - offset) * 4, sizeof(uint32_t));
            if (word == nullptr) {
                return "malformed ELF image (a DT_GNU_HASH chain runs outside the loaded "
                       "segments)";
            }
            if ((loadUnaligned<uint32_t>(word) & 1) != 0) break;
        }
        symbols = symbol + 1;
        if (segments.fileBytes(address + chainStart, (symbols - offset) * 4) == nullptr) {
            return "malformed ELF image (the DT_GNU_HASH chains run outside the loaded "
                   "segments)";
        }
    }
    *count = symbols;
    return nullptr;
}

}  // namespace polyhal::cpu
