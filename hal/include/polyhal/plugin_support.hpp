// C++ helpers for plugin authors, written once for every plugin: the dispatch table built from the
// entries a backend defines (with the one policy that keeps C++ exceptions from crossing the C
// ABI), the casts between plugin handles and a backend's objects, the entry-point negotiation,
// error reporting and logging. Header-only; include it from exactly the plugins' C++ sources.
#ifndef POLYHAL_PLUGIN_SUPPORT_HPP_
#define POLYHAL_PLUGIN_SUPPORT_HPP_

#include <polyhal/plugin.h>

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <system_error>
#include <type_traits>
#include <vector>

namespace polyhal::plugin {

// The core's services, set by negotiate(). Each plugin has its own copy (hidden visibility).
inline const halPluginHost* host = nullptr;

// Sets the calling thread's error detail (printf-style) and returns `code`, so a failing entry
// reads `return fail(HAL_ERROR_BACKEND, "clFinish: %s", name);`.
inline halError fail(halError code, const char* format, ...) __attribute__((format(printf, 2, 3)));

inline halError fail(halError code, const char* format, ...) {
    if (host != nullptr && host->setErrorMessage != nullptr) {
        char message[1024];
        va_list args;
        va_start(args, format);
        std::vsnprintf(message, sizeof message, format, args);
        va_end(args);
        host->setErrorMessage(message);
    }
    return code;
}

// Logs through the core (printf-style), formatting only when the level is enabled.
inline void log(halLogLevel level, const char* format, ...) __attribute__((format(printf, 2, 3)));

inline void log(halLogLevel level, const char* format, ...) {
    if (host == nullptr || host->log == nullptr) return;
    if (host->shouldLog != nullptr && !host->shouldLog(level)) return;
    char message[1024];
    va_list args;
    va_start(args, format);
    std::vsnprintf(message, sizeof message, format, args);
    va_end(args);
    host->log(level, message);
}

// The exception being handled, as guarded() reports it: std::bad_alloc and thread exhaustion
// become HAL_ERROR_OUT_OF_MEMORY, anything else HAL_ERROR_UNKNOWN, each with a message naming
// `entry`. Call it only from inside a handler.
[[gnu::cold, gnu::noinline]] inline halError failFromException(const char* entry) noexcept {
    try {
        throw;
    } catch (const std::bad_alloc&) {
        return fail(HAL_ERROR_OUT_OF_MEMORY, "%s: out of host memory", entry);
    } catch (const std::system_error& error) {
        const bool exhausted = error.code() == std::errc::resource_unavailable_try_again ||
                               error.code() == std::errc::not_enough_memory;
        return fail(exhausted ? HAL_ERROR_OUT_OF_MEMORY : HAL_ERROR_UNKNOWN, "%s: %s", entry,
                    error.what());
    } catch (const std::exception& error) {
        return fail(HAL_ERROR_UNKNOWN, "%s: %s", entry, error.what());
    } catch (...) {
        return fail(HAL_ERROR_UNKNOWN, "%s: unknown exception", entry);
    }
}

// Runs `body` (returning halError) so that no C++ exception crosses the C ABI (failFromException
// says what a caught one becomes). The table builder below applies it to every entry; a plugin
// calls it itself only for work that runs outside an entry (a thread of its own).
template <class Body>
halError guarded(const char* entry, const Body& body) noexcept {
    try {
        return body();
    } catch (...) {
        // One handler, its work out of line: the entry's frame stays that of a plain call.
        return failFromException(entry);
    }
}

// ---- The dispatch table, built from the entries a backend defines ----
//
// A backend defines each entry it implements as a function named as its slot, with the slot's
// signature, in its own namespace (`halError streamCreate(halPluginDevice, int, uint32_t,
// halPluginStream*)` in stream.cpp), declares them where its plugin.cpp sees them
// (POLYHAL_PLUGIN_DECLARE_REQUIRED_ENTRIES, POLYHAL_PLUGIN_DECLARE_ENTRIES below), and builds its
// table there with
//
//     namespace polyhal::cpu {
//     POLYHAL_PLUGIN_DISPATCH_TABLE("cpu")  // defines constexpr dispatchTable()
//     }
//
// Every entry of HAL_PLUGIN_ENTRIES that the namespace declares fills its slot; the others stay
// empty (absent). A required entry that is missing, or an entry whose signature differs from its
// slot's, fails the build. An entry declared noexcept goes into the table as it is (it must not
// allocate but with std::nothrow, nor take a lock that can throw); any other is wrapped in
// guarded() (deviceClose, which returns nothing, logs the exception instead).
//
// How a missing entry is told apart: the macro looks every entry up by its plain name, with the
// namespace plugin::absent in view through a using-directive. A using-directive makes the names
// it nominates visible as if declared in the nearest namespace enclosing both it and the
// backend's namespace, so a backend's own `streamCreate` hides plugin::absent::streamCreate, and
// only an entry the backend does not declare finds the AbsentEntry of that name.

// The entries as values, in table order, and their names.
enum class EntryId : unsigned {
#define POLYHAL_PLUGIN_ENTRY_ID(entry, requirement, capabilities, group) entry,
    HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_ENTRY_ID)
#undef POLYHAL_PLUGIN_ENTRY_ID
};

