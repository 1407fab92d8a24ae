// Implements elf_mutations.hpp.
#include "elf_mutations.hpp"

#include <elf.h>
#include <link.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace polyhal::testing {

namespace {

template <class T>
T read(const Image& image, size_t offset) {
    T value{};
    if (offset + sizeof value <= image.size())
        std::memcpy(&value, image.data() + offset, sizeof value);
    return value;
}

const char* programType(uint32_t type) {
    switch (type) {
    case PT_LOAD: return "PT_LOAD";
    case PT_DYNAMIC: return "PT_DYNAMIC";
    case PT_INTERP: return "PT_INTERP";
    case PT_NOTE: return "PT_NOTE";
    case PT_PHDR: return "PT_PHDR";
    case PT_TLS: return "PT_TLS";
    case PT_GNU_EH_FRAME: return "PT_GNU_EH_FRAME";
    case PT_GNU_STACK: return "PT_GNU_STACK";
    case PT_GNU_RELRO: return "PT_GNU_RELRO";
    case PT_GNU_PROPERTY: return "PT_GNU_PROPERTY";
    default: return "PT_OTHER";
    }
}

std::string dynamicTag(int64_t tag) {
    static const struct {
        int64_t tag;
        const char* name;
    } kNames[] = {
        {DT_NULL, "DT_NULL"},
        {DT_NEEDED, "DT_NEEDED"},
        {DT_PLTRELSZ, "DT_PLTRELSZ"},
        {DT_PLTGOT, "DT_PLTGOT"},
        {DT_HASH, "DT_HASH"},
        {DT_STRTAB, "DT_STRTAB"},
        {DT_SYMTAB, "DT_SYMTAB"},
        {DT_RELA, "DT_RELA"},
        {DT_RELASZ, "DT_RELASZ"},
        {DT_RELAENT, "DT_RELAENT"},
        {DT_STRSZ, "DT_STRSZ"},
        {DT_SYMENT, "DT_SYMENT"},
        {DT_INIT, "DT_INIT"},
        {DT_FINI, "DT_FINI"},
        {DT_SONAME, "DT_SONAME"},
        {DT_RPATH, "DT_RPATH"},
        {DT_SYMBOLIC, "DT_SYMBOLIC"},
        {DT_REL, "DT_REL"},
        {DT_RELSZ, "DT_RELSZ"},
        {DT_RELENT, "DT_RELENT"},
        {DT_PLTREL, "DT_PLTREL"},
        {DT_DEBUG, "DT_DEBUG"},
        {DT_TEXTREL, "DT_TEXTREL"},
        {DT_JMPREL, "DT_JMPREL"},
        {DT_BIND_NOW, "DT_BIND_NOW"},
        {DT_INIT_ARRAY, "DT_INIT_ARRAY"},
        {DT_FINI_ARRAY, "DT_FINI_ARRAY"},
        {DT_INIT_ARRAYSZ, "DT_INIT_ARRAYSZ"},
        {DT_FINI_ARRAYSZ, "DT_FINI_ARRAYSZ"},
        {DT_RUNPATH, "DT_RUNPATH"},
        {DT_FLAGS, "DT_FLAGS"},
        {DT_PREINIT_ARRAY, "DT_PREINIT_ARRAY"},
        {DT_PREINIT_ARRAYSZ, "DT_PREINIT_ARRAYSZ"},
        {DT_RELRSZ, "DT_RELRSZ"},
        {DT_RELR, "DT_RELR"},
        {DT_RELRENT, "DT_RELRENT"},
        {DT_GNU_HASH, "DT_GNU_HASH"},
        {DT_VERSYM, "DT_VERSYM"},
        {DT_RELACOUNT, "DT_RELACOUNT"},
        {DT_RELCOUNT, "DT_RELCOUNT"},
        {DT_FLAGS_1, "DT_FLAGS_1"},
        {DT_VERDEF, "DT_VERDEF"},
        {DT_VERDEFNUM, "DT_VERDEFNUM"},
        {DT_VERNEED, "DT_VERNEED"},
        {DT_VERNEEDNUM, "DT_VERNEEDNUM"},
    };
    for (const auto& known : kNames) {
        if (known.tag == tag) return known.name;
    }
    return "DT_" + std::to_string(tag);
}

class FieldList {
  public:
    explicit FieldList(std::vector<ElfField>* fields) : fields_(fields) {}
    // The member `member` of the structure at `base`, called `prefix.name`.
    template <class Struct, class Member>
    void add(const std::string& prefix, const char* name, size_t base, Member Struct::*member) {
        const Struct probe{};
        const size_t offset = reinterpret_cast<const unsigned char*>(&(probe.*member)) -
                              reinterpret_cast<const unsigned char*>(&probe);
        fields_->push_back(ElfField{prefix + name, base + offset, sizeof(Member)});
    }

