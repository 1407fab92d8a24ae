// The loader, tested through polyhal_loader_probe run in a child process per case (polyhal
// initialises once per process): backend selection by name, path and list, POLYHAL_PLUGIN_PATH,
// and every way a plugin can be unusable, each reported with a specific error and message.
#include <dlfcn.h>
#include <polyhal/plugin.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "child_process.hpp"

using Catch::Contains;

namespace {

const std::string kPluginDir = POLYHAL_TEST_PLUGIN_DIR;

std::string testPlugin(const std::string& name) {
    return kPluginDir + "/libpolyhal_" + name + ".so";
}

// What the probe printed, by key ("init", "device 0", "copy 0 -> 1", ...).
class Probe {
  public:
    explicit Probe(const std::vector<std::string>& environment) {
        result_ = polyhal::test::runChild(POLYHAL_LOADER_PROBE, environment);
        std::istringstream lines(result_.out);
        std::string line;
        while (std::getline(lines, line)) {
            const size_t colon = line.find(": ");
            if (colon != std::string::npos) fields_[line.substr(0, colon)] = line.substr(colon + 2);
        }
    }

    std::string operator[](const std::string& key) const {
        const auto field = fields_.find(key);
        return field != fields_.end() ? field->second : "(missing)";
    }
    // The initialisation error's message, with its line breaks restored.
    std::string message() const {
        std::string text = (*this)["message"];
        for (size_t at = text.find("\\n"); at != std::string::npos; at = text.find("\\n", at)) {
            text.replace(at, 2, "\n");
        }
        return text;
    }
    const std::string& log() const { return result_.err; }
    // Everything the child wrote, for failure reports.
    std::string transcript() const {
        return "exit " + std::to_string(result_.exitStatus) + "\n--- stdout\n" + result_.out +
               "--- stderr\n" + result_.err;
    }
    int exitStatus() const { return result_.exitStatus; }

  private:
    polyhal::test::ChildResult result_;
    std::map<std::string, std::string> fields_;
};

// The dlerror() text of loading `path` as the loader does (RTLD_NOW | RTLD_LOCAL).
std::string dlopenError(const std::string& path) {
    dlerror();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
        dlclose(handle);
        return "(dlopen succeeded)";
    }
    const char* text = dlerror();
    return text != nullptr ? text : "(no dlerror text)";
}

std::string versionText(uint32_t major, uint32_t minor) {
    return std::to_string(major) + "." + std::to_string(minor);
}

// Every call after a failed initialisation returns the same error with the same message.
void requireFailedInit(const Probe& probe, const char* error) {
    REQUIRE(probe["init"] == error);
    CHECK(probe["later-call"] == std::string(error) + ", same-message: yes");
    // Every call returns the initialisation error before it looks at its arguments.
    CHECK(probe["range-push-null"] == error);
    CHECK(probe["backend"] == "(missing)");
}

}  // namespace

TEST_CASE("the embedded cpu backend needs no plugin file", "[loader]") {
    const Probe probe({"POLYHAL_BACKEND=cpu", "POLYHAL_CPU_DEVICES=1"});
    INFO(probe.transcript());
    REQUIRE(probe["init"] == "HAL_SUCCESS");
    CHECK(probe["backend"] == "cpu");
    CHECK(probe["devices"] == "1");
    CHECK(probe["host-function"] == "HAL_SUCCESS");
    CHECK(probe["copy 0 -> 0"] == "HAL_SUCCESS");
    CHECK(probe.exitStatus() == 0);
}

TEST_CASE("without POLYHAL_BACKEND a working backend is chosen", "[loader]") {
    const Probe probe({});
    INFO(probe.transcript());
    REQUIRE(probe["init"] == "HAL_SUCCESS");
    CHECK(probe["backend"] != "(missing)");
    CHECK(probe["devices"] != "0");
}

