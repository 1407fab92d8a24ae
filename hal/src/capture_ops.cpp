// What a capturing stream records for copies and memsets: the plugin operation the eager call
// would enqueue, where one serves; other paths (through the host, across devices) cannot be
// replayed and invalidate the capture.
#include <polyhal/box_rows.hpp>

#include "capture.hpp"
#include "copy_plan.hpp"

namespace polyhal {
namespace {

// Does `operand` live where the plugin of `stream` copies and sets it itself?
bool local(const halStream_t* stream, const Operand& operand) {
    return operand.device() == nullptr || operand.device() == stream->device;
}

halError refuseAcrossDevices(halStream_t* stream, const char* operation) {
    return refuseInCapture(stream, operation,
                           "a copy or memset between devices, or through the host, cannot be "
                           "captured");
}

}  // namespace

halError captureCopy(halStream_t* stream, void* dst, const void* src, size_t count,
                     const CopyPlan& plan, const char* operation) {
    if (!local(stream, plan.dst) || !local(stream, plan.src)) {
        return refuseAcrossDevices(stream, operation);
    }
    return captureOperation(stream, makeCopyOp(dst, src, count, plan.kind), operation);
}

halError captureBox(halStream_t* stream, const halMemcpy3DParams& box, const CopyPlan& plan,
                    const char* operation) {
    if (!local(stream, plan.dst) || !local(stream, plan.src)) {
        return refuseAcrossDevices(stream, operation);
    }
    if (isContiguous(box)) {
        return captureCopy(stream, box.dst, box.src, box.width * box.height * box.depth, plan,
                           operation);
    }
    if (stream->device->vtable->memcpy3DAsync != nullptr) {
        halMemcpy3DParams resolved = box;
        resolved.kind = plan.kind;
        return captureOperation(stream, makeBoxOp(resolved), operation);
    }
    auto* dst = static_cast<unsigned char*>(box.dst);
    const auto* src = static_cast<const unsigned char*>(box.src);
    return forEachBoxRow(box, [&](size_t dstOffset, size_t srcOffset) {
        return captureOperation(
            stream, makeCopyOp(dst + dstOffset, src + srcOffset, box.width, plan.kind), operation);
    });
}

halError captureMemset(halStream_t* stream, void* dst, unsigned char value, size_t count,
                       bool pluginSets, const char* operation) {
    if (!pluginSets) return refuseAcrossDevices(stream, operation);
    return captureOperation(stream, makeMemsetOp(dst, value, count), operation);
}

}  // namespace polyhal
