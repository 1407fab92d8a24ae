// Each rule of the Level Zero driver double fires: a deliberately wrong call sequence, made
// through Debian's loader with the validation layer on, in a child process that must die with
// the double's message (or, for a host access to device memory, with a fault). The functions newer
// than Debian's loader come from the newer-loader stand-in (newer_loader/), found by name.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <level_zero/ze_api.h>

#include <catch2/catch.hpp>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

struct ChildOutcome {
    bool exited = false;  // returned normally from the scenario
    int signal = 0;       // the signal that ended it, if one did
    std::string stderrText;
};

// Stops the child when a call that must succeed does not.
void expectSuccess(ze_result_t result, const char* call) {
    if (result != ZE_RESULT_SUCCESS) {
        std::fprintf(stderr, "scenario setup failed: %s returned 0x%x\n", call,
                     static_cast<unsigned>(result));
        std::_Exit(3);
    }
}
#define EXPECT_ZE(call) expectSuccess(call, #call)

// Runs `scenario` in a child process and collects how it ended and what it wrote to stderr.
template <typename Scenario>
ChildOutcome runInChild(Scenario scenario) {
    int pipeFds[2];
    REQUIRE(pipe(pipeFds) == 0);
    const pid_t child = fork();
    if (child == 0) {
        // The child reports only through its stderr and how it ends: not through the test
        // framework's handlers, which would catch the abort and report a failure of their own.
        for (int signal : {SIGABRT, SIGSEGV, SIGBUS, SIGILL, SIGFPE}) std::signal(signal, SIG_DFL);
        const int devNull = open("/dev/null", O_WRONLY);
        dup2(devNull, STDOUT_FILENO);
        dup2(pipeFds[1], STDERR_FILENO);
        close(pipeFds[0]);
        close(pipeFds[1]);
        scenario();
        std::fflush(stderr);
        std::_Exit(0);
    }
    REQUIRE(child > 0);
    close(pipeFds[1]);
    ChildOutcome outcome;
    char buffer[4096];
    for (ssize_t got; (got = read(pipeFds[0], buffer, sizeof buffer)) > 0;) {
        outcome.stderrText.append(buffer, static_cast<size_t>(got));
    }
    close(pipeFds[0]);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    outcome.exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (WIFSIGNALED(status)) outcome.signal = WTERMSIG(status);
    return outcome;
}

// A child that broke a rule: killed by the double's abort, with the double's message.
void expectBrokenRule(const ChildOutcome& outcome, const std::string& message) {
    INFO("child's stderr: " << outcome.stderrText);
    CHECK_FALSE(outcome.exited);
    CHECK(outcome.signal == SIGABRT);
    CHECK_THAT(outcome.stderrText, Catch::Contains("Level Zero driver double: broken rule: "));
    CHECK_THAT(outcome.stderrText, Catch::Contains(message));
}

struct Session {
    ze_driver_handle_t driver = nullptr;
    ze_device_handle_t device = nullptr;
    ze_context_handle_t context = nullptr;

    Session() {
        EXPECT_ZE(zeInit(ZE_INIT_FLAG_GPU_ONLY));
        uint32_t count = 1;
        EXPECT_ZE(zeDriverGet(&count, &driver));
        count = 1;
        EXPECT_ZE(zeDeviceGet(driver, &count, &device));
        context = newContext();
    }

    ze_context_handle_t newContext() const {
        const ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
        ze_context_handle_t made = nullptr;
        EXPECT_ZE(zeContextCreate(driver, &desc, &made));
        return made;
    }

