// Implements elf_dynamic.hpp.
#include "engine/elf_dynamic.hpp"

#include <elf.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <type_traits>
#include <vector>

#include "engine/elf_hash_tables.hpp"

namespace polyhal::cpu {

namespace {

constexpr size_t kWord = sizeof(ElfW(Addr));

#if defined(__i386__) || defined(__arm__) || defined(__mips__)
constexpr ElfW(Xword) kHostPltRelocations = DT_REL;
#else
constexpr ElfW(Xword) kHostPltRelocations = DT_RELA;
#endif

// The relocation that makes the loader call its addend (an IFUNC resolver), on hosts that have
// one; 0 elsewhere.
#if defined(__x86_64__)
constexpr uint32_t kIrelative = R_X86_64_IRELATIVE;
#elif defined(__aarch64__)
constexpr uint32_t kIrelative = R_AARCH64_IRELATIVE;
#elif defined(__i386__)
constexpr uint32_t kIrelative = R_386_IRELATIVE;
#else
constexpr uint32_t kIrelative = 0;
#endif

// The relocations that fill a pointer slot with the load address plus the addend, and with a
// symbol's address plus the addend; 0 where the initialiser arrays' slots are not followed.
#if defined(__x86_64__)
constexpr uint32_t kRelative = R_X86_64_RELATIVE;
constexpr uint32_t kAbsolute = R_X86_64_64;
#elif defined(__aarch64__)
constexpr uint32_t kRelative = R_AARCH64_RELATIVE;
constexpr uint32_t kAbsolute = R_AARCH64_ABS64;
#elif defined(__i386__)
constexpr uint32_t kRelative = R_386_RELATIVE;
constexpr uint32_t kAbsolute = R_386_32;
#else
constexpr uint32_t kRelative = 0;
constexpr uint32_t kAbsolute = 0;
#endif

#if __SIZEOF_POINTER__ == 8
uint64_t relocationSymbol(uint64_t info) {
    return ELF64_R_SYM(info);
}
uint32_t relocationType(uint64_t info) {
    return static_cast<uint32_t>(ELF64_R_TYPE(info));
}
#else
uint64_t relocationSymbol(uint32_t info) {
    return ELF32_R_SYM(info);
}
uint32_t relocationType(uint32_t info) {
    return ELF32_R_TYPE(info);
}
#endif

// `count` items of `itemBytes` bytes, or false if that overflows.
bool bytesOf(uint64_t count, uint64_t itemBytes, size_t* bytes) {
    uint64_t product = 0;
    if (__builtin_mul_overflow(count, itemBytes, &product) || product > SIZE_MAX) return false;
    *bytes = static_cast<size_t>(product);
    return true;
}

class DynamicTable {
  public:
    explicit DynamicTable(const ElfSegments& segments) : segments_(segments) {}

    const char* check(const ElfW(Phdr) & dynamic, ElfSymbolTable* symbols) {
        const char* problem = readEntries(dynamic);
        if (problem == nullptr) problem = checkStrings();
        if (problem == nullptr) problem = countSymbols();
        if (problem == nullptr) problem = checkRelocations();
        if (problem == nullptr) problem = checkSymbols();
        if (problem == nullptr) problem = checkVersions();
        if (problem == nullptr) problem = checkInitialisers();
        if (problem != nullptr) return problem;
        *symbols = ElfSymbolTable{value(DT_SYMTAB), value(DT_STRTAB), symbolCount_, stringBytes_};
        return nullptr;
    }

  private:
    bool has(ElfW(Sxword) tag) const { return values_.count(tag) != 0; }
    ElfW(Xword) value(ElfW(Sxword) tag) const {
        const auto found = values_.find(tag);
        return found == values_.end() ? 0 : found->second;
    }
    const unsigned char* fileBytes(ElfW(Addr) address, size_t bytes) const {
        return segments_.fileBytes(address, bytes);
    }
    bool isString(ElfW(Xword) offset) const { return offset < stringBytes_; }
    // Can a relocation write its word at `address`? Linkers align every word they relocate
    // (GOT entries, pointers in data); a word written one byte off corrupts two.
    bool writable(ElfW(Addr) address) const {
        return address % kWord == 0 &&
               segments_.contains(address, kWord, textRelocations_ ? 0 : PF_W);
    }

