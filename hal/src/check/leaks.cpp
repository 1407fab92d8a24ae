// The leak report: at exit, every stream, event, module and allocation still alive, with the
// call that created it and where.
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "findings.hpp"
#include "hooks.hpp"

namespace polyhal::check {

namespace {

struct LiveObject {
    const char* kind;
    const char* createdBy;
    CallSite site;
};

struct Registry {
    std::mutex mutex;
    std::map<const void*, LiveObject> objects;
};

Registry& registry() {
    // Never destroyed: it is read by the exit handler, after static destructors may have run.
    static Registry* instance = new Registry();
    return *instance;
}

void reportLeaks() {
    std::vector<std::string> leaks;
    {
        Registry& live = registry();
        std::lock_guard<std::mutex> lock(live.mutex);
        for (const auto& [object, entry] : live.objects) {
            leaks.push_back(fmt::format("{} {} created by {} at:\n{}", entry.kind, object,
                                        entry.createdBy, describe(entry.site, "    ")));
        }
    }
    for (std::string& block : liveBlocks()) leaks.push_back(std::move(block));
    for (size_t i = 0; i < leaks.size(); ++i) {
        report("leak",
               fmt::format("{} of {} still alive at exit: {}", i + 1, leaks.size(), leaks[i]));
    }
}

}  // namespace

void startLeakReport() {
    std::atexit(reportLeaks);
}

namespace slow {

void created(const void* object, const char* kind, const char* operation) noexcept {
    try {
        LiveObject entry{kind, operation, captureCallSite()};
        Registry& live = registry();
        std::lock_guard<std::mutex> lock(live.mutex);
        live.objects[object] = std::move(entry);
    } catch (...) {
    }
}

void destroyed(const void* object) noexcept {
    Registry& live = registry();
    std::lock_guard<std::mutex> lock(live.mutex);
    live.objects.erase(object);
}

}  // namespace slow

}  // namespace polyhal::check
