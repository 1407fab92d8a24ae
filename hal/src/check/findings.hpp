// What checked mode found: each finding written through the logger and counted, or the first one
// written and the process aborted (POLYHAL_CHECK_ACTION).
#ifndef POLYHAL_HAL_SRC_CHECK_FINDINGS_HPP_
#define POLYHAL_HAL_SRC_CHECK_FINDINGS_HPP_

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

namespace polyhal::check {

// The host call stack of a public call, taken when it happens and named only if a finding
// quotes it.
struct CallSite {
    static constexpr int kFrames = 12;
    void* frames[kFrames];
    int depth = 0;
    std::string foreign;  // the caller's own site where a binding gave it (halCheckSetCallSite)
};

// The calling thread's stack, without polyhal's own frames.
CallSite captureCallSite();

// One line per frame, each indented by `indent`; "(no host backtrace)" where there is none.
std::string describe(const CallSite& site, const char* indent);

// Writes `text` (a finding of `check`: "race", "leak", "api") to stderr through the logger and
// counts it; with POLYHAL_CHECK_ACTION=abort, then calls abort().
void report(const char* check, const std::string& text);

uint64_t findingCount();

// Registers the leak report to run at exit (leaks.cpp).
void startLeakReport();

// Every tracked allocation not freed, described for the leak report (races.cpp).
std::vector<std::string> liveBlocks();

// The calling thread's call site in a language polyhal cannot unwind (halCheckSetCallSite):
// quoted by the call sites captured until it changes; nullptr clears it.
void setForeignCallSite(const char* site);

}  // namespace polyhal::check

#endif  // POLYHAL_HAL_SRC_CHECK_FINDINGS_HPP_
