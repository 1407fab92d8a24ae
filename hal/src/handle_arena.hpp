// Type-stable storage for one kind of handle.
//
// Handles are plain pointers to objects that live in one reserved range of address space per
// handle type, never returned to the system. That lets the core check any pointer an application
// passes without a global lookup and without dereferencing foreign memory: a pointer outside the
// range, not on a slot boundary, or on a slot that is not live is HAL_ERROR_INVALID_HANDLE.
// Freed slots are reused first-in first-out, and only once more than kQuarantine slots are free,
// so a destroyed handle keeps failing validation until many later objects have come and gone.
#ifndef POLYHAL_HAL_SRC_HANDLE_ARENA_HPP_
#define POLYHAL_HAL_SRC_HANDLE_ARENA_HPP_

#include <sys/mman.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <new>
#include <utility>

namespace polyhal {

template <typename T>
class HandleArena {
  public:
    static constexpr size_t kQuarantine = 1024;

    explicit HandleArena(size_t capacity) : capacity_(capacity) {
        void* base = mmap(nullptr, capacity * sizeof(Slot), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base == MAP_FAILED) throw std::bad_alloc();
        slots_ = static_cast<Slot*>(base);
    }
    HandleArena(const HandleArena&) = delete;
    HandleArena& operator=(const HandleArena&) = delete;
    // The mapping is never unmapped: a stale handle must stay safe to check until process exit.
    ~HandleArena() = default;

    // Constructs a T in a free slot; nullptr when the arena is full.
    template <typename... Args>
    T* create(Args&&... args) {
        Slot* slot = takeSlot();
        if (slot == nullptr) return nullptr;
        T* object;
        try {
            object = new (&slot->storage) T(std::forward<Args>(args)...);
        } catch (...) {
            returnSlot(slot);
            throw;
        }
        slot->live.store(1, std::memory_order_release);
        return object;
    }

    // Destroys a live object and frees its slot for later reuse.
    void destroy(T* object) {
        Slot* slot = slotOf(object);
        slot->live.store(0, std::memory_order_release);
        object->~T();
        returnSlot(slot);
    }

    // `handle` as a live T, or nullptr if it is not one. Reads no memory outside the arena.
    T* validate(const void* handle) const {
        const auto address = reinterpret_cast<uintptr_t>(handle);
        const auto base = reinterpret_cast<uintptr_t>(slots_) + offsetof(Slot, storage);
        if (address < base) return nullptr;
        const uintptr_t offset = address - base;
        if (offset % sizeof(Slot) != 0) return nullptr;
        const uintptr_t index = offset / sizeof(Slot);
        if (index >= highWater_.load(std::memory_order_acquire)) return nullptr;
        const Slot& slot = slots_[index];
        if (slot.live.load(std::memory_order_acquire) == 0) return nullptr;
        return std::launder(reinterpret_cast<T*>(const_cast<unsigned char*>(slot.storage)));
    }

    // Calls fn(T*) for every live object. The caller must keep other threads from creating or
    // destroying objects of this type meanwhile (halResetDevice's contract).
    template <typename Fn>
    void forEachLive(Fn&& fn) {
        const size_t end = highWater_.load(std::memory_order_acquire);
        for (size_t i = 0; i < end; ++i) {
            if (slots_[i].live.load(std::memory_order_acquire) != 0) {
                fn(std::launder(reinterpret_cast<T*>(slots_[i].storage)));
            }
        }
    }

  private:
    struct Slot {
        std::atomic<uint32_t> live{0};
        alignas(T) unsigned char storage[sizeof(T)];
    };

    static Slot* slotOf(T* object) {
        return reinterpret_cast<Slot*>(reinterpret_cast<unsigned char*>(object) -
                                       offsetof(Slot, storage));
    }

    Slot* takeSlot() {
        std::lock_guard<std::mutex> lock(mutex_);
        if (free_.size() > kQuarantine) {
            Slot* slot = free_.front();
            free_.pop_front();
            return slot;
        }
        const size_t index = highWater_.load(std::memory_order_relaxed);
        if (index < capacity_) {
            new (&slots_[index]) Slot();
            highWater_.store(index + 1, std::memory_order_release);
            return &slots_[index];
        }
        if (free_.empty()) return nullptr;
        Slot* slot = free_.front();
        free_.pop_front();
        return slot;
    }

    void returnSlot(Slot* slot) {
        std::lock_guard<std::mutex> lock(mutex_);
        free_.push_back(slot);
    }

    Slot* slots_ = nullptr;
    const size_t capacity_;
    std::atomic<size_t> highWater_{0};
    std::mutex mutex_;
    std::deque<Slot*> free_;
};

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_HANDLE_ARENA_HPP_
