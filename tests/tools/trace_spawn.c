/*
 * Starts the program argv[1] (with the arguments after it) as a child while this process writes
 * the trace POLYHAL_TRACE names, which the child inherits, and waits for it. Prints
 * "parent <pid> child <pid>"; exits 1 where the child failed.
 */
#define _POSIX_C_SOURCE 200809L
#include <polyhal/hal.h>

#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

int main(int argc, char** argv) {
    pid_t child;
    int status = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: %s <program> [arguments]\n", argv[0]);
        return 2;
    }
    if (halInit() != HAL_SUCCESS) {
        fprintf(stderr, "trace_spawn: %s\n", halGetLastErrorMessage());
        return 1;
    }
    if (posix_spawn(&child, argv[1], NULL, NULL, argv + 1, environ) != 0 ||
        waitpid(child, &status, 0) != child) {
        perror("trace_spawn");
        return 1;
    }
    printf("parent %d child %d\n", (int)getpid(), (int)child);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
