// Modules and kernel launches.
#include <catch2/catch.hpp>
#include <polyhal/plugin_support.hpp>

#include <link.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "backend_fixture.hpp"
#include "kernel_fixture.hpp"
#include "module.hpp"

using namespace cpu_tests;

namespace {

halError launch(halPluginStream stream, halPluginFunction function, halDim3 grid, halDim3 block,
                const std::vector<halKernelArg>& args, size_t sharedBytes = 0) {
    return backend().launchKernel(stream, function, grid, block, sharedBytes, args.data(),
                                  static_cast<uint32_t>(args.size()));
}

}  // namespace

TEST_CASE("a kernel runs once per block of a three-dimensional grid", "[module]") {
    KernelModule module;
    Stream stream;
    const halDim3 grid{3, 2, 2};
    const halDim3 block{4, 2, 1};
    std::vector<uint32_t> out(3 * 2 * 2 * 4 * 2, 0);
    uint32_t* data = out.data();
    uint32_t scale = 3;
    REQUIRE(launch(stream.get(), module.function("write_ids"), grid, block,
                   {{&data, sizeof data}, {&scale, sizeof scale}}) == HAL_SUCCESS);
    scale = 0;  // arguments were copied at launch
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    for (uint32_t i = 0; i < out.size(); ++i) {
        INFO("element " << i);
        CHECK(out[i] == i * 3);
    }
}