TEST_CASE("a successful initialisation leaves no error message behind", "[loader]") {
    SECTION("automatic selection skipping broken plugins") {
        const Probe probe({"POLYHAL_PLUGIN_PATH=" + kPluginDir});
        INFO(probe.transcript());
        REQUIRE(probe["init"] == "HAL_SUCCESS");
        CHECK(probe["message-after-init"] == "");
    }
    SECTION("POLYHAL_TRACE naming a folder, which cannot be written") {
        const Probe probe({"POLYHAL_BACKEND=cpu", "POLYHAL_TRACE=" + kPluginDir});
        INFO(probe.transcript());
        REQUIRE(probe["init"] == "HAL_SUCCESS");
        CHECK(probe["message-after-init"] == "");
        CHECK_THAT(probe.log(), Contains("running without a trace"));
    }
}

TEST_CASE("an unknown backend name fails, naming it, the known backends and the paths tried",
          "[loader]") {
    const Probe probe({"POLYHAL_BACKEND=nosuchbackend", "POLYHAL_PLUGIN_PATH=" + kPluginDir});
    INFO(probe.transcript());
    requireFailedInit(probe, "HAL_ERROR_BACKEND_NOT_FOUND");
    CHECK_THAT(probe.message(), Contains("nosuchbackend"));
    for (const char* known : {"cpu", "cuda", "hip", "level_zero", "opencl"}) {
        CHECK_THAT(probe.message(), Contains(known));
    }
    CHECK_THAT(probe.message(), Contains(kPluginDir + "/libpolyhal_nosuchbackend.so"));
}

TEST_CASE("a named backend that fails is never replaced by another", "[loader]") {
    const Probe probe({"POLYHAL_BACKEND=cpu,nosuchbackend"});
    INFO(probe.transcript());
    requireFailedInit(probe, "HAL_ERROR_BACKEND_NOT_FOUND");
    CHECK_THAT(probe.message(), Contains("nosuchbackend"));
}

TEST_CASE("a malformed POLYHAL_BACKEND list is INVALID_VALUE", "[loader]") {
    const Probe probe({"POLYHAL_BACKEND=cpu,,cpu"});
    INFO(probe.transcript());
    requireFailedInit(probe, "HAL_ERROR_INVALID_VALUE");
    CHECK_THAT(probe.message(), Contains("POLYHAL_BACKEND"));
}

TEST_CASE("a file that is not a shared library is refused with dlerror's text", "[loader]") {
    const std::string path = testPlugin("notalib");
    const std::string byName = GENERATE(as<std::string>{}, "notalib", "path");
    INFO("named by " << byName);
    const Probe probe({"POLYHAL_BACKEND=" + (byName == "path" ? path : byName),
                       "POLYHAL_PLUGIN_PATH=" + kPluginDir});
    INFO(probe.transcript());
    requireFailedInit(probe, "HAL_ERROR_BACKEND_NOT_FOUND");
    CHECK_THAT(probe.message(), Contains(path));
    CHECK_THAT(probe.message(), Contains(dlopenError(path)));
}

TEST_CASE("a library without the entry symbol is refused, naming the symbol", "[loader]") {
    const std::string path = testPlugin("test_no_entry");
    const Probe probe({"POLYHAL_BACKEND=" + path});
    INFO(probe.transcript());
    requireFailedInit(probe, "HAL_ERROR_BACKEND_NOT_FOUND");
    CHECK_THAT(probe.message(), Contains(path));
    CHECK_THAT(probe.message(), Contains(HAL_PLUGIN_ENTRY_NAME));
}

TEST_CASE("a plugin with an undefined symbol is refused, naming the symbol", "[loader]") {
    const std::string path = testPlugin("test_undefined_symbol");
    const Probe probe(
        {"POLYHAL_BACKEND=test_undefined_symbol", "POLYHAL_PLUGIN_PATH=" + kPluginDir});
    INFO(probe.transcript());
    requireFailedInit(probe, "HAL_ERROR_BACKEND_NOT_FOUND");
    CHECK_THAT(probe.message(), Contains(path));
    CHECK_THAT(probe.message(), Contains("polyhal_test_undefined_function"));
    CHECK_THAT(probe.message(), Contains(dlopenError(path)));
}

