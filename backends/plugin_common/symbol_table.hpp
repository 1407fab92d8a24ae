// The table of vendor functions a plugin calls, resolved from the vendor's library at run time, so
// that the plugin builds and loads on machines without the vendor's driver.
//
// A vendor lists its functions once, as an X-macro with one line per function, such as
// `X(streamQuery, cuStreamQuery)` or `X(memAlloc, cuMemAlloc_v2)` (see POLYHAL_DEFINE_SYMBOLS
// for the functions that may be missing from older versions). The first name is the function's
// role: the CUDA and HIP tables share their roles, so the shared GPU code calls
// `Api::symbols.streamQuery(...)` whichever vendor it runs on; a table of its own may use the
// function's name as its role (`X(zeInit, zeInit)`). The second is the function as the vendor's
// header declares it: its prototype types the pointer, and the header's macro expansion of the name
// (e.g. cuMemAlloc -> cuMemAlloc_v2) is the symbol looked up, so the pointer's type and the
// resolved ABI version always agree.
#ifndef POLYHAL_BACKENDS_PLUGIN_COMMON_SYMBOL_TABLE_HPP_
#define POLYHAL_BACKENDS_PLUGIN_COMMON_SYMBOL_TABLE_HPP_

#include "support/dynamic_library.hpp"

namespace polyhal {

// One vendor function: its address once resolved, and its exported name for messages.
template <typename Fn>
struct Symbol {
    Fn address;
    const char* name;
};

}  // namespace polyhal

#define POLYHAL_STRINGIFY_(text) #text
#define POLYHAL_STRINGIFY(text) POLYHAL_STRINGIFY_(text)

#define POLYHAL_SYMBOL_MEMBER(role, function) \
    ::polyhal::Symbol<decltype(&::function)> role{nullptr, POLYHAL_STRINGIFY(function)};
#define POLYHAL_SYMBOL_MEMBER_OR(role, function, older) POLYHAL_SYMBOL_MEMBER(role, function)

#define POLYHAL_SYMBOL_LOOKUP(role) \
    role.address = reinterpret_cast<decltype(role.address)>(library.symbol(role.name));
#define POLYHAL_SYMBOL_RESOLVE(role, function) \
    POLYHAL_SYMBOL_LOOKUP(role)                \
    if (role.address == nullptr) return role.name;
#define POLYHAL_SYMBOL_RESOLVE_OR(role, function, older) \
    POLYHAL_SYMBOL_LOOKUP(role)                          \
    if (role.address == nullptr) {                       \
        const char* newer = role.name;                   \
        role.name = older;                               \
        POLYHAL_SYMBOL_LOOKUP(role)                      \
        if (role.address == nullptr) return newer;       \
    }
#define POLYHAL_SYMBOL_RESOLVE_OPTIONAL(role, function) POLYHAL_SYMBOL_LOOKUP(role)
#define POLYHAL_SYMBOL_RESOLVE_OPTIONAL_OR(role, function, older) \
    POLYHAL_SYMBOL_LOOKUP(role)                                   \
    if (role.address == nullptr) {                                \
        const char* newer = role.name;                            \
        role.name = older;                                        \
        POLYHAL_SYMBOL_LOOKUP(role)                               \
        if (role.address == nullptr) role.name = newer;           \
    }

// Declares one Symbol member per entry of the X-macro
// `LIST(REQUIRED, REQUIRED_OR, OPTIONAL, OPTIONAL_OR)`:
//   REQUIRED(role, function)            the library must export `function`;
//   REQUIRED_OR(role, function, older)  ... or, in older versions, the same function under the
//                                       exported name `older` (a string), with the same prototype;
//   OPTIONAL(role, function)            newer than the oldest supported version: the address
//                                       stays nullptr when the library lacks it, and the caller
//                                       takes the documented fallback;
//   OPTIONAL_OR(role, function, older)  optional, and in older versions exported as `older`
//                                       (a string) with a prototype the calls also fit (the
//                                       symbols list says why); the name stays `function`'s when
//                                       neither is there;
// and
//   const char* resolve(const DynamicLibrary& library) noexcept;
// which resolves them all and returns nullptr, or the name of the first required one the library
// lacks.
#define POLYHAL_DEFINE_SYMBOLS(LIST)                                                             \
    LIST(POLYHAL_SYMBOL_MEMBER, POLYHAL_SYMBOL_MEMBER_OR, POLYHAL_SYMBOL_MEMBER,                 \
         POLYHAL_SYMBOL_MEMBER_OR)                                                               \
    const char* resolve(const ::polyhal::DynamicLibrary& library) noexcept {                     \
        LIST(POLYHAL_SYMBOL_RESOLVE, POLYHAL_SYMBOL_RESOLVE_OR, POLYHAL_SYMBOL_RESOLVE_OPTIONAL, \
             POLYHAL_SYMBOL_RESOLVE_OPTIONAL_OR)                                                 \
        return nullptr;                                                                          \
    }

#endif  // POLYHAL_BACKENDS_PLUGIN_COMMON_SYMBOL_TABLE_HPP_