    ze_event_handle_t newEvent(ze_context_handle_t in, ze_event_pool_flags_t flags =
                                                           ZE_EVENT_POOL_FLAG_HOST_VISIBLE) const {
        const ze_event_pool_desc_t poolDesc{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, flags, 1};
        ze_event_pool_handle_t pool = nullptr;
        EXPECT_ZE(zeEventPoolCreate(in, &poolDesc, 0, nullptr, &pool));
        const ze_event_desc_t desc{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0,
                                   ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
        ze_event_handle_t event = nullptr;
        EXPECT_ZE(zeEventCreate(pool, &desc, &event));
        return event;
    }
    ze_event_handle_t newEvent() const { return newEvent(context); }

    ze_command_list_handle_t newList(ze_context_handle_t in) const {
        const ze_command_queue_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                           nullptr,
                                           0,
                                           0,
                                           0,
                                           ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                           ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_list_handle_t list = nullptr;
        EXPECT_ZE(zeCommandListCreateImmediate(in, device, &desc, &list));
        return list;
    }
    ze_command_list_handle_t newList() const { return newList(context); }

    // A regular command list of the compute command queue group, open.
    ze_command_list_handle_t newRegularList() const {
        const ze_command_list_desc_t desc{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
        ze_command_list_handle_t list = nullptr;
        EXPECT_ZE(zeCommandListCreate(context, device, &desc, &list));
        return list;
    }

    // zeCommandListImmediateAppendCommandListsExp, submitting `list` to `immediate` with no events.
    ze_result_t submit(ze_command_list_handle_t immediate, ze_command_list_handle_t list,
                       ze_event_handle_t signal = nullptr) const {
        using Submit =
            ze_result_t(ZE_APICALL*)(ze_command_list_handle_t, uint32_t, ze_command_list_handle_t*,
                                     ze_event_handle_t, uint32_t, ze_event_handle_t*);
        const auto function =
            reinterpret_cast<Submit>(loaderFunction("zeCommandListImmediateAppendCommandListsExp"));
        return function(immediate, 1, &list, signal, 0, nullptr);
    }

    // zeMemPutIpcHandle, from the newer loader.
    ze_result_t putIpcHandle(ze_ipc_mem_handle_t handle) const {
        using Put = ze_result_t(ZE_APICALL*)(ze_context_handle_t, ze_ipc_mem_handle_t);
        return reinterpret_cast<Put>(loaderFunction("zeMemPutIpcHandle"))(context, handle);
    }

    static void* loaderFunction(const char* name) {
        void* function = dlsym(RTLD_DEFAULT, name);
        if (function == nullptr) {
            std::fprintf(stderr, "scenario setup failed: the loader does not export %s\n", name);
            std::_Exit(3);
        }
        return function;
    }

    void* deviceMemory(ze_context_handle_t in, size_t size) const {
        const ze_device_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0,
                                              0};
        void* memory = nullptr;
        EXPECT_ZE(zeMemAllocDevice(in, &desc, size, 256, device, &memory));
        return memory;
    }

    // `memory` (a device allocation) exported and opened again, as another process would.
    void* reopened(void* memory) const {
        ze_ipc_mem_handle_t handle;
        EXPECT_ZE(zeMemGetIpcHandle(context, memory, &handle));
        void* opened = nullptr;
        EXPECT_ZE(zeMemOpenIpcHandle(context, device, handle, 0, &opened));
        return opened;
    }

    // Kernel `name` of the CTS's SPIR-V image, with its group size set.
    ze_kernel_handle_t kernel(const char* name) const {
        std::ifstream file(POLYHAL_CTS_SPIRV, std::ios::binary);
        const std::vector<uint8_t> image((std::istreambuf_iterator<char>(file)),
                                         std::istreambuf_iterator<char>());
        const ze_module_desc_t desc{ZE_STRUCTURE_TYPE_MODULE_DESC,
                                    nullptr,
                                    ZE_MODULE_FORMAT_IL_SPIRV,
                                    image.size(),
                                    image.data(),
                                    "",
                                    nullptr};
        ze_module_handle_t module = nullptr;
        EXPECT_ZE(zeModuleCreate(context, device, &desc, &module, nullptr));
        const ze_kernel_desc_t kernelDesc{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
        ze_kernel_handle_t made = nullptr;
        EXPECT_ZE(zeKernelCreate(module, &kernelDesc, &made));
        EXPECT_ZE(zeKernelSetGroupSize(made, 32, 1, 1));
        return made;
    }
};

constexpr ze_kernel_indirect_access_flags_t kIndirectAccess =
    ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE | ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST;

}  // namespace

TEST_CASE("a correct sequence runs to the end", "[rules]") {
    const ChildOutcome outcome = runInChild([] {
        Session session;
        ze_event_handle_t event = session.newEvent();
        ze_command_list_handle_t list = session.newList();
        EXPECT_ZE(zeCommandListAppendBarrier(list, event, 0, nullptr));
        EXPECT_ZE(zeEventHostSynchronize(event, UINT64_MAX));
        EXPECT_ZE(zeEventHostReset(event));
        EXPECT_ZE(zeEventHostSignal(event));
        EXPECT_ZE(zeCommandListDestroy(list));
    });
    INFO(outcome.stderrText);
    CHECK(outcome.exited);
}

TEST_CASE("the validation layer answers bad parameters before the double sees them", "[rules]") {
    const ChildOutcome outcome = runInChild([] {
        Session session;
        ze_event_pool_handle_t pool = nullptr;
        // The double would read the missing description; parameter validation refuses it.
        const ze_result_t result = zeEventPoolCreate(session.context, nullptr, 0, nullptr, &pool);
        std::fprintf(stderr, "result 0x%x\n", static_cast<unsigned>(result));
        std::_Exit(result == ZE_RESULT_ERROR_INVALID_NULL_POINTER ? 0 : 4);
    });
    INFO(outcome.stderrText);
    CHECK(outcome.exited);
}

TEST_CASE("an event is not signalled twice without a reset", "[rules]") {
    SECTION("by the host") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             ze_event_handle_t event = session.newEvent();
                             EXPECT_ZE(zeEventHostSignal(event));
                             zeEventHostSignal(event);
                         }),
                         "zeEventHostSignal: event");
    }
    SECTION("by a command: the event was handed out signalled") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             ze_event_handle_t event = session.newEvent();
                             EXPECT_ZE(zeEventHostSignal(event));
                             zeCommandListAppendBarrier(session.newList(), event, 0, nullptr);
                         }),
                         "is already signalled");
    }
}

