/*
 * A ring all-reduce over MPI ranks, each with its own polyhal device and streams.
 *
 * Every rank holds `count` floats on its device and ends with the element-wise sum over all
 * ranks, as NCCL's ncclAllReduce would compute it, in the classic two phases over a ring of P
 * ranks with the data cut into P chunks:
 *   reduce-scatter (P-1 steps): send one chunk to the right neighbour, receive one from the left
 *       and add it into the local chunk with a kernel; afterwards rank r holds the full sum of
 *       chunk (r + 1) % P;
 *   all-gather (P-1 steps): pass the summed chunks around the ring, each copied into place.
 *
 * polyhal does the device side, in stream order: a copy stream moves chunks between device and
 * page-locked host memory, a compute stream adds them, and events order one after the other
 * (the compute stream waits for the copy that brought a chunk in; the copy stream waits for the
 * addition before sending its result on). MPI moves the bytes between ranks, through the host
 * buffers: the portable path for every backend. (On a GPU cluster NCCL/RCCL/oneCCL would move
 * them device to device on polyhal's native streams; see docs/distributed.md.)
 *
 * Usage: mpirun -n 4 polyhal-mpi-allreduce [kernel-module] [count]
 * Prints one line per rank and exits 0 when every element on every rank is right.
 */
#include <mpi.h>
#include <polyhal/hal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef POLYHAL_EXAMPLE_KERNELS
#define POLYHAL_EXAMPLE_KERNELS "example_kernels.so"
#endif

