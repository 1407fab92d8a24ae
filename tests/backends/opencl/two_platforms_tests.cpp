// Run by CTest with OCL_ICD_VENDORS listing the same OpenCL driver twice: the ICD loader then
// reports two platforms, whose devices get separate OpenCL contexts. OpenCL cannot wait for an
// event of another context directly; the plugin must still order the streams.
#include "plugin_fixture.hpp"

using namespace opencl_test;

namespace {

cl_context queueContext(halPluginStream stream) {
    void* queue = nullptr;
    REQUIRE_OK(plugin().streamGetNativeHandle(stream, &queue));
    cl_context context = nullptr;
    REQUIRE(clGetCommandQueueInfo(static_cast<cl_command_queue>(queue), CL_QUEUE_CONTEXT,
                                  sizeof context, &context, nullptr) == CL_SUCCESS);
    return context;
}

}  // namespace

TEST_CASE("a stream waits for an event of a device in another OpenCL context", "[.two_platforms]") {
    int count = 0;
    REQUIRE_OK(plugin().deviceGetCount(&count));
    REQUIRE(count == 2);
    halPluginDevice other = nullptr;
    REQUIRE_OK(plugin().deviceOpen(1, &other));
    halPluginStream waiting = nullptr;
    REQUIRE_OK(plugin().streamCreate(other, 0, 0, &waiting));
    {
        Stream producer;
        REQUIRE(queueContext(producer.get()) != queueContext(waiting));
        Event event;
        Gate gate;
        gate.block(producer);
        REQUIRE_OK(plugin().eventRecord(event.get(), producer.get()));
        REQUIRE_OK(plugin().streamWaitEvent(waiting, event.get()));
        const int value = 17;
        int target = 0;
        REQUIRE_OK(
            plugin().memcpyAsync(waiting, &target, &value, sizeof value, HAL_MEMCPY_HOST_TO_HOST));
        CHECK(plugin().streamQuery(waiting) == HAL_ERROR_NOT_READY);
        CHECK(target == 0);
        gate.open();
        REQUIRE_OK(plugin().streamSynchronize(waiting));
        CHECK(target == 17);
    }
    REQUIRE_OK(plugin().streamDestroy(waiting));
    plugin().deviceClose(other);
}
