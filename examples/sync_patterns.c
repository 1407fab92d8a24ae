/*
 * The four AscendCL synchronisation patterns on polyhal, with kernels on two streams:
 *
 *   1. event synchronisation   the host waits for one point of a stream     halSynchronizeEvent
 *   2. stream synchronisation  the host waits for all work of a stream      halSynchronizeStream
 *   3. stream waits for event  one stream waits for another, the host not   halStreamWaitEvent
 *   4. device synchronisation  the host waits for every stream              halSynchronizeDevice
 *
 * Usage: polyhal-example [kernel-module]
 * The module defaults to the CPU kernels built with the example (examples/kernels.c); the
 * backend comes from POLYHAL_BACKEND as for every polyhal program.
 */
#include <polyhal/hal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELEMENTS (1u << 20)
#define BLOCK 256u

/* Prints the failed call with polyhal's error detail; returns 0 so callers can chain. */
static int failed(const char* what, halError status) {
    char detail[1024];
    snprintf(detail, sizeof detail, "%s", halGetLastErrorMessage());
    fprintf(stderr, "%s failed: %s: %s\n", what, halGetErrorName(status), detail);
    return 0;
}

#define TRY(call)                     \
    do {                              \
        halError status_ = (call);    \
        if (status_ != HAL_SUCCESS) { \
            failed(#call, status_);   \
            goto cleanup;             \
        }                             \
    } while (0)

static halError launchFill(halFunction fill, float* out, float value, halStream stream) {
    uint32_t n = ELEMENTS;
    halKernelArg args[3];
    halDim3 grid = {(ELEMENTS + BLOCK - 1) / BLOCK, 1, 1};
    halDim3 block = {BLOCK, 1, 1};
    args[0].value = &out;
    args[0].size = sizeof out;
    args[1].value = &value;
    args[1].size = sizeof value;
    args[2].value = &n;
    args[2].size = sizeof n;
    return halLaunchKernel(fill, grid, block, 0, args, 3, stream);
}

/* y = a * x + y */
static halError launchSaxpy(halFunction saxpy, float a, const float* x, float* y,
                            halStream stream) {
    uint32_t n = ELEMENTS;
    halKernelArg args[4];
    halDim3 grid = {(ELEMENTS + BLOCK - 1) / BLOCK, 1, 1};
    halDim3 block = {BLOCK, 1, 1};
    args[0].value = &n;
    args[0].size = sizeof n;
    args[1].value = &a;
    args[1].size = sizeof a;
    args[2].value = &x;
    args[2].size = sizeof x;
    args[3].value = &y;
    args[3].size = sizeof y;
    return halLaunchKernel(saxpy, grid, block, 0, args, 4, stream);
}

/* Copies `device` back and checks that every element equals `expected`. */
static int holds(const float* device, float expected, float* host, const char* name) {
    halError status = halMemcpy(host, ELEMENTS * sizeof(float), device, ELEMENTS * sizeof(float),
                                HAL_MEMCPY_DEVICE_TO_HOST);
    uint32_t i;
    if (status != HAL_SUCCESS) return failed("halMemcpy", status);
    for (i = 0; i < ELEMENTS; ++i) {
        if (host[i] != expected) {
            fprintf(stderr, "%s[%u] is %g, expected %g\n", name, i, host[i], expected);
            return 0;
        }
    }
    printf("     checked: every %s[i] is %g\n", name, expected);
    return 1;
}

int main(int argc, char* argv[]) {
    const char* modulePath = argc > 1 ? argv[1] : POLYHAL_EXAMPLE_KERNELS;
    const char* backend = NULL;
    halModule module = NULL;
    halFunction fill = NULL, saxpy = NULL;
    halStream producer = NULL, consumer = NULL;
    halEvent xReady = NULL;
    void *x = NULL, *y = NULL; /* device vectors of ELEMENTS floats */
    float* host = NULL;
    int passed = 0;

    TRY(halGetBackendName(&backend));
    printf("polyhal backend '%s', kernels from %s\n", backend, modulePath);
    TRY(halModuleLoadFile(&module, modulePath));
    TRY(halModuleGetFunction(&fill, module, "fill"));
    TRY(halModuleGetFunction(&saxpy, module, "saxpy"));
    TRY(halMalloc(&x, ELEMENTS * sizeof(float)));
    TRY(halMalloc(&y, ELEMENTS * sizeof(float)));
    TRY(halCreateStream(&producer));
    TRY(halCreateStream(&consumer));
    TRY(halCreateEvent(&xReady));
    host = malloc(ELEMENTS * sizeof(float));
    if (host == NULL) goto cleanup;

    printf(
        "1. event synchronisation: producer fills x with 1, records xReady; "
        "the host waits for xReady\n");
    TRY(launchFill(fill, x, 1.0f, producer));
    TRY(halRecordEvent(xReady, producer));
    TRY(halSynchronizeEvent(xReady));
    if (!holds(x, 1.0f, host, "x")) goto cleanup;

    printf("2. stream synchronisation: consumer fills y with 2; the host waits for consumer\n");
    TRY(launchFill(fill, y, 2.0f, consumer));
    TRY(halSynchronizeStream(consumer));
    if (!holds(y, 2.0f, host, "y")) goto cleanup;

    printf(
        "3. stream waits for event: producer fills x with 3, records xReady; consumer waits "
        "for xReady, then computes y = 2 * x + y\n");
    TRY(launchFill(fill, x, 3.0f, producer));
    TRY(halRecordEvent(xReady, producer));
    TRY(halStreamWaitEvent(consumer, xReady));
    TRY(launchSaxpy(saxpy, 2.0f, x, y, consumer));
    TRY(halSynchronizeStream(consumer));
    if (!holds(y, 8.0f, host, "y")) goto cleanup;

    printf(
        "4. device synchronisation: producer fills x with 4, consumer fills y with 5; "
        "the host waits for the device\n");
    TRY(launchFill(fill, x, 4.0f, producer));
    TRY(launchFill(fill, y, 5.0f, consumer));
    TRY(halSynchronizeDevice());
    if (!holds(x, 4.0f, host, "x") || !holds(y, 5.0f, host, "y")) goto cleanup;

    passed = 1;
    printf("all four patterns gave the expected results\n");

cleanup:
    free(host);
    if (xReady != NULL) halDestroyEvent(xReady);
    if (consumer != NULL) halDestroyStream(consumer);
    if (producer != NULL) halDestroyStream(producer);
    if (x != NULL) halFree(x);
    if (y != NULL) halFree(y);
    if (module != NULL) halModuleUnload(module);
    return passed ? EXIT_SUCCESS : EXIT_FAILURE;
}
