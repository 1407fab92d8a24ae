// Streams: here your runtime's queue (CUstream, hipStream_t, cl_command_queue, a Level Zero
// command list) would live. The template's stream is a command queue run by its own worker
// thread, the device being the host.
#ifndef POLYHAL_TEMPLATE_STREAM_HPP_
#define POLYHAL_TEMPLATE_STREAM_HPP_

#include <polyhal/plugin.h>

#include <memory>

#include "engine/command_queue.hpp"

namespace polyhal_template {

// What halPluginStream points to; also the stream's native handle.
struct Stream {
    using Handle = halPluginStream;
    std::shared_ptr<CommandQueue> queue;  // shared with the worker, which may outlive the stream
};

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_STREAM_HPP_
