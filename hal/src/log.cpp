// polyhal's logger: spdlog to stderr, level from POLYHAL_LOG_LEVEL (default warn) (implementation).
#include "log.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <cstdlib>
#include <cstring>

namespace polyhal {
namespace {

spdlog::level::level_enum levelFromEnvironment(const char** invalid) {
    const char* value = std::getenv("POLYHAL_LOG_LEVEL");
    if (value == nullptr || *value == '\0') return spdlog::level::warn;
    static const struct {
        const char* name;
        spdlog::level::level_enum level;
    } kLevels[] = {{"trace", spdlog::level::trace}, {"debug", spdlog::level::debug},
                   {"info", spdlog::level::info},   {"warn", spdlog::level::warn},
                   {"error", spdlog::level::err},   {"off", spdlog::level::off}};
    for (const auto& entry : kLevels) {
        if (std::strcmp(value, entry.name) == 0) return entry.level;
    }
    *invalid = value;
    return spdlog::level::warn;
}

spdlog::logger* makeLogger() {
    // Not registered with spdlog's global registry, so an application's own loggers and
    // spdlog::drop_all() cannot collide with or destroy it. Never destroyed: plugin threads may
    // still log while the process exits.
    auto* log = new spdlog::logger("polyhal", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    log->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [polyhal] [%l] %v");
    const char* invalid = nullptr;
    log->set_level(levelFromEnvironment(&invalid));
    log->flush_on(spdlog::level::warn);
    if (invalid != nullptr) {
        log->warn(
            "POLYHAL_LOG_LEVEL='{}' is not one of trace, debug, info, warn, error, off; "
            "using warn",
            invalid);
    }
    return log;
}

spdlog::level::level_enum toSpdlog(halLogLevel level) {
    switch (level) {
    case HAL_LOG_TRACE: return spdlog::level::trace;
    case HAL_LOG_DEBUG: return spdlog::level::debug;
    case HAL_LOG_INFO: return spdlog::level::info;
    case HAL_LOG_WARN: return spdlog::level::warn;
    case HAL_LOG_ERROR: return spdlog::level::err;
    default: return spdlog::level::off;
    }
}

}  // namespace

spdlog::logger& logger() {
    static spdlog::logger* instance = makeLogger();
    return *instance;
}

void pluginLog(halLogLevel level, const char* message) {
    if (message == nullptr) return;
    logger().log(toSpdlog(level), "{}", message);
}

int pluginShouldLog(halLogLevel level) {
    return logger().should_log(toSpdlog(level)) ? 1 : 0;
}

}  // namespace polyhal
