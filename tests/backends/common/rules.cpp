#include "rules.hpp"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

namespace polyhal::doubles {

void breach(const char* vendor, const char* format, ...) {
    char message[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
    std::fprintf(stderr, "%s driver double: rule broken: %s\n", vendor, message);
    std::fflush(stderr);
    // No exit handlers: the driver's own threads may be mid-operation.
    _exit(kBreachExitCode);
}

}  // namespace polyhal::doubles
