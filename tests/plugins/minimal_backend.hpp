// test_minimal: a tiny synchronous backend used by the loader tests (it is a test plugin, not a
// device anyone should use). One device whose memory is host memory; every operation completes
// on the calling thread before its entry returns, so streams are always idle and events always
// complete. It implements plugin ABI 1.0 up to memsetAsync and nothing after it: no host
// functions, kernels or native handles.
#ifndef POLYHAL_TESTS_PLUGINS_MINIMAL_BACKEND_HPP_
#define POLYHAL_TESTS_PLUGINS_MINIMAL_BACKEND_HPP_

#include <polyhal/plugin.h>

#include <cstddef>

namespace polyhal::test_minimal {

// The part of halPluginDispatchTable this backend was written against: everything before
// launchHostFunc, as a plugin built for an older minor version of the ABI would have it.
constexpr size_t kTableSize = offsetof(halPluginDispatchTable, launchHostFunc);

// The backend's table; its entries at or past kTableSize are NULL.
const halPluginDispatchTable& fullTable();

}  // namespace polyhal::test_minimal

#endif  // POLYHAL_TESTS_PLUGINS_MINIMAL_BACKEND_HPP_
