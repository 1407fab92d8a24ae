// The live-block index against a std::unordered_map model: inserts, finds and erases in random
// order over addresses that collide on purpose, across growth.
#include <catch2/catch.hpp>

#include <random>
#include <unordered_map>
#include <vector>

#include "live_index.hpp"

using polyhal::allocator::Block;
using polyhal::allocator::LiveIndex;

TEST_CASE("the live index agrees with a map through random inserts and erases", "[layout]") {
    std::vector<Block> records(4096);
    LiveIndex index;
    std::unordered_map<uintptr_t, Block*> model;
    std::mt19937_64 random(GENERATE(1, 2, 3));
    // Few distinct addresses, 256 bytes apart and in a narrow window, so runs form and wrap.
    std::uniform_int_distribution<size_t> pick(0, records.size() - 1);
    auto addressOf = [](size_t i) { return uintptr_t{0x7f0000000000} + i * 256; };
    for (int step = 0; step < 200000; ++step) {
        const size_t i = pick(random);
        const uintptr_t address = addressOf(i);
        if (random() % 3 != 0 && model.count(address) == 0) {
            index.insert(address, &records[i]);
            model.emplace(address, &records[i]);
        } else {
            index.erase(address);
            model.erase(address);
        }
        if (step % 997 == 0) {
            REQUIRE(index.size() == model.size());
            for (size_t j = 0; j < records.size(); ++j) {
                const auto found = model.find(addressOf(j));
                REQUIRE(index.find(addressOf(j)) ==
                        (found == model.end() ? nullptr : found->second));
            }
        }
    }
    index.clear();
    CHECK(index.size() == 0);
    CHECK(index.find(addressOf(0)) == nullptr);
}