TEST_CASE("an event is not reset while a wait on it is pending", "[rules]") {
    expectBrokenRule(
        runInChild([] {
            Session session;
            ze_event_handle_t event = session.newEvent();
            EXPECT_ZE(zeCommandListAppendBarrier(session.newList(), nullptr, 1, &event));
            zeEventHostReset(event);
        }),
        "still wait for it");
}

TEST_CASE("handles and memory are used only in their own context", "[rules]") {
    SECTION("an event of another context") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             ze_event_handle_t foreign = session.newEvent(session.newContext());
                             zeCommandListAppendBarrier(session.newList(), foreign, 0, nullptr);
                         }),
                         "belongs to context");
    }
    SECTION("memory of another context") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             void* foreign = session.deviceMemory(session.newContext(), 64);
                             void* mine = session.deviceMemory(session.context, 64);
                             zeCommandListAppendMemoryCopy(session.newList(), mine, foreign, 64,
                                                           nullptr, 0, nullptr);
                         }),
                         "is memory of context");
    }
}

TEST_CASE("a command list is destroyed only once its work has finished", "[rules]") {
    expectBrokenRule(runInChild([] {
                         Session session;
                         ze_event_handle_t never = session.newEvent();
                         ze_command_list_handle_t list = session.newList();
                         EXPECT_ZE(zeCommandListAppendBarrier(list, nullptr, 1, &never));
                         zeCommandListDestroy(list);
                     }),
                     "that have not finished");
}

TEST_CASE("a regular command list submitted once its last submission finished runs again",
          "[rules]") {
    const ChildOutcome outcome = runInChild([] {
        Session session;
        void* memory = session.deviceMemory(session.context, 64);
        const unsigned char pattern = 7;
        ze_command_list_handle_t regular = session.newRegularList();
        EXPECT_ZE(
            zeCommandListAppendMemoryFill(regular, memory, &pattern, 1, 64, nullptr, 0, nullptr));
        EXPECT_ZE(zeCommandListClose(regular));
        ze_command_list_handle_t immediate = session.newList();
        for (int run = 0; run < 2; ++run) {
            ze_event_handle_t done = session.newEvent();
            EXPECT_ZE(session.submit(immediate, regular, done));
            EXPECT_ZE(zeEventHostSynchronize(done, UINT64_MAX));
        }
        EXPECT_ZE(zeCommandListDestroy(regular));
        EXPECT_ZE(zeCommandListDestroy(immediate));
    });
    INFO(outcome.stderrText);
    CHECK(outcome.exited);
}