    // glibc walks the table to DT_NULL in place (and adjusts its addresses there when the
    // segment is writable), keeping the last entry of each tag.
    const char* readEntries(const ElfW(Phdr) & dynamic) {
        const unsigned char* entries = fileBytes(dynamic.p_vaddr, dynamic.p_memsz);
        if (entries == nullptr || !segments_.contains(dynamic.p_vaddr, dynamic.p_memsz, PF_W)) {
            return "malformed ELF image (its dynamic table lies outside the file part of every "
                   "writable loaded segment)";
        }
        for (size_t i = 0; i < dynamic.p_memsz / sizeof(ElfW(Dyn)); ++i) {
            const auto entry = loadUnaligned<ElfW(Dyn)>(entries + i * sizeof(ElfW(Dyn)));
            if (entry.d_tag == DT_NULL) {
                textRelocations_ = has(DT_TEXTREL) || (value(DT_FLAGS) & DF_TEXTREL) != 0;
                return nullptr;
            }
            // A filter loads its filtee (by a name that may match the program itself) in its
            // place: no kernel module is one.
            if (entry.d_tag == DT_FILTER || entry.d_tag == DT_AUXILIARY) {
                return "malformed ELF image (a filter library: DT_FILTER or DT_AUXILIARY)";
            }
            values_[entry.d_tag] = entry.d_un.d_val;
            if (entry.d_tag == DT_NEEDED || entry.d_tag == DT_SONAME || entry.d_tag == DT_RPATH ||
                entry.d_tag == DT_RUNPATH) {
                names_.push_back(entry);
            }
        }
        return "malformed ELF image (its dynamic table has no DT_NULL end inside its segment)";
    }

    const char* checkStrings() {
        if (!has(DT_STRTAB) || !has(DT_STRSZ) || value(DT_STRSZ) == 0) {
            return "malformed ELF image (no string table: DT_STRTAB and DT_STRSZ)";
        }
        stringBytes_ = value(DT_STRSZ);
        strings_ = fileBytes(value(DT_STRTAB), stringBytes_);
        if (strings_ == nullptr) {
            return "malformed ELF image (DT_STRTAB and DT_STRSZ: the string table lies outside "
                   "the loaded segments)";
        }
        // With a terminating NUL, every offset inside the table names a terminated string.
        if (strings_[stringBytes_ - 1] != '\0') {
            return "malformed ELF image (the string table does not end with a NUL)";
        }
        for (const ElfW(Dyn) & name : names_) {
            if (!isString(name.d_un.d_val)) {
                return "malformed ELF image (DT_NEEDED, DT_SONAME, DT_RPATH or DT_RUNPATH names "
                       "a string outside the string table)";
            }
            // The loader takes an empty name for the program itself, already loaded.
            if (name.d_tag == DT_NEEDED && strings_[name.d_un.d_val] == '\0') {
                return "malformed ELF image (a DT_NEEDED entry names no library)";
            }
        }
        return nullptr;
    }

    // The number of symbols is not in the dynamic table: glibc's lookups (and dladdr) take it
    // from the hash tables, whose buckets and chains must stay inside the symbol table, and its
    // relocations index the table directly (a module that exports nothing may have a GNU hash
    // table that covers none of the undefined symbols its relocations name).
    const char* countSymbols() {
        if (!has(DT_HASH) && !has(DT_GNU_HASH)) {
            return "malformed ELF image (no symbol hash table: DT_HASH or DT_GNU_HASH)";
        }
        size_t sysv = 0;
        size_t gnu = 0;
        if (has(DT_HASH)) {
            if (const char* problem = sysvHashProblem(segments_, value(DT_HASH), &sysv)) {
                return problem;
            }
        }
        if (has(DT_GNU_HASH)) {
            if (const char* problem = gnuHashProblem(segments_, value(DT_GNU_HASH), &gnu)) {
                return problem;
            }
        }
        symbolCount_ = std::max(sysv, gnu);
        return nullptr;
    }

