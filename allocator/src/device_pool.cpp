// The public face of the pool: each call forwards to the implementation.
#include "device_pool_impl.hpp"
#include "stream.hpp"

namespace polyhal::allocator {

DevicePool::Impl::Impl(const DevicePool* self, DeviceInterface& device)
    : self_(self),
      device_(device),
      events_(device),
      nodes_(&hugePages_),
      blocks_(&nodes_),
      scratchClock_(self) {}

DevicePool::Impl::~Impl() {
    (void)reset();
}

DevicePool::DevicePool(DeviceInterface& device) : impl_(std::make_unique<Impl>(this, device)) {}
DevicePool::~DevicePool() = default;

Stream* DevicePool::addStream(DeviceStream stream) {
    return impl_->addStream(stream);
}
halError DevicePool::removeStream(Stream* stream) {
    return impl_->removeStream(stream);
}

uint64_t DevicePool::submitted(Stream* stream) {
    return stream->submitted.fetch_add(1, std::memory_order_acq_rel) + 1;
}

void DevicePool::recordUse(const void* ptr, Stream* stream, uint64_t ticket) {
    impl_->recordUses(&ptr, 1, stream, ticket);
}
void DevicePool::recordUses(const void* const* ptrs, size_t count, Stream* stream,
                            uint64_t ticket) {
    impl_->recordUses(ptrs, count, stream, ticket);
}

VectorClock DevicePool::capture(Stream* stream) const {
    return impl_->capture(stream);
}
void DevicePool::captureInto(Stream* stream, VectorClock* clock) const {
    impl_->captureInto(stream, clock);
}
VectorClock DevicePool::captureDevice(bool withRemovedStreams) const {
    return impl_->captureDevice(withRemovedStreams);
}
bool DevicePool::fullyObserved(const Stream* stream) const {
    return stream->completed.load(std::memory_order_acquire) >=
           stream->submitted.load(std::memory_order_acquire);
}
void DevicePool::streamWaited(Stream* stream, const VectorClock& snapshot) {
    impl_->streamWaited(stream, snapshot);
}
void DevicePool::observeCompleted(const VectorClock& snapshot) {
    impl_->observeCompleted(snapshot);
}
halError DevicePool::synchronized(const VectorClock& snapshot) {
    return impl_->synchronized(snapshot);
}

halError DevicePool::allocate(size_t size, Stream* stream, void** ptr) {
    return impl_->allocate(size, stream, ptr);
}
halError DevicePool::free(void* ptr, Stream* stream) {
    return impl_->free(ptr, stream);
}
bool DevicePool::find(const void* ptr, Allocation* allocation) const {
    return impl_->find(ptr, allocation);
}
bool DevicePool::exportBlock(const void* ptr, ExportedBlock* exported) const {
    return impl_->exportBlock(ptr, exported);
}

PoolStats DevicePool::stats() const {
    return impl_->stats();
}
PoolAttributes DevicePool::attributes() const {
    return impl_->attributes();
}
void DevicePool::setAttributes(const PoolAttributes& attributes) {
    impl_->setAttributes(attributes);
}
halError DevicePool::trim(size_t bytesToKeep) {
    return impl_->trim(bytesToKeep);
}
halError DevicePool::reset() {
    return impl_->reset();
}

}  // namespace polyhal::allocator
