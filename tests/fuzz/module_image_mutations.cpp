// The fuzz stage's module-image run: every single-field mutant (elf_mutations.hpp) of a real
// kernel module, loaded on the CPU backend through halModuleLoadData (and one in eight through
// halModuleLoadFile too). Each must load (its kernel is then looked up and the module unloaded) or
// be refused with HAL_ERROR_INVALID_IMAGE and a message; anything else is a finding, and so is a
// crash, an abort or a hang of the process (ctest's timeout).
//
//   module_image_mutations <kernel module> [<field name part>] [--verbose]
//
// --verbose prints each mutant before it is loaded, so the last line names the one that crashed.
#include <polyhal/hal.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "elf_mutations.hpp"

namespace {

using polyhal::testing::ElfField;
using polyhal::testing::Image;

// One mutant in kFileEvery is also loaded through halModuleLoadFile.
constexpr unsigned kFileEvery = 8;

struct Tally {
    unsigned loaded = 0;
    unsigned refused = 0;
    unsigned findings = 0;
};

// Loads `image` one way, checks the outcome and undoes it.
void tryLoad(const Image& image, const std::string& file, bool fromFile, const std::string& name,
             Tally* tally) {
    halModule module = nullptr;
    const halError status = fromFile ? halModuleLoadFile(&module, file.c_str())
                                     : halModuleLoadData(&module, image.data(), image.size());
    const std::string message = halGetLastErrorMessage();
    if (status == HAL_SUCCESS) {
        ++tally->loaded;
        halFunction function = nullptr;
        const halError lookup = halModuleGetFunction(&function, module, "fill_u32");
        const halError unload = halModuleUnload(module);
        if ((lookup == HAL_SUCCESS || lookup == HAL_ERROR_NOT_FOUND) && unload == HAL_SUCCESS) {
            return;
        }
        std::printf("FINDING %s: loaded, then lookup %s, unload %s: %s\n", name.c_str(),
                    halGetErrorName(lookup), halGetErrorName(unload), halGetLastErrorMessage());
    } else if (status == HAL_ERROR_INVALID_IMAGE && !message.empty()) {
        ++tally->refused;
        return;
    } else {
        std::printf("FINDING %s: %s returned %s: '%s'\n", name.c_str(),
                    fromFile ? "halModuleLoadFile" : "halModuleLoadData", halGetErrorName(status),
                    message.c_str());
    }
    ++tally->findings;
}

bool writeFile(const std::string& path, const Image& image) {
    std::ofstream file(path, std::ios::binary | std::ios::trunc);
    file.write(reinterpret_cast<const char*>(image.data()),
               static_cast<std::streamsize>(image.size()));
    return static_cast<bool>(file);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s <kernel module> [<field name part>] [--verbose]\n",
                     argv[0]);
        return 2;
    }
    std::string filter;
    bool verbose = false;
    for (int i = 2; i < argc; ++i) {
        if (std::string(argv[i]) == "--verbose") {
            verbose = true;
        } else {
            filter = argv[i];
        }
    }
    std::ifstream input(argv[1], std::ios::binary);
    const Image image((std::istreambuf_iterator<char>(input)), {});
    if (image.empty()) {
        std::fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    setenv("POLYHAL_BACKEND", "cpu", 1);
    if (halInit() != HAL_SUCCESS) {
        std::fprintf(stderr, "halInit: %s\n", halGetLastErrorMessage());
        return 2;
    }
    const char* directory = std::getenv("TMPDIR");
    std::string file =
        std::string(directory != nullptr && *directory != '\0' ? directory : "/tmp") +
        "/polyhal-module-mutant-XXXXXX";
    const int descriptor = mkstemp(file.data());
    if (descriptor < 0) {
        std::perror("mkstemp");
        return 2;
    }
    close(descriptor);

    const auto start = std::chrono::steady_clock::now();
    Tally tally;
    unsigned mutants = 0;
    unsigned skipped = 0;  // another program, not a corrupt image
    const std::vector<ElfField> fields = polyhal::testing::elfFields(image);
    for (const ElfField& field : fields) {
        if (field.name.find(filter) == std::string::npos) continue;
        for (const uint64_t value : polyhal::testing::edgeValues(image, field)) {
            if (polyhal::testing::rewritesProgram(image, field, value)) {
                ++skipped;
                continue;
            }
            const std::string name = field.name + " = " + std::to_string(value);
            if (verbose) {
                std::printf("%s\n", name.c_str());
                std::fflush(stdout);
            }
            const Image mutant = polyhal::testing::mutated(image, field, value);
            tryLoad(mutant, file, false, name, &tally);
            // The file path reads the bytes and hands them to the same check: a sample of the
            // mutants keeps it covered at a fraction of the time.
            if (mutants++ % kFileEvery == 0) {
                if (!writeFile(file, mutant)) {
                    std::fprintf(stderr, "cannot write %s\n", file.c_str());
                    return 2;
                }
                tryLoad(mutant, file, true, name, &tally);
            }
        }
    }
    unlink(file.c_str());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf(
        "%u mutants of %zu fields (and %u that rewrite the program, not tried), "
        "loaded from memory (one in 8 from a file too): %u loads, %u refusals, %u findings, "
        "%.1f s\n",
        mutants, fields.size(), skipped, tally.loaded, tally.refused, tally.findings, seconds);
    return tally.findings == 0 ? 0 : 1;
}
