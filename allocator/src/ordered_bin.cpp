// Implements ordered_bin.hpp.
#include "ordered_bin.hpp"

namespace polyhal::allocator {

Block* OrderedBin::findSmallest(size_t size) const {
    auto it = blocks_.lower_bound(Key{size, 0, 0});
    return it == blocks_.end() ? nullptr : *it;
}

Block* OrderedBin::findOrdered(size_t size, uint64_t bound, int maxSizes) const {
    auto it = blocks_.lower_bound(Key{size, 0, 0});
    for (int tried = 0; tried < maxSizes && it != blocks_.end(); ++tried) {
        if ((*it)->readyTicket <= bound) return *it;
        it = blocks_.lower_bound(Key{(*it)->size + 1, 0, 0});
    }
    return nullptr;
}

}  // namespace polyhal::allocator