    const char* checkSymbols() {
        size_t bytes = 0;
        if (!has(DT_SYMTAB) || (has(DT_SYMENT) && value(DT_SYMENT) != sizeof(ElfW(Sym))) ||
            !bytesOf(symbolCount_, sizeof(ElfW(Sym)), &bytes)) {
            return "malformed ELF image (no DT_SYMTAB, or a DT_SYMENT of another size than this "
                   "host's symbols)";
        }
        const unsigned char* table = fileBytes(value(DT_SYMTAB), bytes);
        if (table == nullptr) {
            return "malformed ELF image (DT_SYMTAB: the symbol table, as long as its hash "
                   "tables and relocations say, lies outside the loaded segments)";
        }
        for (size_t i = 0; i < symbolCount_; ++i) {
            const auto symbol = loadUnaligned<ElfW(Sym)>(table + i * sizeof(ElfW(Sym)));
            if (!isString(symbol.st_name)) {
                return "malformed ELF image (a symbol's name lies outside the string table)";
            }
            // The loader calls an IFUNC symbol's resolver to learn its address, and a function
            // symbol may be launched as a kernel.
            const unsigned type = ELF64_ST_TYPE(symbol.st_info);
            if ((type == STT_FUNC || type == STT_GNU_IFUNC) && symbol.st_shndx != SHN_UNDEF &&
                symbol.st_shndx != SHN_ABS && !segments_.contains(symbol.st_value, 1, PF_X)) {
                return "malformed ELF image (a function symbol or IFUNC resolver lies outside "
                       "the code segments)";
            }
            // The loader resolves a local symbol to the module's own address for it, so a
            // local undefined one (after the null symbol) makes whatever uses it point at the
            // module's base, and a defined one outside the segments points nowhere.
            const bool local = ELF64_ST_BIND(symbol.st_info) == STB_LOCAL;
            if (i != 0 && symbol.st_shndx == SHN_UNDEF && local) {
                return "malformed ELF image (an undefined local symbol)";
            }
            if (symbol.st_shndx != SHN_UNDEF && symbol.st_shndx != SHN_ABS && type != STT_TLS &&
                !segments_.contains(symbol.st_value, 0, 0)) {
                return "malformed ELF image (a symbol lies outside the loaded segments)";
            }
        }
        return nullptr;
    }

    // glibc sizes its table of versions by the highest index the definitions and needs name,
    // then indexes it by DT_VERSYM's entries (with no table at all when none is named).
    const char* checkVersions() {
        uint64_t highest = 0;
        if (const char* problem = checkVersionDefinitions(&highest)) return problem;
        if (const char* problem = checkVersionNeeds(&highest)) return problem;
        if (!has(DT_VERSYM)) {
            // glibc then reads DT_VERSYM's entry without checking that it is there.
            return highest == 0 ? nullptr
                                : "malformed ELF image (version definitions or needs without "
                                  "DT_VERSYM)";
        }
        size_t bytes = 0;
        bytesOf(symbolCount_, sizeof(ElfW(Versym)), &bytes);
        const unsigned char* versions = fileBytes(value(DT_VERSYM), bytes);
        if (versions == nullptr || highest == 0) {
            return "malformed ELF image (DT_VERSYM lies outside the loaded segments, or comes "
                   "without version definitions or needs)";
        }
        for (size_t i = 0; i < symbolCount_; ++i) {
            if ((loadUnaligned<ElfW(Versym)>(versions + i * sizeof(ElfW(Versym))) & 0x7fff) >
                highest) {
                return "malformed ELF image (a DT_VERSYM entry names a version that is not "
                       "defined or needed)";
            }
        }
        return nullptr;
    }

    const char* checkVersionDefinitions(uint64_t* highest) {
        if (!has(DT_VERDEF)) return nullptr;
        constexpr const char* kOutside =
            "malformed ELF image (DT_VERDEF: a version definition lies outside the loaded "
            "segments, names a string outside the string table or has an unknown version)";
        for (ElfW(Addr) address = value(DT_VERDEF);;) {
            const unsigned char* bytes = fileBytes(address, sizeof(ElfW(Verdef)));
            if (bytes == nullptr) return kOutside;
            const auto definition = loadUnaligned<ElfW(Verdef)>(bytes);
            const unsigned char* aux = nullptr;
            ElfW(Addr) auxAddress = 0;
            if (!__builtin_add_overflow(address, definition.vd_aux, &auxAddress)) {
                aux = fileBytes(auxAddress, sizeof(ElfW(Verdaux)));
            }
            if (definition.vd_version != VER_DEF_CURRENT || aux == nullptr ||
                !isString(loadUnaligned<ElfW(Verdaux)>(aux).vda_name)) {
                return kOutside;
            }
            *highest = std::max<uint64_t>(*highest, definition.vd_ndx & 0x7fff);
            if (definition.vd_next == 0) return nullptr;
            if (__builtin_add_overflow(address, definition.vd_next, &address)) return kOutside;
        }
    }