TEST_CASE("a plugin of another ABI major version is refused with both versions", "[loader]") {
    const std::string core =
        versionText(HAL_PLUGIN_ABI_VERSION_MAJOR, HAL_PLUGIN_ABI_VERSION_MINOR);
    SECTION("the plugin reports version 99.0 in its table") {
        const Probe probe({"POLYHAL_BACKEND=" + testPlugin("test_abi99")});
        INFO(probe.transcript());
        requireFailedInit(probe, "HAL_ERROR_BACKEND_INCOMPATIBLE");
        CHECK_THAT(probe.message(), Contains("99.0") && Contains(core));
        CHECK_THAT(probe.message(), Contains(testPlugin("test_abi99")));
    }
    SECTION("the plugin refuses the core's version itself") {
        const Probe probe({"POLYHAL_BACKEND=" + testPlugin("test_rejects_core")});
        INFO(probe.transcript());
        requireFailedInit(probe, "HAL_ERROR_BACKEND_INCOMPATIBLE");
        CHECK_THAT(probe.message(), Contains("99.0") && Contains(core));
        CHECK_THAT(probe.message(), Contains(testPlugin("test_rejects_core")));
    }
}

TEST_CASE("a plugin with part of a group of entries is refused, naming what it has and lacks",
          "[loader]") {
    const Probe probe({"POLYHAL_BACKEND=" + testPlugin("test_partial_group")});
    INFO(probe.transcript());
    requireFailedInit(probe, "HAL_ERROR_BACKEND_INCOMPATIBLE");
    CHECK_THAT(probe.message(), Contains("all or none"));
    CHECK_THAT(probe.message(), Contains("has memAllocHost, lacks memFreeHost"));
}

TEST_CASE("a plugin of an older minor version loads; entries it lacks are NOT_SUPPORTED",
          "[loader]") {
    const Probe probe({"POLYHAL_BACKEND=test_minimal", "POLYHAL_PLUGIN_PATH=" + kPluginDir});
    INFO(probe.transcript());
    REQUIRE(probe["init"] == "HAL_SUCCESS");
    CHECK(probe["backend"] == "test_minimal");
    CHECK(probe["devices"] == "1");
    CHECK(probe["host-function"] == "HAL_ERROR_NOT_SUPPORTED");
    CHECK(probe["copy 0 -> 0"] == "HAL_SUCCESS");
}

TEST_CASE("POLYHAL_PLUGIN_PATH is searched folder by folder", "[loader]") {
    const Probe probe({"POLYHAL_BACKEND=test_minimal",
                       "POLYHAL_PLUGIN_PATH=/nonexistent/polyhal-plugins:" + kPluginDir,
                       "POLYHAL_LOG_LEVEL=info"});
    INFO(probe.transcript());
    REQUIRE(probe["init"] == "HAL_SUCCESS");
    CHECK(probe["backend"] == "test_minimal");
    // At level info the loader says which plugin file it loaded.
    CHECK_THAT(probe.log(), Contains(testPlugin("test_minimal")));
}

TEST_CASE("a plugin named by absolute path loads", "[loader]") {
    const Probe probe({"POLYHAL_BACKEND=" + testPlugin("test_minimal")});
    INFO(probe.transcript());
    REQUIRE(probe["init"] == "HAL_SUCCESS");
    CHECK(probe["backend"] == "test_minimal");
}

#ifdef POLYHAL_CPU_PLUGIN
TEST_CASE("the cpu plugin file loads by absolute path, beside the embedded cpu", "[loader]") {
    const Probe probe({"POLYHAL_BACKEND=cpu," POLYHAL_CPU_PLUGIN, "POLYHAL_CPU_DEVICES=1"});
    INFO(probe.transcript());
    REQUIRE(probe["init"] == "HAL_SUCCESS");
    CHECK(probe["devices"] == "2");
    CHECK(probe["device 0"] == "backend=cpu backendOrdinal=0");
    CHECK(probe["device 1"] == "backend=cpu backendOrdinal=0");
    CHECK(probe["copy 0 -> 1"] == "HAL_SUCCESS");
}
#endif

