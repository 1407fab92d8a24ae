// The order in which block pool helpers pick launches: the policy behind stream priorities.
#include <catch2/catch.hpp>

#include <climits>

#include "engine/block_job.hpp"
#include "engine/launch_queue.hpp"

using polyhal::cpu::BlockJob;
using polyhal::cpu::LaunchQueue;

TEST_CASE("the most urgent launch comes first, the oldest among equals", "[priority]") {
    LaunchQueue queue;
    BlockJob relaxed, urgentFirst, urgentSecond, middle;
    CHECK(queue.front() == nullptr);
    CHECK(queue.frontPriority() == INT_MAX);

    queue.push(&relaxed, 0);
    queue.push(&urgentFirst, -2);
    queue.push(&middle, -1);
    queue.push(&urgentSecond, -2);
    CHECK(queue.size() == 4);
    CHECK(queue.front() == &urgentFirst);
    CHECK(queue.frontPriority() == -2);

    queue.remove(&urgentFirst);
    CHECK(queue.front() == &urgentSecond);
    queue.remove(&urgentSecond);
    CHECK(queue.front() == &middle);
    queue.remove(&middle);
    CHECK(queue.front() == &relaxed);
    queue.remove(&relaxed);
    CHECK(queue.size() == 0);
    queue.remove(&relaxed);  // absent: no effect
    CHECK(queue.front() == nullptr);
}