  private:
    std::vector<ElfField>* fields_;
};

// The field's value, and `value` stored in it, in the host's byte order.
uint64_t loadField(const Image& image, const ElfField& field) {
    const unsigned char* at = image.data() + field.offset;
    switch (field.width) {
    case 1: return *at;
    case 2: return read<uint16_t>(image, field.offset);
    case 4: return read<uint32_t>(image, field.offset);
    default: return read<uint64_t>(image, field.offset);
    }
}

template <class T>
void store(unsigned char* at, uint64_t value) {
    const T narrow = static_cast<T>(value);
    std::memcpy(at, &narrow, sizeof narrow);
}

void storeField(Image* image, const ElfField& field, uint64_t value) {
    unsigned char* at = image->data() + field.offset;
    switch (field.width) {
    case 1: return store<uint8_t>(at, value);
    case 2: return store<uint16_t>(at, value);
    case 4: return store<uint32_t>(at, value);
    default: return store<uint64_t>(at, value);
    }
}

#define POLYHAL_FIELD(list, prefix, base, Struct, member) \
    list.add(prefix, "." #member, base, &Struct::member)

// The structure occurrence names: "PT_LOAD#0", "PT_LOAD#1", "PT_DYNAMIC#0".
std::string occurrence(std::vector<std::string>* seen, const std::string& kind) {
    const size_t index = std::count(seen->begin(), seen->end(), kind);
    seen->push_back(kind);
    return kind + "#" + std::to_string(index);
}

// The number of entries of the image's .dynsym section.
uint64_t dynamicSymbolCount(const Image& image) {
    const auto header = read<ElfW(Ehdr)>(image, 0);
    for (size_t i = 0; i < header.e_shnum; ++i) {
        const auto section = read<ElfW(Shdr)>(image, header.e_shoff + i * sizeof(ElfW(Shdr)));
        if (section.sh_type == SHT_DYNSYM) return section.sh_size / sizeof(ElfW(Sym));
    }
    return 0;
}

}  // namespace

std::vector<ElfField> elfFields(const Image& image) {
    std::vector<ElfField> fields;
    FieldList list(&fields);
    using Ehdr = ElfW(Ehdr);
    using Phdr = ElfW(Phdr);
    using Shdr = ElfW(Shdr);
    for (size_t i = EI_CLASS; i <= EI_ABIVERSION; ++i) {
        fields.push_back(ElfField{"e_ident[" + std::to_string(i) + "]", i, 1});
    }
    POLYHAL_FIELD(list, "", 0, Ehdr, e_type);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_machine);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_version);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_entry);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_phoff);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_shoff);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_flags);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_ehsize);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_phentsize);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_phnum);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_shentsize);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_shnum);
    POLYHAL_FIELD(list, "", 0, Ehdr, e_shstrndx);
    const auto header = read<Ehdr>(image, 0);

    std::vector<std::string> seen;
    for (size_t i = 0; i < header.e_phnum; ++i) {
        const size_t base = header.e_phoff + i * sizeof(Phdr);
        const auto program = read<Phdr>(image, base);
        const std::string prefix = occurrence(&seen, programType(program.p_type));
        POLYHAL_FIELD(list, prefix, base, Phdr, p_type);
        POLYHAL_FIELD(list, prefix, base, Phdr, p_flags);
        POLYHAL_FIELD(list, prefix, base, Phdr, p_offset);
        POLYHAL_FIELD(list, prefix, base, Phdr, p_vaddr);
        POLYHAL_FIELD(list, prefix, base, Phdr, p_paddr);
        POLYHAL_FIELD(list, prefix, base, Phdr, p_filesz);
        POLYHAL_FIELD(list, prefix, base, Phdr, p_memsz);
        POLYHAL_FIELD(list, prefix, base, Phdr, p_align);
        if (program.p_type != PT_DYNAMIC) continue;
        for (size_t at = 0; at + sizeof(ElfW(Dyn)) <= program.p_filesz; at += sizeof(ElfW(Dyn))) {
            const size_t entry = program.p_offset + at;
            const auto dynamic = read<ElfW(Dyn)>(image, entry);
            const std::string name = occurrence(&seen, dynamicTag(dynamic.d_tag));
            fields.push_back(ElfField{name + ".d_tag", entry, sizeof dynamic.d_tag});
            fields.push_back(
                ElfField{name + ".d_val", entry + sizeof dynamic.d_tag, sizeof dynamic.d_un});
            if (dynamic.d_tag == DT_NULL) break;
        }
    }

    const auto names = read<Shdr>(image, header.e_shoff + header.e_shstrndx * sizeof(Shdr));
    for (size_t i = 0; i < header.e_shnum; ++i) {
        const size_t base = header.e_shoff + i * sizeof(Shdr);
        const auto section = read<Shdr>(image, base);
        const size_t nameAt = names.sh_offset + section.sh_name;
        std::string name = "section";
        if (nameAt < image.size()) {
            const auto* text = reinterpret_cast<const char*>(image.data() + nameAt);
            name = std::string(text, strnlen(text, image.size() - nameAt));
        }
        const std::string prefix = occurrence(&seen, name);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_name);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_type);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_flags);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_addr);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_offset);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_size);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_link);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_info);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_addralign);
        POLYHAL_FIELD(list, prefix, base, Shdr, sh_entsize);
        // The dynamic symbols and the relocations, entry by entry.
        const size_t entryBytes = section.sh_type == SHT_DYNSYM ? sizeof(ElfW(Sym))
                                  : section.sh_type == SHT_RELA ? sizeof(ElfW(Rela))
                                                                : 0;
        for (size_t at = 0; entryBytes != 0 && at + entryBytes <= section.sh_size;
             at += entryBytes) {
            const size_t entry = section.sh_offset + at;
            const std::string item = prefix + "[" + std::to_string(at / entryBytes) + "]";
            if (section.sh_type == SHT_DYNSYM) {
                POLYHAL_FIELD(list, item, entry, ElfW(Sym), st_name);
                POLYHAL_FIELD(list, item, entry, ElfW(Sym), st_info);
                POLYHAL_FIELD(list, item, entry, ElfW(Sym), st_shndx);
                POLYHAL_FIELD(list, item, entry, ElfW(Sym), st_value);
                POLYHAL_FIELD(list, item, entry, ElfW(Sym), st_size);
            } else {
                POLYHAL_FIELD(list, item, entry, ElfW(Rela), r_offset);
                POLYHAL_FIELD(list, item, entry, ElfW(Rela), r_info);
                POLYHAL_FIELD(list, item, entry, ElfW(Rela), r_addend);
            }
        }
    }
    return fields;
}