    const char* checkVersionNeeds(uint64_t* highest) {
        if (!has(DT_VERNEED)) return nullptr;
        constexpr const char* kOutside =
            "malformed ELF image (DT_VERNEED: a version need lies outside the loaded segments, "
            "names a string outside the string table or has an unknown version)";
        for (ElfW(Addr) address = value(DT_VERNEED);;) {
            const unsigned char* bytes = fileBytes(address, sizeof(ElfW(Verneed)));
            if (bytes == nullptr) return kOutside;
            const auto need = loadUnaligned<ElfW(Verneed)>(bytes);
            if (need.vn_version != VER_NEED_CURRENT || !isString(need.vn_file)) return kOutside;
            // glibc asserts that the library named is one the module depends on.
            if (!isDependency(need.vn_file)) {
                return "malformed ELF image (DT_VERNEED names a library that is not one of its "
                       "DT_NEEDED)";
            }
            ElfW(Addr) auxAddress = 0;
            if (__builtin_add_overflow(address, need.vn_aux, &auxAddress)) return kOutside;
            for (;;) {
                const unsigned char* aux = fileBytes(auxAddress, sizeof(ElfW(Vernaux)));
                if (aux == nullptr) return kOutside;
                const auto version = loadUnaligned<ElfW(Vernaux)>(aux);
                if (!isString(version.vna_name)) return kOutside;
                *highest = std::max<uint64_t>(*highest, version.vna_other & 0x7fff);
                if (version.vna_next == 0) break;
                if (__builtin_add_overflow(auxAddress, version.vna_next, &auxAddress)) {
                    return kOutside;
                }
            }
            if (need.vn_next == 0) return nullptr;
            if (__builtin_add_overflow(address, need.vn_next, &address)) return kOutside;
        }
    }

    bool isDependency(ElfW(Xword) name) const {
        const char* wanted = reinterpret_cast<const char*>(strings_ + name);
        return std::any_of(names_.begin(), names_.end(), [&](const ElfW(Dyn) & entry) {
            return entry.d_tag == DT_NEEDED &&
                   std::strcmp(reinterpret_cast<const char*>(strings_ + entry.d_un.d_val),
                               wanted) == 0;
        });
    }

    const char* checkRelocations() {
        if (has(DT_JMPREL) &&
            (!has(DT_PLTRELSZ) || !has(DT_PLTREL) || value(DT_PLTREL) != kHostPltRelocations)) {
            return "malformed ELF image (DT_JMPREL without DT_PLTRELSZ, or a DT_PLTREL that is "
                   "not this host's relocation format)";
        }
        const char* problem = checkTable<ElfW(Rela)>(DT_RELA, DT_RELASZ, DT_RELAENT, DT_RELACOUNT);
        if (problem == nullptr)
            problem = checkTable<ElfW(Rel)>(DT_REL, DT_RELSZ, DT_RELENT, DT_RELCOUNT);
        if (problem == nullptr && has(DT_JMPREL)) {
            problem = kHostPltRelocations == DT_RELA
                          ? checkTable<ElfW(Rela)>(DT_JMPREL, DT_PLTRELSZ, DT_NULL, DT_NULL)
                          : checkTable<ElfW(Rel)>(DT_JMPREL, DT_PLTRELSZ, DT_NULL, DT_NULL);
        }
        if (problem == nullptr) problem = checkRelativeTable();
        return problem;
    }

