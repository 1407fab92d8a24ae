// Implements vector_clock.hpp.
#include <polyhal/allocator/vector_clock.hpp>

#include <algorithm>
#include <functional>

namespace polyhal::allocator {

namespace {
bool before(const VectorClock::Entry& entry, const Stream* stream) {
    return std::less<const Stream*>()(entry.stream, stream);
}
}  // namespace

uint64_t VectorClock::at(const Stream* stream) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), stream, before);
    return it != entries_.end() && it->stream == stream ? it->ticket : 0;
}

void VectorClock::raise(Stream* stream, uint64_t ticket) {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), stream, before);
    if (it != entries_.end() && it->stream == stream) {
        it->ticket = std::max(it->ticket, ticket);
    } else {
        entries_.insert(it, Entry{stream, ticket});
    }
}

void VectorClock::merge(const VectorClock& other) {
    for (const Entry& entry : other.entries_) raise(entry.stream, entry.ticket);
}

}  // namespace polyhal::allocator