const ElfField* findField(const std::vector<ElfField>& fields, const std::string& name) {
    for (const ElfField& field : fields) {
        if (field.name == name) return &field;
    }
    return nullptr;
}

bool rewritesProgram(const Image& image, const ElfField& field, uint64_t value) {
    const auto endsWith = [&field](const std::string& tail) {
        return field.name.size() >= tail.size() &&
               field.name.compare(field.name.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (endsWith(".st_value") || endsWith(".st_shndx") || endsWith(".r_addend")) return true;
    if (endsWith(".r_info")) return ELF64_R_SYM(value) < dynamicSymbolCount(image);
    // Fewer relocations leave pointers the module's code uses unrelocated.
    for (const char* table : {"DT_RELA#", "DT_REL#", "DT_JMPREL#", "DT_RELR#"}) {
        if (field.name.rfind(table, 0) == 0 && endsWith(".d_tag")) return true;
    }
    for (const char* size : {"DT_RELASZ#", "DT_RELSZ#", "DT_PLTRELSZ#", "DT_RELRSZ#"}) {
        if (field.name.rfind(size, 0) == 0 && endsWith(".d_val")) {
            return value < loadField(image, field);
        }
    }
    const bool initOrFini =
        field.name.rfind("DT_INIT#", 0) == 0 || field.name.rfind("DT_FINI#", 0) == 0;
    if (!initOrFini || !endsWith(".d_val")) return false;
    const auto header = read<ElfW(Ehdr)>(image, 0);
    for (size_t i = 0; i < header.e_phnum; ++i) {
        const auto program = read<ElfW(Phdr)>(image, header.e_phoff + i * sizeof(ElfW(Phdr)));
        if (program.p_type == PT_LOAD && (program.p_flags & PF_X) != 0 &&
            value >= program.p_vaddr && value - program.p_vaddr < program.p_memsz) {
            return true;
        }
    }
    return false;
}

uint64_t loadedEnd(const Image& image) {
    const auto header = read<ElfW(Ehdr)>(image, 0);
    uint64_t end = 0;
    for (size_t i = 0; i < header.e_phnum; ++i) {
        const auto program = read<ElfW(Phdr)>(image, header.e_phoff + i * sizeof(ElfW(Phdr)));
        if (program.p_type == PT_LOAD)
            end = std::max<uint64_t>(end, program.p_vaddr + program.p_memsz);
    }
    return end;
}

std::vector<uint64_t> edgeValues(const Image& image, const ElfField& field) {
    const uint64_t original = loadField(image, field);
    const uint64_t mask = field.width == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * field.width)) - 1;
    const uint64_t candidates[] = {
        0,
        1,
        original + 1,
        original - 1,
        image.size(),                   // just past the file
        loadedEnd(image),               // just past the loaded segments
        loadedEnd(image) + 0x10000000,  // far outside them
        0x7fffffff,
        0x80000000,
        uint64_t{1} << 40,  // huge
        uint64_t{1} << 47,  // the end of the user address space
        kTopPage,           // the top of the address space
        ~uint64_t{0},
    };
    std::vector<uint64_t> values;
    for (const uint64_t candidate : candidates) {
        const uint64_t value = candidate & mask;
        if (value != original && std::find(values.begin(), values.end(), value) == values.end()) {
            values.push_back(value);
        }
    }
    return values;
}

Image mutated(const Image& image, const ElfField& field, uint64_t value) {
    Image copy = image;
    storeField(&copy, field, value);
    return copy;
}

}  // namespace polyhal::testing
