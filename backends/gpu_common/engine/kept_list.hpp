// The singly linked lists that keep vendor objects past their destroy (engine/native_graph.hpp,
// engine/retired_streams.hpp): linked through a member of the objects themselves, so that keeping
// one never allocates and never fails.
#ifndef POLYHAL_BACKENDS_GPU_COMMON_ENGINE_KEPT_LIST_HPP_
#define POLYHAL_BACKENDS_GPU_COMMON_ENGINE_KEPT_LIST_HPP_

namespace polyhal::gpu {

// Moves every object of the list at `*head` for which `take(object)` is true to the list it
// returns; the others stay, in their order.
template <class Object, class Take>
Object* unlinkWhere(Object** head, Object* Object::*next, Take&& take) noexcept {
    Object* taken = nullptr;
    Object** link = head;
    while (*link != nullptr) {
        Object* object = *link;
        if (!take(*object)) {
            link = &(object->*next);
            continue;
        }
        *link = object->*next;
        object->*next = taken;
        taken = object;
    }
    return taken;
}

// Calls `release(object)` for each object of the list `list`, which it may free.
template <class Object, class Release>
void releaseEach(Object* list, Object* Object::*next, Release&& release) noexcept {
    while (list != nullptr) {
        Object* object = list;
        list = object->*next;
        release(object);
    }
}

}  // namespace polyhal::gpu

#endif  // POLYHAL_BACKENDS_GPU_COMMON_ENGINE_KEPT_LIST_HPP_