inline constexpr const char* kEntryNames[] = {
#define POLYHAL_PLUGIN_ENTRY_NAME(entry, requirement, capabilities, group) #entry,
    HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_ENTRY_NAME)
#undef POLYHAL_PLUGIN_ENTRY_NAME
};

inline constexpr bool kEntryRequired[] = {
#define POLYHAL_PLUGIN_ENTRY_REQUIRED(entry, requirement, capabilities, group) (requirement) != 0,
    HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_ENTRY_REQUIRED)
#undef POLYHAL_PLUGIN_ENTRY_REQUIRED
};

namespace detail {

// HAL_PLUGIN_ENTRIES lists every slot of the table, in order, and nothing else.
inline constexpr size_t kEntryOffsets[] = {
#define POLYHAL_PLUGIN_ENTRY_OFFSET(entry, requirement, capabilities, group) \
    offsetof(halPluginDispatchTable, entry),
    HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_ENTRY_OFFSET)
#undef POLYHAL_PLUGIN_ENTRY_OFFSET
};

constexpr bool entryListCoversTable() {
    size_t expected = offsetof(halPluginDispatchTable, name) + sizeof(const char*);
    for (size_t offset : kEntryOffsets) {
        if (offset != expected) return false;
        expected += sizeof(void (*)());
    }
    return expected == sizeof(halPluginDispatchTable);
}
static_assert(entryListCoversTable(),
              "HAL_PLUGIN_ENTRIES must list every entry of halPluginDispatchTable, in table order");

// The group of each entry (HAL_PLUGIN_ENTRIES' last column), in table order.
inline constexpr int kEntryGroups[] = {
#define POLYHAL_PLUGIN_ENTRY_GROUP(entry, requirement, capabilities, group) group,
    HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_ENTRY_GROUP)
#undef POLYHAL_PLUGIN_ENTRY_GROUP
};

// Given which entries a backend defines (in table order), does it define every entry of each
// group or none of it?
template <size_t N>
constexpr bool groupsWholeOrAbsent(const bool (&present)[N]) {
    static_assert(N == sizeof kEntryGroups / sizeof kEntryGroups[0]);
    for (int group = 0; group < HAL_PLUGIN_GROUP_COUNT; ++group) {
        if (group == HAL_PLUGIN_ALONE) continue;
        int members = 0, defined = 0;
        for (size_t entry = 0; entry < N; ++entry) {
            if (kEntryGroups[entry] != group) continue;
            ++members;
            defined += present[entry] ? 1 : 0;
        }
        if (defined != 0 && defined != members) return false;
    }
    return true;
}

template <class Fn>
struct IsNoexcept : std::false_type {};
template <class R, class... Args>
struct IsNoexcept<R (*)(Args...) noexcept> : std::true_type {};

}  // namespace detail

