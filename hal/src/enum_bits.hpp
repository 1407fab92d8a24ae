// Reading enum arguments an application may have filled with any value.
#ifndef POLYHAL_HAL_SRC_ENUM_BITS_HPP_
#define POLYHAL_HAL_SRC_ENUM_BITS_HPP_

#include <cstdint>
#include <cstring>

namespace polyhal {

// The bits of an enum argument, copied without loading it as the enum type. A value outside the
// enumerators' range (a C caller's (halMemcpyKind)-1) must be refusable, but loading it as the
// enum is undefined behaviour, which UBSan aborts on. Pass the parameter itself: binding the
// reference loads nothing.
template <typename Enum>
uint32_t enumBits(const Enum& value) {
    static_assert(sizeof(Enum) == sizeof(uint32_t), "polyhal enums are 32 bits wide");
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

}  // namespace polyhal

#endif  // POLYHAL_HAL_SRC_ENUM_BITS_HPP_