TEST_CASE("a regular command list is submitted closed, and never while it may still run",
          "[rules]") {
    SECTION("before zeCommandListClose") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             session.submit(session.newList(), session.newRegularList());
                         }),
                         "is submitted before zeCommandListClose");
    }
    SECTION("appended to once closed") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             ze_command_list_handle_t regular = session.newRegularList();
                             EXPECT_ZE(zeCommandListClose(regular));
                             zeCommandListAppendBarrier(regular, nullptr, 0, nullptr);
                         }),
                         "was closed");
    }
    SECTION("again while its submission is pending") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             void* memory = session.deviceMemory(session.context, 64);
                             const unsigned char pattern = 7;
                             ze_command_list_handle_t regular = session.newRegularList();
                             EXPECT_ZE(zeCommandListAppendMemoryFill(regular, memory, &pattern, 1,
                                                                     64, nullptr, 0, nullptr));
                             EXPECT_ZE(zeCommandListClose(regular));
                             // Held: nothing the list holds runs until `never` signals.
                             ze_command_list_handle_t immediate = session.newList();
                             ze_event_handle_t never = session.newEvent();
                             EXPECT_ZE(zeCommandListAppendBarrier(immediate, nullptr, 1, &never));
                             EXPECT_ZE(session.submit(immediate, regular));
                             session.submit(immediate, regular);
                         }),
                         "is submitted again while");
    }
    SECTION("destroyed while its submission is pending") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             ze_command_list_handle_t regular = session.newRegularList();
                             EXPECT_ZE(zeCommandListAppendBarrier(regular, nullptr, 0, nullptr));
                             EXPECT_ZE(zeCommandListClose(regular));
                             ze_command_list_handle_t immediate = session.newList();
                             ze_event_handle_t never = session.newEvent();
                             EXPECT_ZE(zeCommandListAppendBarrier(immediate, nullptr, 1, &never));
                             EXPECT_ZE(session.submit(immediate, regular));
                             zeCommandListDestroy(regular);
                         }),
                         "is destroyed while");
    }
}

TEST_CASE("device memory faults when the host touches it", "[rules]") {
    const ChildOutcome outcome = runInChild([] {
        Session session;
        auto* memory = static_cast<volatile char*>(session.deviceMemory(session.context, 64));
        memory[0] = 1;
    });
    INFO(outcome.stderrText);
    CHECK_FALSE(outcome.exited);
    // Killed by the fault, or (under AddressSanitizer) reported by it.
    const bool faulted = outcome.signal == SIGSEGV || outcome.signal == SIGBUS ||
                         outcome.stderrText.find("SEGV") != std::string::npos;
    CHECK(faulted);
}

