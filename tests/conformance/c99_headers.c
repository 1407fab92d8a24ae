/* Compiled as strict C99 (-std=c99 -pedantic -Wall -Werror) as part of the build: the public
 * headers must stay plain C99. */
#include <polyhal/cpu_kernel.h>
#include <polyhal/hal.h>
#include <polyhal/plugin.h>

/* Uses a few declarations so that the compiler checks more than the preprocessor. */
static halError useDeclarations(halStream stream, halPluginDispatchTable* table) {
    halDim3 grid = {1, 1, 1};
    halCpuKernelContext context;
    context.gridDim = grid;
    table->size = sizeof *table;
    (void)context;
    return halSynchronizeStream(stream);
}

halError (*polyhalC99HeaderCheck)(halStream, halPluginDispatchTable*) = useDeclarations;
