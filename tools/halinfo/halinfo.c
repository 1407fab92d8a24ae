/*
 * halinfo: which backends polyhal was built with and has installed, which it selected and from
 * where, and what their devices can do.
 *
 *   halinfo            the plugins built and installed, the loaded plugins (logged at info
 *                      level) and every device
 *   halinfo --verbose  also every candidate plugin tried and why it was or was not used
 *
 * Exits 1 with polyhal's error message when initialisation fails.
 */
#define _GNU_SOURCE /* dladdr */
#include <polyhal/hal.h>

#include <dirent.h>
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void printCapabilities(uint64_t caps) {
    static const struct {
        uint64_t bit;
        const char* name;
    } kNames[] = {
        {HAL_DEVICE_CAP_TIMING_EVENTS, "timing-events"},
        {HAL_DEVICE_CAP_HOST_FUNCTIONS, "host-functions"},
        {HAL_DEVICE_CAP_KERNELS, "kernels"},
        {HAL_DEVICE_CAP_STREAM_PRIORITIES, "stream-priorities"},
        {HAL_DEVICE_CAP_HOST_ACCESSIBLE, "host-accessible-memory"},
        {HAL_DEVICE_CAP_NATIVE_HANDLES, "native-handles"},
        {HAL_DEVICE_CAP_PEER_COPY, "peer-copy"},
        {HAL_DEVICE_CAP_CONCURRENT_HOST_FUNCTIONS, "concurrent-host-functions"},
        {HAL_DEVICE_CAP_IPC_MEMORY, "ipc-memory"},
        {HAL_DEVICE_CAP_IPC_EVENTS, "ipc-events"},
        {HAL_DEVICE_CAP_HOST_REGISTER, "host-register"},
        {HAL_DEVICE_CAP_MANAGED_MEMORY, "managed-memory"},
    };
    size_t i;
    unsigned bit;
    int any = 0;
    for (i = 0; i < sizeof kNames / sizeof kNames[0]; ++i) {
        if (caps & kNames[i].bit) {
            printf("%s%s", any ? ", " : "", kNames[i].name);
            any = 1;
            caps &= ~kNames[i].bit;
        }
    }
    /* Every bit the device reports is listed: one this table does not name yet shows as its
     * number (the halinfo test fails on it). */
    for (bit = 0; bit < 64; ++bit) {
        if (caps & ((uint64_t)1 << bit)) {
            printf("%sunnamed bit %u", any ? ", " : "", bit);
            any = 1;
        }
    }
    printf("%s\n", any ? "" : "none");
}

static const char* orUnset(const char* value) {
    return value != NULL ? value : "(unset)";
}

static int isPluginFile(const char* name) {
    static const char kPrefix[] = "libpolyhal_", kSuffix[] = ".so";
    const size_t length = strlen(name);
    return strncmp(name, kPrefix, sizeof kPrefix - 1) == 0 &&
           length > sizeof kPrefix - 1 + sizeof kSuffix - 1 &&
           strcmp(name + length - (sizeof kSuffix - 1), kSuffix) == 0;
}

/* The plugins installed next to the libpolyhal.so in use: its plugin folder, where the loader
 * looks after POLYHAL_PLUGIN_PATH. */
static void printInstalledPlugins(void) {
    Dl_info info;
    char library[4096], folder[4096];
    struct dirent** entries = NULL;
    int count, i, any = 0;
    if (dladdr((void*)&halInit, &info) == 0 || info.dli_fname == NULL) {
        printf("plugins installed   (cannot locate libpolyhal.so)\n");
        return;
    }
    snprintf(library, sizeof library, "%s", info.dli_fname);
    snprintf(folder, sizeof folder, "%s/%s", dirname(library), POLYHAL_PLUGIN_DIRNAME);
    printf("plugins installed   %s:", folder);
    count = scandir(folder, &entries, NULL, alphasort);
    for (i = 0; i < count; ++i) {
        if (isPluginFile(entries[i]->d_name)) {
            printf(" %s", entries[i]->d_name);
            any = 1;
        }
        free(entries[i]);
    }
    free(entries);
    printf("%s\n", any ? "" : " none");
}

int main(int argc, char** argv) {
    int verbose = 0, i, count = 0, major, minor, patch;
    halError status;
    for (i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) {
            verbose = 1;
        } else {
            fprintf(stderr, "usage: %s [--verbose]\n", argv[0]);
            return 2;
        }
    }
    /* The loader reports what it loads at info level and every candidate at debug level. */
    setenv("POLYHAL_LOG_LEVEL", verbose ? "debug" : "info", verbose);

    halGetVersion(&major, &minor, &patch);
    printf("polyhal %d.%d.%d\n", major, minor, patch);
    printf("backends built      %s\n", POLYHAL_BUILT_BACKENDS);
    if (POLYHAL_SKIPPED_BACKENDS[0] != '\0') {
        printf("backends not built\n    %s\n", POLYHAL_SKIPPED_BACKENDS);
    }
    printInstalledPlugins();
    printf("POLYHAL_BACKEND     = %s\n", orUnset(getenv("POLYHAL_BACKEND")));
    printf("POLYHAL_PLUGIN_PATH = %s\n", orUnset(getenv("POLYHAL_PLUGIN_PATH")));
    fflush(stdout);

    status = halInit();
    if (status != HAL_SUCCESS) {
        fprintf(stderr, "halinfo: initialisation failed: %s: %s\n", halGetErrorName(status),
                halGetLastErrorMessage());
        return 1;
    }
    halGetDeviceCount(&count);
    printf("devices: %d\n", count);
    for (i = 0; i < count; ++i) {
        halDeviceProperties props;
        int least = 0, greatest = 0;
        memset(&props, 0, sizeof props);
        props.size = sizeof props;
        if (halGetDeviceProperties(i, &props) != HAL_SUCCESS || halSetDevice(i) != HAL_SUCCESS ||
            halGetStreamPriorityRange(&least, &greatest) != HAL_SUCCESS) {
            fprintf(stderr, "halinfo: device %d: %s\n", i, halGetLastErrorMessage());
            return 1;
        }
        printf("\ndevice %d\n", props.ordinal);
        printf("  name                 %s\n", props.name);
        printf("  backend              %s (device %d)\n", props.backend, props.backendOrdinal);
        printf("  total memory         %llu bytes (%.1f GiB)\n",
               (unsigned long long)props.totalMemory, props.totalMemory / 1073741824.0);
        printf("  compute units        %u\n", props.computeUnits);
        printf("  max threads/block    %u\n", props.maxThreadsPerBlock);
        printf("  max shared/block     %llu bytes\n",
               (unsigned long long)props.maxSharedMemoryPerBlock);
        printf("  stream priorities    %d (least) .. %d (greatest)\n", least, greatest);
        printf("  kernel images        %s\n",
               props.moduleImageKinds[0] != '\0' ? props.moduleImageKinds : "none");
        printf("  DLPack device type   %d\n", (int)props.dlpackDeviceType);
        printf("  capabilities         ");
        printCapabilities(props.capabilities);
    }
    return 0;
}
