// How a vendor-driver double reports a breach of the vendor's rules: one line on stderr naming
// the rule, then the process ends, so the run that made the call fails where it made it.
#ifndef POLYHAL_TESTS_BACKENDS_COMMON_RULES_HPP_
#define POLYHAL_TESTS_BACKENDS_COMMON_RULES_HPP_

namespace polyhal::doubles {

// Exit status of a process ended by a breach.
constexpr int kBreachExitCode = 86;

// Prints "<vendor> driver double: rule broken: <message>" and ends the process.
[[noreturn, gnu::format(printf, 2, 3)]] void breach(const char* vendor, const char* format, ...);

// True on the driver's host-function thread while it runs a host function: the vendors forbid
// every API call there.
bool onHostFunctionThread() noexcept;

}  // namespace polyhal::doubles

#endif  // POLYHAL_TESTS_BACKENDS_COMMON_RULES_HPP_