// What the table builder finds for an entry the backend does not define.
struct AbsentEntry {};

namespace absent {
#define POLYHAL_PLUGIN_ABSENT_ENTRY(entry, requirement, capabilities, group) \
    inline constexpr AbsentEntry entry{};
HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_ABSENT_ENTRY)
#undef POLYHAL_PLUGIN_ABSENT_ENTRY
}  // namespace absent

// The same for layers whose entries are function templates over a vendor API (`entry<Api>`).
namespace absent_templates {
#define POLYHAL_PLUGIN_ABSENT_ENTRY(entry, requirement, capabilities, group) \
    template <class>                                                         \
    inline constexpr AbsentEntry entry{};
HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_ABSENT_ENTRY)
#undef POLYHAL_PLUGIN_ABSENT_ENTRY
}  // namespace absent_templates

// Guarded<Id, Entry>::call runs `Entry` under the exception policy above.
template <EntryId Id, auto Entry>
struct Guarded;

template <EntryId Id, class... Args, halError (*Entry)(Args...)>
struct Guarded<Id, Entry> {
    static halError call(Args... args) noexcept {
        return guarded(kEntryNames[static_cast<unsigned>(Id)], [&] { return Entry(args...); });
    }
};

template <EntryId Id, class... Args, void (*Entry)(Args...)>
struct Guarded<Id, Entry> {
    static void call(Args... args) noexcept {
        const char* entry = kEntryNames[static_cast<unsigned>(Id)];
        try {
            Entry(args...);
        } catch (const std::exception& error) {
            log(HAL_LOG_ERROR, "%s: %s", entry, error.what());
        } catch (...) {
            log(HAL_LOG_ERROR, "%s: unknown exception", entry);
        }
    }
};

// The value of slot `Id` (of type `Slot`) for what the lookup found: nullptr for an absent entry,
// else the entry, guarded unless it is noexcept.
template <class Slot, EntryId Id, auto Entry>
constexpr Slot slot() noexcept {
    if constexpr (std::is_same_v<decltype(Entry), const AbsentEntry*>) {
        static_assert(!kEntryRequired[static_cast<unsigned>(Id)],
                      "the backend does not define a required plugin entry");
        return nullptr;
    } else if constexpr (detail::IsNoexcept<decltype(Entry)>::value) {
        return Entry;
    } else {
        return &Guarded<Id, Entry>::call;
    }
}

// A table with the header filled and every slot empty.
constexpr halPluginDispatchTable emptyTable(const char* backendName) noexcept {
    halPluginDispatchTable table{};
    table.size = sizeof table;
    table.abiVersion = HAL_PLUGIN_ABI_VERSION;
    table.name = backendName;
    return table;
}

// Copies `mine` into `info`, a struct the core handed over to be filled, as far as the core's
// `size` reaches, so that a plugin built against a newer ABI never writes past an older core's
// struct: `return plugin::fillInfo(info, mine);`.
template <class Info>
halError fillInfo(Info* info, const Info& mine) noexcept {
    const size_t size = info->size < sizeof(Info) ? info->size : sizeof(Info);
    const size_t header = sizeof(info->size);
    if (size > header) {
        std::memcpy(reinterpret_cast<char*>(info) + header,
                    reinterpret_cast<const char*>(&mine) + header, size - header);
    }
    return HAL_SUCCESS;
}

// backendGetInfo's answer in one call:
// `return plugin::describeBackend(info, 300, 2 /* kDLCUDA */, "ptx,cubin,fatbin");`.
inline halError describeBackend(halPluginBackendInfo* info, uint32_t selectionPriority,
                                int32_t dlpackDeviceType, const char* moduleImageKinds) noexcept {
    halPluginBackendInfo mine{};
    mine.size = sizeof mine;
    mine.selectionPriority = selectionPriority;
    mine.dlpackDeviceType = dlpackDeviceType;
    mine.moduleImageKinds = moduleImageKinds;
    return fillInfo(info, mine);
}

