// polyhal_loader_probe: initialises polyhal in a fresh process (initialisation happens once per
// process) and prints what it found, one "key: value" line each, for loader_tests to check:
//
//   init: <halError name of halInit>
//   message: <halGetLastErrorMessage after a failed halInit, newlines written as \n>
//   later-call: <halError of halGetBackendName after a failed init>, same-message: yes|no
//   range-push-null: <halError of halTraceRangePush(NULL) after a failed init>
//   message-after-init: <halGetLastErrorMessage after a successful halInit>
//   backend: <halGetBackendName>
//   devices: <count>
//   device <i>: backend=<name> backendOrdinal=<n>
//   host-function: <halError of halLaunchHostFunc on the default stream>
//   copy <i> -> <j>: <halError name, or "mismatch"> for every pair of devices
#include <polyhal/hal.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

std::string escaped(const char* text) {
    std::string out;
    for (const char* c = text; *c != '\0'; ++c) {
        if (*c == '\n') {
            out += "\\n";
        } else {
            out += *c;
        }
    }
    return out;
}

void reportFailedInit() {
    const std::string message = halGetLastErrorMessage();
    std::printf("message: %s\n", escaped(message.c_str()).c_str());
    const char* name = nullptr;
    const halError later = halGetBackendName(&name);
    const bool sameMessage = message == halGetLastErrorMessage();
    std::printf("later-call: %s, same-message: %s\n", halGetErrorName(later),
                sameMessage ? "yes" : "no");
    std::printf("range-push-null: %s\n", halGetErrorName(halTraceRangePush(nullptr)));
}

void reportDevices(int count) {
    for (int device = 0; device < count; ++device) {
        halDeviceProperties props;
        std::memset(&props, 0, sizeof props);
        props.size = sizeof props;
        const halError status = halGetDeviceProperties(device, &props);
        if (status != HAL_SUCCESS) {
            std::printf("device %d: %s\n", device, halGetErrorName(status));
            continue;
        }
        std::printf("device %d: backend=%s backendOrdinal=%d\n", device, props.backend,
                    props.backendOrdinal);
    }
}

// Copies a pattern from device `from` to device `to` with kind inference, and back to the host.
const char* copyBetween(int from, int to) {
    constexpr size_t kSize = 64 * 1024;
    std::vector<unsigned char> pattern(kSize), result(kSize, 0);
    for (size_t i = 0; i < kSize; ++i) pattern[i] = static_cast<unsigned char>(i * 7 + from);
    void* source = nullptr;
    void* destination = nullptr;
    halError status = halSetDevice(from);
    if (status == HAL_SUCCESS) status = halMalloc(&source, kSize);
    if (status == HAL_SUCCESS) status = halSetDevice(to);
    if (status == HAL_SUCCESS) status = halMalloc(&destination, kSize);
    if (status == HAL_SUCCESS) {
        status = halMemcpy(source, kSize, pattern.data(), kSize, HAL_MEMCPY_DEFAULT);
    }
    if (status == HAL_SUCCESS) {
        status = halMemcpy(destination, kSize, source, kSize, HAL_MEMCPY_DEFAULT);
    }
    if (status == HAL_SUCCESS) {
        status = halMemcpy(result.data(), kSize, destination, kSize, HAL_MEMCPY_DEFAULT);
    }
    if (source != nullptr) halFree(source);
    if (destination != nullptr) halFree(destination);
    halSetDevice(0);
    if (status != HAL_SUCCESS) return halGetErrorName(status);
    return result == pattern ? "HAL_SUCCESS" : "mismatch";
}

}  // namespace

int main() {
    const halError status = halInit();
    std::printf("init: %s\n", halGetErrorName(status));
    if (status != HAL_SUCCESS) {
        reportFailedInit();
        return 0;
    }
    std::printf("message-after-init: %s\n", escaped(halGetLastErrorMessage()).c_str());
    const char* backend = nullptr;
    halGetBackendName(&backend);
    std::printf("backend: %s\n", backend != nullptr ? backend : "(none)");
    int count = 0;
    halGetDeviceCount(&count);
    std::printf("devices: %d\n", count);
    reportDevices(count);
    std::printf("host-function: %s\n", halGetErrorName(halLaunchHostFunc(
                                           nullptr, [](void*) {}, nullptr)));
    halSynchronizeDevice();
    for (int from = 0; from < count; ++from) {
        for (int to = 0; to < count; ++to) {
            std::printf("copy %d -> %d: %s\n", from, to, copyBetween(from, to));
        }
    }
    return 0;
}