TEST_CASE("one plugin named twice, however its path is spelled, is refused", "[loader]") {
    const std::string path = testPlugin("test_minimal");
    char folder[] = "/tmp/polyhal-loader-XXXXXX";
    REQUIRE(mkdtemp(folder) != nullptr);
    const std::string link = std::string(folder) + "/libpolyhal_test_minimal.so";
    REQUIRE(symlink(path.c_str(), link.c_str()) == 0);
    const std::string spellings[] = {
        "test_minimal",                                         // by name
        link,                                                   // a symbolic link
        kPluginDir + "/./libpolyhal_test_minimal.so",           // ./
        kPluginDir + "/../plugins/libpolyhal_test_minimal.so",  // ..
    };
    for (const std::string& spelling : spellings) {
        const Probe probe(
            {"POLYHAL_BACKEND=" + path + "," + spelling, "POLYHAL_PLUGIN_PATH=" + kPluginDir});
        INFO(spelling << "\n" << probe.transcript());
        requireFailedInit(probe, "HAL_ERROR_INVALID_VALUE");
        CHECK_THAT(probe.message(), Contains("names one plugin twice: '" + path + "' and '" +
                                             spelling + "' are the same file"));
    }
    std::remove(link.c_str());
    rmdir(folder);
}

TEST_CASE("up to eight backends are in use at once, a ninth is refused", "[loader]") {
    // Copies of one plugin are different files, so each is a backend of its own.
    char folder[] = "/tmp/polyhal-loader-XXXXXX";
    REQUIRE(mkdtemp(folder) != nullptr);
    std::vector<std::string> copies;
    std::string list;
    for (int i = 0; i < 9; ++i) {
        copies.push_back(std::string(folder) + "/copy" + std::to_string(i) + ".so");
        std::ifstream source(testPlugin("test_minimal"), std::ios::binary);
        std::ofstream(copies.back(), std::ios::binary) << source.rdbuf();
        list += (list.empty() ? "" : ",") + copies.back();
        if (i == 7) {
            const Probe probe({"POLYHAL_BACKEND=" + list});
            INFO(probe.transcript());
            REQUIRE(probe["init"] == "HAL_SUCCESS");
            CHECK(probe["devices"] == "8");
        }
    }
    const Probe probe({"POLYHAL_BACKEND=" + list});
    INFO(probe.transcript());
    requireFailedInit(probe, "HAL_ERROR_BACKEND_INCOMPATIBLE");
    CHECK_THAT(probe.message(), Contains("test_minimal: at most 8 backends can be in use at once"));
    for (const std::string& copy : copies) std::remove(copy.c_str());
    rmdir(folder);
}

TEST_CASE("a list of backends numbers their devices in list order", "[loader]") {
    const std::vector<std::string> common = {"POLYHAL_PLUGIN_PATH=" + kPluginDir,
                                             "POLYHAL_CPU_DEVICES=2"};
    SECTION("test_minimal,cpu") {
        auto environment = common;
        environment.push_back("POLYHAL_BACKEND=test_minimal,cpu");
        const Probe probe(environment);
        INFO(probe.transcript());
        REQUIRE(probe["init"] == "HAL_SUCCESS");
        CHECK(probe["backend"] == "test_minimal");
        CHECK(probe["devices"] == "3");
        CHECK(probe["device 0"] == "backend=test_minimal backendOrdinal=0");
        CHECK(probe["device 1"] == "backend=cpu backendOrdinal=0");
        CHECK(probe["device 2"] == "backend=cpu backendOrdinal=1");
    }
    SECTION("cpu,test_minimal, with copies between the backends through host memory") {
        auto environment = common;
        environment.push_back("POLYHAL_BACKEND=cpu,test_minimal");
        const Probe probe(environment);
        INFO(probe.transcript());
        REQUIRE(probe["init"] == "HAL_SUCCESS");
        CHECK(probe["backend"] == "cpu");
        CHECK(probe["devices"] == "3");
        CHECK(probe["device 0"] == "backend=cpu backendOrdinal=0");
        CHECK(probe["device 1"] == "backend=cpu backendOrdinal=1");
        CHECK(probe["device 2"] == "backend=test_minimal backendOrdinal=0");
        for (int from = 0; from < 3; ++from) {
            for (int to = 0; to < 3; ++to) {
                const std::string key =
                    "copy " + std::to_string(from) + " -> " + std::to_string(to);
                INFO(key);
                CHECK(probe[key] == "HAL_SUCCESS");
            }
        }
    }
}