// ---- Handles ----
//
// A plugin's handles are its own objects, which the core passes back without looking inside. An
// object type names the handle it travels as (`using Handle = halPluginStream;`), and these are
// the only casts between the two.
template <class Object>
typename Object::Handle toHandle(Object* object) noexcept {
    return reinterpret_cast<typename Object::Handle>(object);
}

template <class Object>
Object& fromHandle(typename Object::Handle handle) noexcept {
    return *reinterpret_cast<Object*>(handle);
}

// A destroy entry's usual body: deletes the object a handle made by toHandle(new Object(...))
// stands for. `return plugin::destroyHandle<Event>(event);`
template <class Object>
halError destroyHandle(typename Object::Handle handle) noexcept {
    delete &fromHandle<Object>(handle);
    return HAL_SUCCESS;
}

// ---- Native graphs ----
//
// Calls visit(op) (returning halError) for each operation of `desc` in list order, stepping by
// the core's opSize; stops at the first failure. Declines with HAL_ERROR_NOT_SUPPORTED a
// description older than the one this plugin was built with, which lacks members it reads.
template <class Visit>
halError forEachGraphOp(const halPluginGraphDesc& desc, const Visit& visit) {
    if (desc.size < offsetof(halPluginGraphDesc, opSize) + sizeof desc.opSize ||
        desc.opSize < sizeof(halPluginGraphOp)) {
        return fail(HAL_ERROR_NOT_SUPPORTED,
                    "the graph's description is older than this backend's");
    }
    const auto* ops = reinterpret_cast<const unsigned char*>(desc.ops);
    for (uint32_t i = 0; i < desc.numOps; ++i) {
        if (halError error =
                visit(*reinterpret_cast<const halPluginGraphOp*>(ops + i * desc.opSize));
            error != HAL_SUCCESS) {
            return error;
        }
    }
    return HAL_SUCCESS;
}

// One operation of a graph description kept past graphCreate: a kernel launch's arguments are
// copied, and the operation points to the copy. Movable, not copyable (the copy moves along).
class KeptGraphOp {
  public:
    explicit KeptGraphOp(const halPluginGraphOp& op) : op_(op) {
        if (op.kind != HAL_PLUGIN_GRAPH_OP_KERNEL) return;
        const auto& kernel = op.params.kernel;
        size_t bytes = 0;
        for (uint32_t i = 0; i < kernel.numArgs; ++i) bytes += kernel.args[i].size;
        argBytes_.resize(bytes);
        args_.resize(kernel.numArgs);
        size_t offset = 0;
        for (uint32_t i = 0; i < kernel.numArgs; ++i) {
            std::memcpy(argBytes_.data() + offset, kernel.args[i].value, kernel.args[i].size);
            args_[i] = {argBytes_.data() + offset, kernel.args[i].size};
            offset += kernel.args[i].size;
        }
        op_.params.kernel.args = args_.data();
    }
    KeptGraphOp(KeptGraphOp&&) = default;
    KeptGraphOp& operator=(KeptGraphOp&&) = default;

    const halPluginGraphOp& op() const { return op_; }

  private:
    halPluginGraphOp op_;
    std::vector<halKernelArg> args_;  // pointing into argBytes_
    std::vector<unsigned char> argBytes_;
};

// Implements the entry point: refuses another major version, remembers the host services and
// copies `mine` into the core's table, truncated to the smaller of the two sizes.
inline halError negotiate(uint32_t coreAbiVersion, const halPluginHost* coreHost,
                          halPluginDispatchTable* table, const halPluginDispatchTable& mine) {
    if (coreHost == nullptr || table == nullptr) return HAL_ERROR_INVALID_VALUE;
    host = coreHost;
    if (HAL_PLUGIN_VERSION_MAJOR(coreAbiVersion) != HAL_PLUGIN_ABI_VERSION_MAJOR) {
        return fail(HAL_ERROR_BACKEND_INCOMPATIBLE,
                    "plugin '%s' speaks plugin ABI %u.%u, the core speaks %u.%u", mine.name,
                    HAL_PLUGIN_ABI_VERSION_MAJOR, HAL_PLUGIN_ABI_VERSION_MINOR,
                    HAL_PLUGIN_VERSION_MAJOR(coreAbiVersion),
                    HAL_PLUGIN_VERSION_MINOR(coreAbiVersion));
    }
    const size_t size = table->size < sizeof(mine) ? table->size : sizeof(mine);
    std::memcpy(table, &mine, size);
    table->size = size;
    table->abiVersion = HAL_PLUGIN_ABI_VERSION;
    return HAL_SUCCESS;
}

}  // namespace polyhal::plugin