#define TRY(call)                                                                                  \
    do {                                                                                           \
        halError status_ = (call);                                                                 \
        if (status_ != HAL_SUCCESS) {                                                              \
            fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank, #call, halGetErrorName(status_), \
                    halGetLastErrorMessage());                                                     \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static int rank;

/* The value rank `r` starts with at element `i`; small integers, so float sums are exact. */
static float initialValue(int r, size_t i) {
    return (float)((r + 1) * (int)(i % 101 + 1));
}

typedef struct Ring {
    int size, left, right;
    size_t count, chunk; /* elements in all, elements per chunk (the last may be shorter) */
} Ring;

static size_t chunkBegin(const Ring* ring, int c) {
    return (size_t)c * ring->chunk;
}
static size_t chunkLength(const Ring* ring, int c) {
    size_t begin = chunkBegin(ring, c);
    if (begin >= ring->count) return 0;
    return ring->count - begin < ring->chunk ? ring->count - begin : ring->chunk;
}

typedef struct Device {
    halStream copy, compute;
    halEvent copied, added;
    halFunction accumulate;     /* saxpy(n, 1, x, y): y += x */
    float *data, *incoming;     /* on the device: the rank's vector, one received chunk */
    float *sendHost, *recvHost; /* page-locked staging for MPI */
} Device;

/* Sends chunk `send` of the device vector to the right neighbour and receives the left
 * neighbour's chunk `recv` into recvHost; the copy stream first waits for `after` (if not NULL). */
static void exchange(Device* d, const Ring* ring, int send, int recv, halEvent after) {
    size_t sendLength = chunkLength(ring, send), recvLength = chunkLength(ring, recv);
    if (after != NULL) TRY(halStreamWaitEvent(d->copy, after));
    if (sendLength > 0) {
        TRY(halMemcpyAsync(d->sendHost, ring->chunk * sizeof(float),
                           d->data + chunkBegin(ring, send), sendLength * sizeof(float),
                           HAL_MEMCPY_DEVICE_TO_HOST, d->copy));
    }
    TRY(halSynchronizeStream(d->copy)); /* MPI reads the host buffer now */
    MPI_Sendrecv(d->sendHost, (int)sendLength, MPI_FLOAT, ring->right, 0, d->recvHost,
                 (int)recvLength, MPI_FLOAT, ring->left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void reduceScatter(Device* d, const Ring* ring) {
    int step;
    for (step = 0; step < ring->size - 1; ++step) {
        int send = (rank - step + ring->size) % ring->size;
        int recv = (rank - step - 1 + ring->size) % ring->size;
        uint32_t length = (uint32_t)chunkLength(ring, recv);
        float one = 1.0f;
        float* target = d->data + chunkBegin(ring, recv);
        halKernelArg args[4];
        /* The chunk sent at this step is the one added at the previous step. */
        exchange(d, ring, send, recv, step > 0 ? d->added : NULL);
        if (length == 0) continue;
        TRY(halMemcpyAsync(d->incoming, ring->chunk * sizeof(float), d->recvHost,
                           length * sizeof(float), HAL_MEMCPY_HOST_TO_DEVICE, d->copy));
        TRY(halRecordEvent(d->copied, d->copy));
        TRY(halStreamWaitEvent(d->compute, d->copied));
        args[0].value = &length;
        args[0].size = sizeof length;
        args[1].value = &one;
        args[1].size = sizeof one;
        args[2].value = &d->incoming;
        args[2].size = sizeof d->incoming;
        args[3].value = &target;
        args[3].size = sizeof target;
        TRY(halLaunchKernel(d->accumulate, (halDim3){(length + 255) / 256, 1, 1},
                            (halDim3){256, 1, 1}, 0, args, 4, d->compute));
        TRY(halRecordEvent(d->added, d->compute));
    }
}

static void allGather(Device* d, const Ring* ring) {
    int step;
    for (step = 0; step < ring->size - 1; ++step) {
        int send = (rank + 1 - step + ring->size) % ring->size;
        int recv = (rank - step + ring->size) % ring->size;
        size_t length = chunkLength(ring, recv);
        /* The first chunk sent is the last one reduce-scatter added. */
        exchange(d, ring, send, recv, step == 0 ? d->added : NULL);
        if (length == 0) continue;
        TRY(halMemcpyAsync(d->data + chunkBegin(ring, recv), length * sizeof(float), d->recvHost,
                           length * sizeof(float), HAL_MEMCPY_HOST_TO_DEVICE, d->copy));
    }
    TRY(halSynchronizeStream(d->copy));
}

int main(int argc, char** argv) {
    const char* modulePath = argc > 1 ? argv[1] : POLYHAL_EXAMPLE_KERNELS;
    Ring ring;
    Device d;
    halModule module;
    float* host;
    size_t i, wrong = 0;
    int devices = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ring.size);
    ring.left = (rank - 1 + ring.size) % ring.size;
    ring.right = (rank + 1) % ring.size;
    ring.count = argc > 2 ? (size_t)strtoull(argv[2], NULL, 10) : 1000003;
    ring.chunk = (ring.count + (size_t)ring.size - 1) / (size_t)ring.size;

    /* Ranks on one machine share its devices round-robin. */
    TRY(halGetDeviceCount(&devices));
    TRY(halSetDevice(rank % devices));
    TRY(halCreateStream(&d.copy));
    TRY(halCreateStream(&d.compute));
    TRY(halCreateEventWithFlag(&d.copied, HAL_EVENT_DISABLE_TIMING));
    TRY(halCreateEventWithFlag(&d.added, HAL_EVENT_DISABLE_TIMING));
    TRY(halModuleLoadFile(&module, modulePath));
    TRY(halModuleGetFunction(&d.accumulate, module, "saxpy"));
    TRY(halMallocAsync((void**)&d.data, ring.count * sizeof(float), d.copy));
    TRY(halMallocAsync((void**)&d.incoming, ring.chunk * sizeof(float), d.copy));
    TRY(halMallocHost((void**)&d.sendHost, ring.chunk * sizeof(float)));
    TRY(halMallocHost((void**)&d.recvHost, ring.chunk * sizeof(float)));
    TRY(halMallocHost((void**)&host, ring.count * sizeof(float)));

    for (i = 0; i < ring.count; ++i) host[i] = initialValue(rank, i);
    TRY(halMemcpyAsync(d.data, ring.count * sizeof(float), host, ring.count * sizeof(float),
                       HAL_MEMCPY_HOST_TO_DEVICE, d.copy));
    TRY(halRecordEvent(d.copied, d.copy));
    TRY(halStreamWaitEvent(d.compute, d.copied)); /* the additions see the initial data */

    reduceScatter(&d, &ring);
    allGather(&d, &ring);

    memset(host, 0, ring.count * sizeof(float));
    TRY(halMemcpy(host, ring.count * sizeof(float), d.data, ring.count * sizeof(float),
                  HAL_MEMCPY_DEVICE_TO_HOST));
    for (i = 0; i < ring.count; ++i) {
        float expected = (float)((int)(i % 101 + 1) * ring.size * (ring.size + 1) / 2);
        wrong += host[i] != expected;
    }
    printf("rank %d of %d: all-reduce of %zu floats %s (%zu wrong)\n", rank, ring.size, ring.count,
           wrong == 0 ? "checked" : "FAILED", wrong);

    TRY(halFreeAsync(d.incoming, d.copy));
    TRY(halFreeAsync(d.data, d.copy));
    TRY(halSynchronizeStream(d.copy));
    TRY(halFreeHost(host));
    TRY(halFreeHost(d.recvHost));
    TRY(halFreeHost(d.sendHost));
    TRY(halModuleUnload(module));
    TRY(halDestroyEvent(d.added));
    TRY(halDestroyEvent(d.copied));
    TRY(halDestroyStream(d.compute));
    TRY(halDestroyStream(d.copy));

    {
        int failed = wrong != 0, anyFailed = 0;
        MPI_Allreduce(&failed, &anyFailed, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
        MPI_Finalize();
        return anyFailed ? 1 : 0;
    }
}
