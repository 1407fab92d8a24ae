// Implements size_class_bin.hpp.
#include "size_class_bin.hpp"

namespace polyhal::allocator {

void SizeClassBin::insert(Block* block) {
    if (!heads_) heads_ = std::make_unique<Block*[]>(kClasses);
    const size_t cls = classOf(block->size);
    Block*& head = heads_[cls];
    if (head == nullptr) {
        block->binPrev = block->binNext = block;
        head = block;
        words_[cls / 64] |= uint64_t{1} << (cls % 64);
        summary_ |= uint64_t{1} << (cls / 64);
    } else {
        Block* tail = head->binPrev;
        block->binPrev = tail;
        block->binNext = head;
        tail->binNext = block;
        head->binPrev = block;
    }
    ++count_;
}

void SizeClassBin::erase(Block* block) {
    const size_t cls = classOf(block->size);
    Block*& head = heads_[cls];
    if (block->binNext == block) {
        head = nullptr;
        words_[cls / 64] &= ~(uint64_t{1} << (cls % 64));
        if (words_[cls / 64] == 0) summary_ &= ~(uint64_t{1} << (cls / 64));
    } else {
        block->binPrev->binNext = block->binNext;
        block->binNext->binPrev = block->binPrev;
        if (head == block) head = block->binNext;
    }
    block->binPrev = block->binNext = nullptr;
    --count_;
}

size_t SizeClassBin::nextNonEmpty(size_t cls) const {
    if (cls >= kClasses) return kClasses;
    size_t word = cls / 64;
    const uint64_t inWord = words_[word] & (~uint64_t{0} << (cls % 64));
    if (inWord != 0) return word * 64 + static_cast<size_t>(__builtin_ctzll(inWord));
    if (word + 1 >= kWords) return kClasses;
    const uint64_t later = summary_ & (~uint64_t{0} << (word + 1));
    if (later == 0) return kClasses;
    word = static_cast<size_t>(__builtin_ctzll(later));
    return word * 64 + static_cast<size_t>(__builtin_ctzll(words_[word]));
}

Block* SizeClassBin::findNewest(size_t size) const {
    if (count_ == 0) return nullptr;
    const size_t cls = nextNonEmpty(classOf(size));
    return cls == kClasses ? nullptr : heads_[cls]->binPrev;
}

Block* SizeClassBin::findOrdered(size_t size, uint64_t bound, int maxClasses) const {
    if (count_ == 0) return nullptr;
    size_t cls = classOf(size);
    for (int tried = 0; tried < maxClasses; ++tried) {
        cls = nextNonEmpty(cls);
        if (cls == kClasses) return nullptr;
        Block* oldest = heads_[cls];
        if (oldest->readyTicket <= bound) return oldest;
        ++cls;
    }
    return nullptr;
}

}  // namespace polyhal::allocator