// Declarations of a backend's entries, with their slots' signatures, so that a backend never
// repeats a signature (a definition that differs from its slot is another function, and the build
// fails to link), in the header its plugin.cpp includes:
//
//     namespace polyhal::cpu {
//     POLYHAL_PLUGIN_DECLARE_REQUIRED_ENTRIES();  // every required entry
//     POLYHAL_PLUGIN_DECLARE_ENTRIES(launchHostFunc, streamGetNativeHandle);  // optional ones
//     }
#define POLYHAL_PLUGIN_DECLARE_REQUIRED_ENTRIES() \
    HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_DECLARE_IF_REQUIRED_) static_assert(true, "")
#define POLYHAL_PLUGIN_DECLARE_ENTRIES(...) \
    POLYHAL_PLUGIN_FOR_EACH_(POLYHAL_PLUGIN_DECLARE_, __VA_ARGS__) static_assert(true, "")

#define POLYHAL_PLUGIN_DECLARE_(name) \
    std::remove_pointer_t<decltype(halPluginDispatchTable::name)> name;
#define POLYHAL_PLUGIN_DECLARE_IF_REQUIRED_(entry, requirement, capabilities, group) \
    POLYHAL_PLUGIN_DECLARE_IF_##requirement##_(entry)
#define POLYHAL_PLUGIN_DECLARE_IF_HAL_PLUGIN_REQUIRED_(entry) POLYHAL_PLUGIN_DECLARE_(entry)
#define POLYHAL_PLUGIN_DECLARE_IF_HAL_PLUGIN_OPTIONAL_(entry)

// POLYHAL_PLUGIN_FOR_EACH_(m, a, b, ...) is m(a) m(b) ..., for up to 16 arguments.
#define POLYHAL_PLUGIN_EXPAND_(x) x
#define POLYHAL_PLUGIN_EACH_1_(m, x) m(x)
#define POLYHAL_PLUGIN_EACH_2_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_1_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_3_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_2_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_4_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_3_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_5_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_4_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_6_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_5_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_7_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_6_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_8_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_7_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_9_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_8_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_10_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_9_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_11_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_10_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_12_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_11_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_13_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_12_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_14_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_13_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_15_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_14_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_EACH_16_(m, x, ...) \
    m(x) POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_EACH_15_(m, __VA_ARGS__))
#define POLYHAL_PLUGIN_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, \
                             _16, name, ...)                                                   \
    name
#define POLYHAL_PLUGIN_FOR_EACH_(m, ...)                                                        \
    POLYHAL_PLUGIN_EXPAND_(POLYHAL_PLUGIN_PICK_(                                                \
        __VA_ARGS__, POLYHAL_PLUGIN_EACH_16_, POLYHAL_PLUGIN_EACH_15_, POLYHAL_PLUGIN_EACH_14_, \
        POLYHAL_PLUGIN_EACH_13_, POLYHAL_PLUGIN_EACH_12_, POLYHAL_PLUGIN_EACH_11_,              \
        POLYHAL_PLUGIN_EACH_10_, POLYHAL_PLUGIN_EACH_9_, POLYHAL_PLUGIN_EACH_8_,                \
        POLYHAL_PLUGIN_EACH_7_, POLYHAL_PLUGIN_EACH_6_, POLYHAL_PLUGIN_EACH_5_,                 \
        POLYHAL_PLUGIN_EACH_4_, POLYHAL_PLUGIN_EACH_3_, POLYHAL_PLUGIN_EACH_2_,                 \
        POLYHAL_PLUGIN_EACH_1_)(m, __VA_ARGS__))