TEST_CASE("kernel launches follow the kernel's declared signature", "[rules]") {
    SECTION("without indirect access") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             ze_kernel_handle_t kernel = session.kernel("block_index");
                             void* out = session.deviceMemory(session.context, 64);
                             EXPECT_ZE(zeKernelSetArgumentValue(kernel, 0, sizeof out, &out));
                             const ze_group_count_t groups{1, 1, 1};
                             zeCommandListAppendLaunchKernel(session.newList(), kernel, &groups,
                                                             nullptr, 0, nullptr);
                         }),
                         "without zeKernelSetIndirectAccess");
    }
    SECTION("with an argument never set") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             ze_kernel_handle_t kernel = session.kernel("fill_u32");
                             EXPECT_ZE(zeKernelSetIndirectAccess(kernel, kIndirectAccess));
                             void* out = session.deviceMemory(session.context, 64);
                             EXPECT_ZE(zeKernelSetArgumentValue(kernel, 0, sizeof out, &out));
                             const ze_group_count_t groups{1, 1, 1};
                             zeCommandListAppendLaunchKernel(session.newList(), kernel, &groups,
                                                             nullptr, 0, nullptr);
                         }),
                         "argument 1 of kernel 'fill_u32' was never set");
    }
    SECTION("with a pointer the device cannot reach") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             ze_kernel_handle_t kernel = session.kernel("block_index");
                             EXPECT_ZE(zeKernelSetIndirectAccess(kernel, kIndirectAccess));
                             static uint32_t pageable[64];
                             void* out = pageable;
                             EXPECT_ZE(zeKernelSetArgumentValue(kernel, 0, sizeof out, &out));
                             const ze_group_count_t groups{1, 1, 1};
                             zeCommandListAppendLaunchKernel(session.newList(), kernel, &groups,
                                                             nullptr, 0, nullptr);
                         }),
                         "not device or host memory of the launch's context");
    }
    SECTION("with an argument of the wrong size: refused as a driver refuses it") {
        const ChildOutcome outcome = runInChild([] {
            Session session;
            ze_kernel_handle_t kernel = session.kernel("fill_u32");
            const uint64_t wide = 7;  // fill_u32's `value` is a 32-bit uint
            const ze_result_t result = zeKernelSetArgumentValue(kernel, 1, sizeof wide, &wide);
            std::_Exit(result == ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE ? 0 : 4);
        });
        INFO(outcome.stderrText);
        CHECK(outcome.exited);
    }
}

TEST_CASE("the host waits only on events of host-visible pools", "[rules]") {
    expectBrokenRule(runInChild([] {
                         Session session;
                         ze_event_handle_t deviceOnly = session.newEvent(session.context, 0);
                         zeEventQueryStatus(deviceOnly);
                     }),
                     "created without ZE_EVENT_POOL_FLAG_HOST_VISIBLE");
}

TEST_CASE("an event is not destroyed while a command uses it", "[rules]") {
    expectBrokenRule(
        runInChild([] {
            Session session;
            ze_event_handle_t never = session.newEvent();
            EXPECT_ZE(zeCommandListAppendBarrier(session.newList(), nullptr, 1, &never));
            zeEventDestroy(never);
        }),
        "is still in use by 1 appended command");
}

TEST_CASE("a fill writes only memory of the driver", "[rules]") {
    expectBrokenRule(runInChild([] {
                         Session session;
                         static unsigned char pageable[256];
                         const unsigned char pattern = 9;
                         zeCommandListAppendMemoryFill(session.newList(), pageable, &pattern, 1,
                                                       sizeof pageable, nullptr, 0, nullptr);
                     }),
                     "is not memory allocated by this driver");
}

TEST_CASE("a command list is appended to from one thread at a time", "[rules]") {
    expectBrokenRule(runInChild([] {
                         Session session;
                         ze_command_list_handle_t list = session.newList();
                         // Two threads append until their calls overlap, which the double
                         // catches the first time it happens.
                         const auto appendMany = [list] {
                             for (int i = 0; i < 1000000; ++i) {
                                 zeCommandListAppendBarrier(list, nullptr, 0, nullptr);
                             }
                         };
                         std::thread other(appendMany);
                         appendMany();
                         other.join();
                     }),
                     "two threads append to command list");
}

