// Corrupt module images: each is refused with the reason before the dynamic loader sees it.
// These are the single-field mutants of a real kernel module that crashed inside dlopen (the
// fuzz stage's fuzz.module_images tries every field of every header and table).
#include <catch2/catch.hpp>

#include <elf.h>

#include <string>

#include "backend_fixture.hpp"
#include "elf_mutations.hpp"
#include "kernel_fixture.hpp"

using namespace cpu_tests;
using polyhal::testing::ElfField;

namespace {

struct Mutant {
    const char* field;
    bool far;  // set to an address far outside the loaded segments, or to:
    uint64_t value;
    const char* refusal;  // part of the message
};

constexpr uint64_t kHuge = uint64_t{1} << 40;

// The test module with the mutant's field set to `value` is refused with the mutant's reason.
void checkRefused(const Mutant& mutant, uint64_t value) {
    INFO(mutant.field << " = " << value);
    const polyhal::testing::Image& image = testKernelImage();
    const std::vector<ElfField> fields = polyhal::testing::elfFields(image);
    const ElfField* field = polyhal::testing::findField(fields, mutant.field);
    REQUIRE(field != nullptr);
    const polyhal::testing::Image bad = polyhal::testing::mutated(image, *field, value);
    halPluginModule module = nullptr;
    CHECK(backend().moduleLoadData(device0(), bad.data(), bad.size(), &module) ==
          HAL_ERROR_INVALID_IMAGE);
    CHECK(module == nullptr);
    CHECK_THAT(lastError(), Catch::Contains(mutant.refusal));
}

}  // namespace

TEST_CASE("a module image whose tables point outside its loaded segments is refused",
          "[module][image]") {
    const polyhal::testing::Image& image = testKernelImage();
    const uint64_t far = polyhal::testing::loadedEnd(image) + 0x10000000;
    const Mutant mutant = GENERATE(values<Mutant>({
        {"PT_DYNAMIC#0.p_vaddr", true, 0, "dynamic table lies outside"},
        {"DT_STRTAB#0.d_val", true, 0, "DT_STRTAB"},
        {"DT_SYMTAB#0.d_val", true, 0, "DT_SYMTAB"},
        {"DT_HASH#0.d_val", true, 0, "DT_HASH"},
        {"DT_GNU_HASH#0.d_val", true, 0, "DT_GNU_HASH"},
        {"DT_RELA#0.d_val", true, 0, "relocation table runs outside"},
        {"DT_JMPREL#0.d_val", true, 0, "relocation table runs outside"},
        {"DT_INIT#0.d_val", true, 0, "DT_INIT or DT_FINI"},
        {"DT_FINI#0.d_val", true, 0, "DT_INIT or DT_FINI"},
        {"DT_INIT_ARRAY#0.d_val", true, 0, "DT_INIT_ARRAY"},
        {"DT_FINI_ARRAY#0.d_val", true, 0, "DT_FINI_ARRAY"},
        {"DT_RELASZ#0.d_val", false, kHuge, "relocation table runs outside"},
        {"DT_INIT_ARRAYSZ#0.d_val", false, kHuge, "DT_INIT_ARRAY"},
        {"PT_GNU_STACK#0.p_type", false, PT_LOAD, "an empty loadable segment"},
        {"PT_LOAD#1.p_vaddr", false, polyhal::testing::kTopPage, "past the user address space"},
    }));
    checkRefused(mutant, mutant.far ? far : mutant.value);
}

TEST_CASE("a module image that would make the loader call or abort on a corrupt entry is refused",
          "[module][image]") {
    // Mutants the fuzz stage found, and an initialiser moved out of the code: each crashed in a
    // constructor or destructor, or made the dynamic loader abort on one of its assertions.
    const Mutant mutant = GENERATE(values<Mutant>({
        {"DT_INIT_ARRAY#0.d_val", false, 0, "is not relocated"},
        {"DT_RELACOUNT#0.d_val", false, 1000, "DT_RELACOUNT"},
        {"DT_NULL#0.d_tag", false, DT_FILTER, "a filter library"},
        {".dynsym#0[5].st_info", false, 0, "an undefined local symbol"},
        {".rela.dyn#0[0].r_addend", false, 0x10, "points outside the code segments"},
    }));
    checkRefused(mutant, mutant.value);
}
