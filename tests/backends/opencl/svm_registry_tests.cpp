// The SVM registry's answers to "is this argument a pointer into SVM memory?", with and without
// the allocation a kernel's argument hit last.
#include <catch2/catch.hpp>

#include <cstdint>

#include "engine/svm_registry.hpp"

using polyhal::opencl::SvmRegistry;

namespace {

// Addresses only: the registry never dereferences what it records.
void* at(std::uintptr_t address) {
    return reinterpret_cast<void*>(address);
}

}  // namespace

TEST_CASE("the SVM registry finds pointers anywhere inside a recorded allocation") {
    SvmRegistry registry;
    registry.add(at(0x10000), 0x1000, at(0xff80));
    registry.add(at(0x20000), 0x100, at(0x1ff80));
    SvmRegistry::LastHit hit;
    CHECK(registry.contains(at(0x10000), &hit));
    CHECK(registry.contains(at(0x10fff), &hit));
    CHECK_FALSE(registry.contains(at(0x11000), &hit));
    CHECK_FALSE(registry.contains(at(0xffff), &hit));
    CHECK(registry.contains(at(0x200ff), &hit));
    CHECK_FALSE(registry.contains(at(0x20100), &hit));
    CHECK_FALSE(registry.contains(nullptr, &hit));
}

TEST_CASE("an allocation remembered as the last hit stops counting once it is removed") {
    SvmRegistry registry;
    registry.add(at(0x10000), 0x1000, at(0xff80));
    SvmRegistry::LastHit hit;
    REQUIRE(registry.contains(at(0x10800), &hit));
    CHECK(registry.remove(at(0x10000)) == at(0xff80));
    CHECK_FALSE(registry.contains(at(0x10800), &hit));

    SECTION("and a smaller allocation at the same start is checked at its own size") {
        registry.add(at(0x10000), 0x100, at(0xff80));
        CHECK(registry.contains(at(0x100ff), &hit));
        CHECK_FALSE(registry.contains(at(0x10800), &hit));
    }
}

TEST_CASE("a last hit of one allocation answers nothing about another") {
    SvmRegistry registry;
    registry.add(at(0x10000), 0x1000, at(0xff80));
    registry.add(at(0x30000), 0x1000, at(0x2ff80));
    SvmRegistry::LastHit hit;
    REQUIRE(registry.contains(at(0x10000), &hit));
    CHECK(registry.contains(at(0x30010), &hit));
    CHECK_FALSE(registry.contains(at(0x20000), &hit));
    // Removing another allocation invalidates the hit too; the answer stays right.
    registry.remove(at(0x10000));
    CHECK(registry.contains(at(0x30010), &hit));
    CHECK_FALSE(registry.contains(at(0x10010), &hit));
}