TEST_CASE("commands with no barrier between them are not ordered", "[rules]") {
    const ChildOutcome outcome = runInChild([] {
        Session session;
        const ze_host_mem_alloc_desc_t desc{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
        void* buffers[3] = {};
        for (void*& buffer : buffers) {
            EXPECT_ZE(zeMemAllocHost(session.context, &desc, 4, 4, &buffer));
        }
        auto value = [&](int i) -> uint32_t& { return *static_cast<uint32_t*>(buffers[i]); };
        value(0) = 1;
        value(1) = 2;
        value(2) = 3;
        ze_event_handle_t go = session.newEvent();
        ze_event_handle_t done = session.newEvent();
        ze_command_list_handle_t list = session.newList();
        // Held until `go`, so that both copies are queued when the list reaches them.
        EXPECT_ZE(zeCommandListAppendBarrier(list, nullptr, 1, &go));
        EXPECT_ZE(
            zeCommandListAppendMemoryCopy(list, buffers[1], buffers[0], 4, nullptr, 0, nullptr));
        EXPECT_ZE(
            zeCommandListAppendMemoryCopy(list, buffers[2], buffers[1], 4, nullptr, 0, nullptr));
        EXPECT_ZE(zeCommandListAppendBarrier(list, done, 0, nullptr));
        EXPECT_ZE(zeEventHostSignal(go));
        EXPECT_ZE(zeEventHostSynchronize(done, UINT64_MAX));
        // In order, the second copy would have read the first one's result (1).
        std::fprintf(stderr, "second copy read %u\n", value(2));
        std::_Exit(value(1) == 1 && value(2) == 2 ? 0 : 4);
    });
    INFO(outcome.stderrText);
    CHECK(outcome.exited);
}

TEST_CASE("memory is not freed before the commands using it have run", "[rules]") {
    expectBrokenRule(
        runInChild([] {
            Session session;
            ze_event_handle_t never = session.newEvent();
            ze_command_list_handle_t list = session.newList();
            void* from = session.deviceMemory(session.context, 64);
            void* to = session.deviceMemory(session.context, 64);
            EXPECT_ZE(zeCommandListAppendBarrier(list, nullptr, 1, &never));
            EXPECT_ZE(zeCommandListAppendMemoryCopy(list, to, from, 64, nullptr, 0, nullptr));
            zeMemFree(session.context, from);
        }),
        "is freed while 1 appended command(s) using it have not finished");
}

TEST_CASE(
    "IPC memory: only a device allocation's base is exported, and opened memory is closed, "
    "never freed",
    "[rules][ipc]") {
    SECTION("an interior pointer exported") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             auto* memory =
                                 static_cast<char*>(session.deviceMemory(session.context, 4096));
                             ze_ipc_mem_handle_t handle;
                             zeMemGetIpcHandle(session.context, memory + 256, &handle);
                         }),
                         "is not the base of a device allocation");
    }
    SECTION("memory closed that was not opened") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             void* memory = session.deviceMemory(session.context, 4096);
                             zeMemCloseIpcHandle(session.context, memory);
                         }),
                         "was not opened with zeMemOpenIpcHandle");
    }
    SECTION("opened memory freed") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             void* opened =
                                 session.reopened(session.deviceMemory(session.context, 4096));
                             zeMemFree(session.context, opened);
                         }),
                         "never freed");
    }
    SECTION("opened memory closed while a copy uses it") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             void* memory = session.deviceMemory(session.context, 4096);
                             void* opened = session.reopened(memory);
                             ze_event_handle_t never = session.newEvent();
                             ze_command_list_handle_t list = session.newList();
                             EXPECT_ZE(zeCommandListAppendBarrier(list, nullptr, 1, &never));
                             EXPECT_ZE(zeCommandListAppendMemoryCopy(list, memory, opened, 64,
                                                                     nullptr, 0, nullptr));
                             zeMemCloseIpcHandle(session.context, opened);
                         }),
                         "is closed while 1 appended command(s) using it have not finished");
    }
}

TEST_CASE("the driver hands zeCommandListImmediateAppendCommandListsExp to the loader only",
          "[rules][loader]") {
    const ChildOutcome outcome = runInChild([] {
        Session session;
        uint32_t count = 0;
        EXPECT_ZE(zeDriverGetExtensionProperties(session.driver, &count, nullptr));
        std::vector<ze_driver_extension_properties_t> extensions(count);
        EXPECT_ZE(zeDriverGetExtensionProperties(session.driver, &count, extensions.data()));
        bool listed = false;
        for (const auto& extension : extensions) {
            listed = listed ||
                     std::string(extension.name) == "ZE_experimental_immediate_command_list_append";
        }
        void* function = &session;
        const ze_result_t result = zeDriverGetExtensionFunctionAddress(
            session.driver, "zeCommandListImmediateAppendCommandListsExp", &function);
        if (!listed || result != ZE_RESULT_ERROR_INVALID_ARGUMENT || function != nullptr) {
            std::fprintf(stderr, "listed %d, zeDriverGetExtensionFunctionAddress 0x%x, %p\n",
                         listed, static_cast<unsigned>(result), function);
            std::_Exit(4);
        }
    });
    INFO(outcome.stderrText);
    CHECK(outcome.exited);
}