    // A table of relocations at `addressTag`, `sizeTag` bytes of `entryTag`-byte entries (glibc
    // asserts the entry size, reading the entry unchecked), the first `relativeCountTag` of them
    // relative; DT_NULL: no such tag.
    template <class Relocation>
    const char* checkTable(ElfW(Sxword) addressTag, ElfW(Sxword) sizeTag, ElfW(Sxword) entryTag,
                           ElfW(Sxword) relativeCountTag) {
        if (!has(addressTag)) return nullptr;
        if (!has(sizeTag) || (entryTag != DT_NULL && value(entryTag) != sizeof(Relocation))) {
            return "malformed ELF image (a relocation table without its size, or with entries "
                   "of another size than this host's: DT_RELASZ, DT_RELAENT, DT_RELSZ, "
                   "DT_RELENT, DT_PLTRELSZ)";
        }
        const size_t bytes = value(sizeTag);
        const unsigned char* table = fileBytes(value(addressTag), bytes);
        if (table == nullptr || bytes % sizeof(Relocation) != 0) {
            return "malformed ELF image (a relocation table runs outside the loaded segments: "
                   "DT_RELA, DT_REL or DT_JMPREL and its size)";
        }
        // glibc asserts that the first DT_RELACOUNT (DT_RELCOUNT) of them are relative ones.
        const size_t relative = relativeCountTag == DT_NULL ? 0 : value(relativeCountTag);
        for (size_t at = 0; at < bytes; at += sizeof(Relocation)) {
            const auto relocation = loadUnaligned<Relocation>(table + at);
            if (kRelative != 0 && at / sizeof(Relocation) < relative &&
                relocationType(relocation.r_info) != kRelative) {
                return "malformed ELF image (DT_RELACOUNT or DT_RELCOUNT counts relocations that "
                       "are not relative ones)";
            }
            symbolCount_ =
                std::max<uint64_t>(symbolCount_, relocationSymbol(relocation.r_info) + 1);
            if (!writable(relocation.r_offset)) {
                return "malformed ELF image (a relocation writes outside the writable loaded "
                       "segments, or to an unaligned address)";
            }
            if (inInitialiserArray(relocation.r_offset)) {
                ElfW(Sxword) addend = 0;
                if constexpr (std::is_same_v<Relocation, ElfW(Rela)>) {
                    addend = relocation.r_addend;
                } else {
                    addend = static_cast<ElfW(Sxword)>(inPlaceWord(relocation.r_offset));
                }
                slots_[relocation.r_offset] = Slot{relocationType(relocation.r_info),
                                                   relocationSymbol(relocation.r_info), addend};
            }
            if constexpr (std::is_same_v<Relocation, ElfW(Rela)>) {
                if (kIrelative != 0 && relocationType(relocation.r_info) == kIrelative &&
                    !segments_.contains(relocation.r_addend, 1, PF_X)) {
                    return "malformed ELF image (an IRELATIVE relocation's resolver lies outside "
                           "the code segments)";
                }
            }
        }
        return nullptr;
    }

    // DT_RELR: an address word (bit 0 clear) relocates that word; a bitmap word (bit 0 set)
    // relocates the words its bits 1..63 select after the last one (glibc's elf_dynamic_do_Relr).
    const char* checkRelativeTable() {
        if (!has(DT_RELR)) return nullptr;
        constexpr const char* kOutside =
            "malformed ELF image (DT_RELR: the table, as long as DT_RELRSZ says, lies outside "
            "the loaded segments, or relocates a word outside the writable ones)";
        const size_t bytes = value(DT_RELRSZ);
        const unsigned char* table = fileBytes(value(DT_RELR), bytes);
        if (!has(DT_RELRSZ) || value(DT_RELRENT) != kWord || table == nullptr ||
            bytes % kWord != 0) {
            return kOutside;
        }
        ElfW(Addr) next = 0;
        for (size_t at = 0; at < bytes; at += kWord) {
            const auto entry = loadUnaligned<ElfW(Addr)>(table + at);
            if ((entry & 1) == 0) {
                if (!relocatesRelative(entry)) return kOutside;
                next = entry + kWord;
                continue;
            }
            for (size_t bit = 1; bit < 8 * kWord; ++bit) {
                if (((entry >> bit) & 1) != 0 && !relocatesRelative(next + (bit - 1) * kWord)) {
                    return kOutside;
                }
            }
            next += (8 * kWord - 1) * kWord;
        }
        return nullptr;
    }

    // A RELR relocation of `target`: the load address added to the word there.
    bool relocatesRelative(ElfW(Addr) target) {
        if (!writable(target)) return false;
        if (inInitialiserArray(target)) {
            slots_[target] = Slot{kRelative, 0, static_cast<ElfW(Sxword)>(inPlaceWord(target))};
        }
        return true;
    }

    // The word the file holds at `address` (0 past the file part).
    ElfW(Addr) inPlaceWord(ElfW(Addr) address) const {
        const unsigned char* bytes = fileBytes(address, kWord);
        return bytes == nullptr ? 0 : loadUnaligned<ElfW(Addr)>(bytes);
    }

