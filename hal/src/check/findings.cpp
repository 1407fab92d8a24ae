// Checked mode's switches (POLYHAL_CHECK, POLYHAL_CHECK_ACTION), call sites and findings.
#include "findings.hpp"

#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "../log.hpp"
#include "hooks.hpp"

namespace polyhal::check {

namespace detail {
std::atomic<uint32_t> g_checks{0};
}  // namespace detail

namespace {

std::atomic<uint64_t> g_findings{0};
thread_local std::string t_foreignSite;  // halCheckSetCallSite
bool g_abort = false;                    // written once, before any check is on

uint32_t parseChecks(std::string_view list) {
    uint32_t checks = 0;
    while (!list.empty()) {
        const size_t comma = list.find(',');
        const std::string_view name = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        if (name == "races") {
            checks |= kRaces;
        } else if (name == "leaks") {
            checks |= kLeaks;
        } else if (name == "api") {
            checks |= kApi;
        } else if (name == "all") {
            checks |= kRaces | kLeaks | kApi;
        } else if (!name.empty()) {
            logger().warn("POLYHAL_CHECK: '{}' is not one of races, leaks, api, all; ignored",
                          name);
        }
    }
    return checks;
}

// The load address of libpolyhal itself: frames inside it are not the caller's.
const void* ownBase() {
    static const void* base = [] {
        Dl_info info{};
        return dladdr(reinterpret_cast<const void*>(&ownBase), &info) != 0 ? info.dli_fbase
                                                                           : nullptr;
    }();
    return base;
}

}  // namespace

void startFromEnvironment() {
    const char* list = std::getenv("POLYHAL_CHECK");
    if (list == nullptr || *list == '\0') return;
    const uint32_t checks = parseChecks(list);
    const char* action = std::getenv("POLYHAL_CHECK_ACTION");
    if (action != nullptr && *action != '\0') {
        if (std::strcmp(action, "abort") == 0) {
            g_abort = true;
        } else if (std::strcmp(action, "report") != 0) {
            logger().warn("POLYHAL_CHECK_ACTION='{}' is not report or abort; reporting", action);
        }
    }
    if (checks & kLeaks) startLeakReport();
    detail::g_checks.store(checks, std::memory_order_release);
}

CallSite captureCallSite() {
    CallSite site;
    void* frames[CallSite::kFrames + 8];
    const int depth = backtrace(frames, CallSite::kFrames + 8);
    const void* own = ownBase();
    int first = 0;
    for (Dl_info info{}; first < depth; ++first) {
        if (dladdr(frames[first], &info) == 0 || info.dli_fbase != own) break;
    }
    for (int i = first; i < depth && site.depth < CallSite::kFrames; ++i) {
        site.frames[site.depth++] = frames[i];
    }
    site.foreign = t_foreignSite;
    return site;
}

std::string describe(const CallSite& site, const char* indent) {
    std::string text;
    if (!site.foreign.empty()) text += fmt::format("{}{}\n", indent, site.foreign);
    if (site.depth == 0) return text + fmt::format("{}(no host backtrace)\n", indent);
    const std::unique_ptr<char*, decltype(&std::free)> names(
        backtrace_symbols(site.frames, site.depth), &std::free);
    for (int i = 0; i < site.depth; ++i) {
        text += fmt::format("{}#{} {}\n", indent, i,
                            names ? names.get()[i] : fmt::format("{}", site.frames[i]));
    }
    return text;
}

void report(const char* check, const std::string& text) {
    g_findings.fetch_add(1, std::memory_order_relaxed);
    logger().error("check ({}): {}", check, text);
    if (g_abort) {
        logger().flush();
        std::abort();
    }
}

void setForeignCallSite(const char* site) {
    if (site == nullptr) {
        t_foreignSite.clear();
    } else {
        t_foreignSite = site;
    }
}

uint64_t findingCount() {
    return g_findings.load(std::memory_order_relaxed);
}

}  // namespace polyhal::check