TEST_CASE("IPC handles taken are put back, or dropped by the free one at a time", "[rules][ipc]") {
    SECTION("two handles taken, none put back, the allocation freed: one leaks") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             void* memory = session.deviceMemory(session.context, 4096);
                             ze_ipc_mem_handle_t handle;
                             EXPECT_ZE(zeMemGetIpcHandle(session.context, memory, &handle));
                             EXPECT_ZE(zeMemGetIpcHandle(session.context, memory, &handle));
                             zeMemFree(session.context, memory);
                         }),
                         "freed with 2 IPC handle references outstanding");
    }
    SECTION("a handle put back more often than it was taken") {
        expectBrokenRule(runInChild([] {
                             Session session;
                             void* memory = session.deviceMemory(session.context, 4096);
                             ze_ipc_mem_handle_t handle;
                             EXPECT_ZE(zeMemGetIpcHandle(session.context, memory, &handle));
                             EXPECT_ZE(session.putIpcHandle(handle));
                             session.putIpcHandle(handle);
                         }),
                         "put back more often than it was taken");
    }
    SECTION("handles put back, or one dropped by the free, leak nothing") {
        const ChildOutcome outcome = runInChild([] {
            Session session;
            void* memory = session.deviceMemory(session.context, 4096);
            ze_ipc_mem_handle_t handle;
            EXPECT_ZE(zeMemGetIpcHandle(session.context, memory, &handle));
            EXPECT_ZE(zeMemGetIpcHandle(session.context, memory, &handle));
            EXPECT_ZE(session.putIpcHandle(handle));
            EXPECT_ZE(zeMemFree(session.context, memory));
        });
        INFO(outcome.stderrText);
        CHECK(outcome.exited);
    }
}

namespace {

// Two immediate lists on compute engine 0: the first waits for an event only the host signals,
// the second signals `after` at once. Exits 0 when `after` has signalled within 20 ms exactly
// when `expectStall` is false, and ends with both lists drained.
void waitBesideHostWait(bool expectStall) {
    Session session;
    uint32_t groups = 1;
    ze_command_queue_group_properties_t compute{};
    compute.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    EXPECT_ZE(zeDeviceGetCommandQueueGroupProperties(session.device, &groups, &compute));
    ze_event_handle_t host = session.newEvent();
    ze_event_handle_t after = session.newEvent();
    ze_command_list_handle_t waiting = session.newList();
    ze_command_list_handle_t other = session.newList();
    EXPECT_ZE(zeCommandListAppendBarrier(waiting, nullptr, 1, &host));
    EXPECT_ZE(zeCommandListAppendBarrier(other, after, 0, nullptr));
    const bool stalled = zeEventHostSynchronize(after, 20'000'000) == ZE_RESULT_NOT_READY;
    EXPECT_ZE(zeEventHostSignal(host));
    EXPECT_ZE(zeEventHostSynchronize(after, UINT64_MAX));
    if (stalled != expectStall) {
        std::fprintf(stderr, "%u compute engine(s); the other list %s\n", compute.numQueues,
                     stalled ? "stalled" : "ran");
        std::_Exit(4);
    }
}

}  // namespace

TEST_CASE("with shared rings, a wait on one list of an engine holds every list of the engine",
          "[rules][rings]") {
    SECTION("shared rings: one compute engine, and the other list waits for the host") {
        const ChildOutcome outcome = runInChild([] {
            setenv("POLYHAL_ZE_DOUBLE_SHARED_RINGS", "1,1", 1);
            waitBesideHostWait(true);
        });
        INFO(outcome.stderrText);
        CHECK(outcome.exited);
    }
    SECTION("a ring per list: the other list runs") {
        const ChildOutcome outcome = runInChild([] { waitBesideHostWait(false); });
        INFO(outcome.stderrText);
        CHECK(outcome.exited);
    }
}
