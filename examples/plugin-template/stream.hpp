// Streams: here your runtime's queue (CUstream, hipStream_t, cl_command_queue, a Level Zero
// command list) would live. The template's stream is a command queue run by its own worker
// thread, the device being the host.
#ifndef POLYHAL_TEMPLATE_STREAM_HPP_
#define POLYHAL_TEMPLATE_STREAM_HPP_

#include <polyhal/plugin.h>

#include <memory>
#include <string>

#include "engine/command_queue.hpp"

namespace polyhal_template {

struct Device;

// What halPluginStream points to; also the stream's native handle.
struct Stream {
    using Handle = halPluginStream;
    Device* device = nullptr;             // the device the stream's work runs on
    std::shared_ptr<CommandQueue> queue;  // shared with the worker, which may outlive the stream
};

// HAL_ERROR_LAUNCH_FAILED with `failure` as its message, or HAL_SUCCESS when it is "".
halError reportFailure(const std::string& failure);

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_STREAM_HPP_