// Defines `constexpr halPluginDispatchTable dispatchTable() noexcept` in the namespace around
// the use, filled from the entries that namespace declares (see "The dispatch table" above).
#define POLYHAL_PLUGIN_DISPATCH_TABLE(backendName)                                 \
    constexpr halPluginDispatchTable dispatchTable() noexcept {                    \
        using namespace ::polyhal::plugin::absent;                                 \
        constexpr bool present[] = {HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_DEFINED_)};  \
        static_assert(::polyhal::plugin::detail::groupsWholeOrAbsent(present),     \
                      POLYHAL_PLUGIN_PARTIAL_GROUP_MESSAGE_);                      \
        halPluginDispatchTable table = ::polyhal::plugin::emptyTable(backendName); \
        HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_FILL_SLOT_)                              \
        return table;                                                              \
    }
#define POLYHAL_PLUGIN_DEFINED_(entry, requirement, capabilities, group) \
    !std::is_same_v<decltype(&entry), const ::polyhal::plugin::AbsentEntry*>,
#define POLYHAL_PLUGIN_PARTIAL_GROUP_MESSAGE_                                           \
    "the backend defines part of a group of entries that work only together (the last " \
    "column of HAL_PLUGIN_ENTRIES): all of it or none"
#define POLYHAL_PLUGIN_FILL_SLOT_(entry, requirement, capabilities, group) \
    table.entry = ::polyhal::plugin::slot<decltype(table.entry),           \
                                          ::polyhal::plugin::EntryId::entry, &entry>();

// The same for a layer whose entries are function templates over a vendor API `Api` (with a
// static `kName`): defines `template <class Api> constexpr halPluginDispatchTable
// dispatchTable() noexcept`, whose slot `entry` holds `entry<Api>` (backends/gpu_common).
#define POLYHAL_PLUGIN_DISPATCH_TABLE_TEMPLATE()                                           \
    template <class PluginApi>                                                             \
    constexpr halPluginDispatchTable dispatchTable() noexcept {                            \
        using namespace ::polyhal::plugin::absent_templates;                               \
        constexpr bool present[] = {HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_DEFINED_TEMPLATE_)}; \
        static_assert(::polyhal::plugin::detail::groupsWholeOrAbsent(present),             \
                      POLYHAL_PLUGIN_PARTIAL_GROUP_MESSAGE_);                              \
        halPluginDispatchTable table = ::polyhal::plugin::emptyTable(PluginApi::kName);    \
        HAL_PLUGIN_ENTRIES(POLYHAL_PLUGIN_FILL_TEMPLATE_SLOT_)                             \
        return table;                                                                      \
    }
#define POLYHAL_PLUGIN_DEFINED_TEMPLATE_(entry, requirement, capabilities, group) \
    !std::is_same_v<decltype(&entry<PluginApi>), const ::polyhal::plugin::AbsentEntry*>,
#define POLYHAL_PLUGIN_FILL_TEMPLATE_SLOT_(entry, requirement, capabilities, group) \
    table.entry = ::polyhal::plugin::slot<decltype(table.entry),                    \
                                          ::polyhal::plugin::EntryId::entry, &entry<PluginApi>>();

// Defines the plugin's one exported symbol (HAL_PLUGIN_ENTRY_NAME), which hands out `table`, a
// constant expression such as `polyhal::cpu::dispatchTable()`, through negotiate().
#define POLYHAL_PLUGIN_DEFINE_ENTRY_POINT(table)                                           \
    extern "C" HAL_PLUGIN_EXPORT halError halPluginGetDispatchTable(                       \
        uint32_t coreAbiVersion, const halPluginHost* host, halPluginDispatchTable* out) { \
        static constexpr halPluginDispatchTable kTable = table;                            \
        return ::polyhal::plugin::negotiate(coreAbiVersion, host, out, kTable);            \
    }

#endif  // POLYHAL_PLUGIN_SUPPORT_HPP_