TEST_CASE("a kernel sees its launch's dimensions, arguments and context size", "[module]") {
    KernelModule module;
    Stream stream;
    uint64_t seen[10] = {};
    uint64_t* data = seen;
    REQUIRE(launch(stream.get(), module.function("describe_launch"), {2, 3, 4}, {5, 6, 7},
                   {{&data, sizeof data}}, 128) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    const uint64_t expected[10] = {
        2, 3, 4, 5, 6, 7, 1, sizeof(void*), 128, sizeof(halCpuKernelContext)};
    for (int i = 0; i < 10; ++i) {
        INFO("field " << i);
        CHECK(seen[i] == expected[i]);
    }
}

TEST_CASE("each block gets its own aligned dynamic shared memory", "[module]") {
    KernelModule module;
    Stream stream;
    constexpr uint32_t kBlocks = 64;
    std::vector<uint32_t> ok(kBlocks, 0);
    uint32_t* data = ok.data();
    REQUIRE(launch(stream.get(), module.function("use_shared_memory"), {kBlocks, 1, 1}, {1, 1, 1},
                   {{&data, sizeof data}}, 48 * 1024) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(std::all_of(ok.begin(), ok.end(), [](uint32_t v) { return v == 1; }));
}

TEST_CASE("a large by-value argument is copied whole", "[module]") {
    KernelModule module;
    Stream stream;
    struct {
        uint32_t values[512];
    } argument;
    std::iota(std::begin(argument.values), std::end(argument.values), 1u);
    uint64_t sum = 0;
    uint64_t* out = &sum;
    REQUIRE(launch(stream.get(), module.function("sum_array_argument"), {1, 1, 1}, {1, 1, 1},
                   {{&out, sizeof out}, {&argument, sizeof argument}}) == HAL_SUCCESS);
    std::memset(&argument, 0, sizeof argument);
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(sum == 512u * 513u / 2u);
}

TEST_CASE("the blocks of a launch run in parallel", "[module]") {
    if (std::thread::hardware_concurrency() < 2) {
        WARN("skipped: needs two hardware threads");
        return;
    }
    KernelModule module;
    Stream stream;
    std::atomic<unsigned> arrived{0};
    std::atomic<unsigned>* data = &arrived;
    REQUIRE(launch(stream.get(), module.function("meet"), {2, 1, 1}, {1, 1, 1},
                   {{&data, sizeof data}}) == HAL_SUCCESS);
    CHECK(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
}

TEST_CASE("looking a kernel up twice gives the same function", "[module]") {
    KernelModule module;
    CHECK(module.function("write_ids") == module.function("write_ids"));
}

TEST_CASE("a missing kernel is not found, even if a library it uses defines the name", "[module]") {
    KernelModule module;
    const char* name = GENERATE("no_such_kernel", "malloc");
    halPluginFunction function = nullptr;
    CHECK(backend().moduleGetFunction(module.get(), name, &function) == HAL_ERROR_NOT_FOUND);
    CHECK_THAT(lastError(), Catch::Contains(std::string("'") + name + "'"));
}

TEST_CASE("an exported variable is not a kernel, and the message says what it is", "[module]") {
    KernelModule module;
    const auto [name, kind] = GENERATE(table<const char*, const char*>(
        {{"exported_counter", "data object (STT_OBJECT)"},
         {"exported_per_thread", "thread-local variable (STT_TLS)"}}));
    halPluginFunction function = nullptr;
    CHECK(backend().moduleGetFunction(module.get(), name, &function) == HAL_ERROR_NOT_FOUND);
    CHECK(function == nullptr);
    CHECK_THAT(lastError(), Catch::Contains(std::string("'") + name + "'") &&
                                Catch::Contains(kind) && Catch::Contains("not a function"));
}

TEST_CASE("an IFUNC kernel runs the implementation its resolver chose", "[module]") {
    KernelModule module;
    Stream stream;
    uint32_t out = 0;
    uint32_t* data = &out;
    REQUIRE(launch(stream.get(), module.function("ifunc_kernel"), {1, 1, 1}, {1, 1, 1},
                   {{&data, sizeof data}}) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(out == 42);
}

TEST_CASE("two modules loaded from the same bytes are independent", "[module]") {
    KernelModule first;
    KernelModule second;
    using polyhal::cpu::Function;
    const auto& a = polyhal::plugin::fromHandle<Function>(first.function("write_ids"));
    const auto& b = polyhal::plugin::fromHandle<Function>(second.function("write_ids"));
    CHECK(a.entry != b.entry);
}

TEST_CASE("a module loaded after another was unloaded is really loaded", "[module]") {
    // A reused file descriptor must not make the loader hand back the unloaded library.
    { KernelModule first; }
    KernelModule second;
    Stream stream;
    uint32_t out[2] = {};
    uint32_t* data = out;
    uint32_t scale = 5;
    REQUIRE(launch(stream.get(), second.function("write_ids"), {1, 1, 1}, {2, 1, 1},
                   {{&data, sizeof data}, {&scale, sizeof scale}}) == HAL_SUCCESS);
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
    CHECK(out[1] == 5);
}

TEST_CASE("an image that is not a shared object is refused with the reason", "[module]") {
    halPluginModule module = nullptr;
    SECTION("not ELF") {
        const char text[] = "this is not a shared object";
        CHECK(backend().moduleLoadData(device0(), text, sizeof text, &module) ==
              HAL_ERROR_INVALID_IMAGE);
        CHECK_THAT(lastError(), Catch::Contains("not an ELF shared object"));
    }
    SECTION("an ELF object file") {
        std::vector<unsigned char> image = testKernelImage();
        const uint16_t relocatable = 1;  // ET_REL, in the host's byte order like the image
        std::memcpy(image.data() + 16, &relocatable, sizeof relocatable);
        CHECK(backend().moduleLoadData(device0(), image.data(), image.size(), &module) ==
              HAL_ERROR_INVALID_IMAGE);
        CHECK_THAT(lastError(), Catch::Contains("-shared -fPIC"));
    }
    SECTION("a truncated shared object, cut anywhere") {
        // The dynamic loader would map segments past the end of the file: SIGBUS, not an error.
        const std::vector<unsigned char>& image = testKernelImage();
        for (size_t size = 1; size < image.size(); size += size < 4096 ? 7 : 509) {
            INFO("the first " << size << " bytes");
            REQUIRE(backend().moduleLoadData(device0(), image.data(), size, &module) ==
                    HAL_ERROR_INVALID_IMAGE);
            CHECK_THAT(lastError(), Catch::Contains("ELF"));
        }
    }
    SECTION("a shared object whose segment lies past its end") {
        std::vector<unsigned char> image = testKernelImage();
        ElfW(Ehdr) header;
        std::memcpy(&header, image.data(), sizeof header);
        ElfW(Phdr) segment;
        std::memcpy(&segment, image.data() + header.e_phoff, sizeof segment);
        segment.p_filesz = image.size() + 4096;
        std::memcpy(image.data() + header.e_phoff, &segment, sizeof segment);
        CHECK(backend().moduleLoadData(device0(), image.data(), image.size(), &module) ==
              HAL_ERROR_INVALID_IMAGE);
        CHECK_THAT(lastError(), Catch::Contains("a segment runs past the end"));
    }
    SECTION("a shared object whose section lies past its end") {
        std::vector<unsigned char> image = testKernelImage();
        ElfW(Ehdr) header;
        std::memcpy(&header, image.data(), sizeof header);
        REQUIRE(header.e_shnum > 1);
        ElfW(Shdr) section;
        unsigned char* last = image.data() + header.e_shoff + (header.e_shnum - 1) * sizeof section;
        std::memcpy(&section, last, sizeof section);
        section.sh_type = SHT_PROGBITS;
        section.sh_offset = image.size() - 8;
        section.sh_size = 4096;
        std::memcpy(last, &section, sizeof section);
        CHECK(backend().moduleLoadData(device0(), image.data(), image.size(), &module) ==
              HAL_ERROR_INVALID_IMAGE);
        CHECK_THAT(lastError(), Catch::Contains("a section runs past the end"));
    }
    CHECK(module == nullptr);
}

TEST_CASE("a grid of more than 2^64 blocks is refused", "[module]") {
    KernelModule module;
    Stream stream;
    CHECK(launch(stream.get(), module.function("fail_in_block"), {0xffffffffu, 0xffffffffu, 2},
                 {1, 1, 1}, {}) == HAL_ERROR_INVALID_VALUE);
}

TEST_CASE("a kernel that declares its parameters refuses arguments that differ", "[module]") {
    KernelModule module;
    Stream stream;
    const halPluginFunction declared = module.function("declared_add");
    uint32_t out = 1;
    uint32_t* data = &out;
    uint32_t value = 41;
    const uint16_t narrow = 41;
    SECTION("the declared arguments run") {
        REQUIRE(launch(stream.get(), declared, {1, 1, 1}, {1, 1, 1},
                       {{&data, sizeof data}, {&value, sizeof value}}) == HAL_SUCCESS);
        REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
        CHECK(out == 42);
    }
    SECTION("one argument too few") {
        CHECK(launch(stream.get(), declared, {1, 1, 1}, {1, 1, 1}, {{&data, sizeof data}}) ==
              HAL_ERROR_INVALID_VALUE);
        CHECK_THAT(lastError(), Catch::Contains("kernel 'declared_add' declares 2 parameters") &&
                                    Catch::Contains("passes 1 arguments"));
    }
    SECTION("an argument of another size") {
        CHECK(launch(stream.get(), declared, {1, 1, 1}, {1, 1, 1},
                     {{&data, sizeof data}, {&narrow, sizeof narrow}}) == HAL_ERROR_INVALID_VALUE);
        CHECK_THAT(lastError(), Catch::Contains("argument 1 of kernel 'declared_add' is 2 bytes, "
                                                "its parameter 4"));
    }
    REQUIRE(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);
}

TEST_CASE("an undeclared kernel takes any arguments", "[module]") {
    KernelModule module;
    Stream stream;
    // Wider than the kernel reads, and one more: the kernel's business, as before.
    const uint64_t failing = 7;
    CHECK(launch(stream.get(), module.function("fail_in_block"), {1, 1, 1}, {1, 1, 1},
                 {{&failing, sizeof failing},
                  {&failing, sizeof failing},
                  {&failing, sizeof failing}}) == HAL_SUCCESS);
    CHECK(backend().streamSynchronize(stream.get()) == HAL_SUCCESS);  // no block 7 to fail
}
