// Catch2's main for every test program without a runner of its own, compiled once: Catch2 v2 is
// a single header, and its runner costs each program that compiles it as much as a large source.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
