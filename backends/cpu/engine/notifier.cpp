// Implements notifier.hpp.
#include "engine/notifier.hpp"

#include <thread>

namespace polyhal::cpu {

bool spinningHelps() {
    static const bool helps = std::thread::hardware_concurrency() > 1;
    return helps;
}

}  // namespace polyhal::cpu