    bool inInitialiserArray(ElfW(Addr) address) const {
        for (const auto& array : kInitialiserArrays) {
            if (has(array[0]) && address >= value(array[0]) &&
                address - value(array[0]) < value(array[1])) {
                return true;
            }
        }
        return false;
    }

    // Where the relocated initialiser-array slot at `slot` will point, or why that is unknown
    // or outside the code. An undefined symbol's address is the loader's to find.
    const char* slotProblem(ElfW(Addr) slot) const {
        const auto found = slots_.find(slot);
        if (found == slots_.end()) {
            return "malformed ELF image (an entry of DT_INIT_ARRAY, DT_FINI_ARRAY or "
                   "DT_PREINIT_ARRAY is not relocated, so it holds no address in the module)";
        }
        const Slot& relocation = found->second;
        ElfW(Addr) target = relocation.addend;
        if (relocation.type == kAbsolute) {
            const auto symbol = loadUnaligned<ElfW(Sym)>(fileBytes(
                value(DT_SYMTAB) + relocation.symbol * sizeof(ElfW(Sym)), sizeof(ElfW(Sym))));
            if (symbol.st_shndx == SHN_UNDEF || ELF64_ST_TYPE(symbol.st_info) == STT_GNU_IFUNC) {
                return nullptr;
            }
            target += symbol.st_value;
        } else if (relocation.type != kRelative) {
            return "malformed ELF image (an entry of DT_INIT_ARRAY, DT_FINI_ARRAY or "
                   "DT_PREINIT_ARRAY is relocated by a relocation that does not make a function "
                   "address)";
        }
        if (!segments_.contains(target, 1, PF_X)) {
            return "malformed ELF image (an entry of DT_INIT_ARRAY, DT_FINI_ARRAY or "
                   "DT_PREINIT_ARRAY points outside the code segments)";
        }
        return nullptr;
    }

    // The loader calls DT_INIT and DT_FINI, reads DT_INIT_ARRAYSZ (and the others) without
    // checking that it is there, and calls every entry of the arrays once relocated.
    const char* checkInitialisers() {
        for (const ElfW(Sxword) tag : {DT_INIT, DT_FINI}) {
            if (has(tag) && !segments_.contains(value(tag), 1, PF_X)) {
                return "malformed ELF image (DT_INIT or DT_FINI lies outside the code segments)";
            }
        }
        for (const auto& array : kInitialiserArrays) {
            if (!has(array[0])) continue;
            if (!has(array[1]) || value(array[1]) % kWord != 0 ||
                !segments_.contains(value(array[0]), value(array[1]), PF_R)) {
                return "malformed ELF image (DT_INIT_ARRAY, DT_FINI_ARRAY or DT_PREINIT_ARRAY: "
                       "the array, as long as its size entry says, lies outside the loaded "
                       "segments)";
            }
            for (ElfW(Xword) at = 0; kRelative != 0 && at < value(array[1]); at += kWord) {
                if (const char* problem = slotProblem(value(array[0]) + at)) return problem;
            }
        }
        return nullptr;
    }

    // Each array's address tag and size tag.
    static constexpr ElfW(Sxword) kInitialiserArrays[][2] = {
        {DT_INIT_ARRAY, DT_INIT_ARRAYSZ},
        {DT_FINI_ARRAY, DT_FINI_ARRAYSZ},
        {DT_PREINIT_ARRAY, DT_PREINIT_ARRAYSZ}};

    // How a relocation fills an initialiser-array slot.
    struct Slot {
        uint32_t type;
        uint64_t symbol;
        ElfW(Sxword) addend;
    };

    const ElfSegments& segments_;
    std::map<ElfW(Sxword), ElfW(Xword)> values_;
    std::vector<ElfW(Dyn)> names_;      // the entries that name a string
    std::map<ElfW(Addr), Slot> slots_;  // the relocations of the initialiser arrays' slots
    bool textRelocations_ = false;
    const unsigned char* strings_ = nullptr;
    size_t stringBytes_ = 0;
    size_t symbolCount_ = 0;
};

}  // namespace

const char* elfDynamicProblem(const ElfW(Phdr) & dynamic, const ElfSegments& segments,
                              ElfSymbolTable* symbols) {
    return DynamicTable(segments).check(dynamic, symbols);
}

}  // namespace polyhal::cpu
