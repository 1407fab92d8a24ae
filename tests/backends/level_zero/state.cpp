// The double's shared state: live handles, allocations, and how a broken rule ends the run.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "driver_double.hpp"

namespace zedouble {
namespace {

const char* kindName(Kind kind) {
    switch (kind) {
    case Kind::Context: return "context";
    case Kind::CommandList: return "command list";
    case Kind::EventPool: return "event pool";
    case Kind::Event: return "event";
    case Kind::Module: return "module";
    case Kind::BuildLog: return "build log";
    case Kind::Kernel: return "kernel";
    }
    return "handle";
}

}  // namespace

void breach(const char* format, ...) {
    char message[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
    std::fprintf(stderr, "Level Zero driver double: broken rule: %s\n", message);
    std::fflush(stderr);
    std::abort();
}

State& state() {
    // Never destroyed: command list threads and late callers may use it during exit.
    static State* const instance = new State;
    return *instance;
}

void addHandle(const void* handle, Kind kind) {
    state().handles[handle] = kind;
}

void removeHandle(const void* handle) {
    state().handles.erase(handle);
}

void expectLive(const void* handle, Kind kind, const char* call) {
    const auto found = state().handles.find(handle);
    if (found == state().handles.end()) {
        breach("%s: %s %p is not a live handle (never created, or already destroyed)", call,
               kindName(kind), handle);
    }
    if (found->second != kind) {
        breach("%s: %p is a %s handle, not a %s handle", call, handle, kindName(found->second),
               kindName(kind));
    }
}

const Allocation* findAllocation(const void* ptr, size_t size, const char* call) {
    const auto address = reinterpret_cast<uintptr_t>(ptr);
    auto& allocations = state().allocations;
    auto next = allocations.upper_bound(address);
    if (next == allocations.begin()) return nullptr;
    const Allocation& allocation = std::prev(next)->second;
    const auto base = reinterpret_cast<uintptr_t>(allocation.base);
    if (address >= base + allocation.size) return nullptr;
    if (size > allocation.size - (address - base)) {
        breach("%s: %zu bytes at %p run past the end of the %zu-byte allocation at %p", call, size,
               ptr, allocation.size, static_cast<void*>(allocation.base));
    }
    return &allocation;
}

char* hostAccessFor(ze_context_handle_t context, const void* ptr, size_t size, const char* call,
                    std::vector<uintptr_t>* uses) {
    const Allocation* allocation = findAllocation(ptr, size, call);
    if (allocation == nullptr) return static_cast<char*>(const_cast<void*>(ptr));
    if (allocation->context != context) {
        breach("%s: %p is memory of context %p, used in context %p", call, ptr,
               static_cast<void*>(allocation->context), static_cast<void*>(context));
    }
    uses->push_back(reinterpret_cast<uintptr_t>(allocation->base));
    return allocation->alias + (static_cast<const char*>(ptr) - allocation->base);
}

}  // namespace zedouble
