// The template device's execution units (see kernel_run.hpp).
#include "engine/kernel_run.hpp"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace polyhal_template {

namespace {

struct Thread {
    uint32_t pc = 0;
    bool ended = false;
    uint64_t executed = 0;
    uint64_t registers[kRegisterCount] = {};
    uint64_t specials[kSpecialCount] = {};
};

float asFloat(uint64_t bits) {
    const auto low = static_cast<uint32_t>(bits);
    float value;
    std::memcpy(&value, &low, sizeof value);
    return value;
}

uint64_t fromFloat(float value) {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

// The threads of one block, run in turns: each runs until it reaches a barrier or ends.
class Block {
  public:
    Block(const Kernel& kernel, const Launch& launch, const DeviceMemoryCheck& inDeviceMemory,
          const halDim3& index)
        : kernel_(kernel),
          launch_(launch),
          inDeviceMemory_(inDeviceMemory),
          index_(index),
          shared_(launch.sharedBytes) {}

    std::string run() {
        const halDim3 size = launch_.block;
        threads_.resize(size_t{size.x} * size.y * size.z);
        for (size_t t = 0; t < threads_.size(); ++t) {
            const uint64_t coordinates[kSpecialCount] = {t % size.x,
                                                         t / size.x % size.y,
                                                         t / size.x / size.y,
                                                         size.x,
                                                         size.y,
                                                         size.z,
                                                         index_.x,
                                                         index_.y,
                                                         index_.z,
                                                         launch_.grid.x,
                                                         launch_.grid.y,
                                                         launch_.grid.z};
            std::memcpy(threads_[t].specials, coordinates, sizeof coordinates);
        }
        for (size_t running = threads_.size(); running > 0;) {
            running = 0;
            for (Thread& thread : threads_) {
                if (thread.ended) continue;
                if (!runToBarrier(thread)) return fault_;
                if (!thread.ended) ++running;
            }
        }
        return {};
    }

  private:
    uint64_t read(const Thread& thread, const Operand& operand) const {
        switch (operand.kind) {
        case Operand::Kind::Register: return thread.registers[operand.value];
        case Operand::Kind::Argument: return launch_.arguments[operand.value];
        case Operand::Kind::Special: return thread.specials[operand.value];
        case Operand::Kind::Immediate: break;
        }
        return operand.value;
    }

    // Runs `thread` until it ends or passes a barrier; false with fault_ set when it faults.
    bool runToBarrier(Thread& thread) {
        const std::vector<Instruction>& code = kernel_.code;
        while (thread.pc < code.size()) {
            const Instruction& in = code[thread.pc++];
            if (++thread.executed > kInstructionBudget) {
                return fail(thread, in, "ran %llu instructions without ending (an endless loop?)",
                            static_cast<unsigned long long>(kInstructionBudget));
            }
            const uint64_t a = read(thread, in.operands[0]), b = read(thread, in.operands[1]);
            // Only instructions that write their first operand call it: a register (parsed so).
            auto set = [&](uint64_t value) { thread.registers[in.operands[0].value] = value; };
            switch (in.opcode) {
            case Opcode::Mov: set(b); break;
            case Opcode::Add: set(b + read(thread, in.operands[2])); break;
            case Opcode::Sub: set(b - read(thread, in.operands[2])); break;
            case Opcode::Mul: set(b * read(thread, in.operands[2])); break;
            case Opcode::Mad:
                set(b * read(thread, in.operands[2]) + read(thread, in.operands[3]));
                break;
            case Opcode::FAdd:
                set(fromFloat(asFloat(b) + asFloat(read(thread, in.operands[2]))));
                break;
            case Opcode::FMul:
                set(fromFloat(asFloat(b) * asFloat(read(thread, in.operands[2]))));
                break;
            case Opcode::SetLt: set(b < read(thread, in.operands[2]) ? 1 : 0); break;
            case Opcode::Ld32: {
                uint32_t value;
                if (!checkDeviceAccess(thread, in, b)) return false;
                std::memcpy(&value, reinterpret_cast<const void*>(b), sizeof value);
                set(value);
                break;
            }
            case Opcode::St32: {
                const auto value = static_cast<uint32_t>(b);
                if (!checkDeviceAccess(thread, in, a)) return false;
                std::memcpy(reinterpret_cast<void*>(a), &value, sizeof value);
                break;
            }
            case Opcode::Lds32: {
                uint32_t value;
                if (!checkSharedAccess(thread, in, b)) return false;
                std::memcpy(&value, shared_.data() + b, sizeof value);
                set(value);
                break;
            }
            case Opcode::Sts32: {
                const auto value = static_cast<uint32_t>(b);
                if (!checkSharedAccess(thread, in, a)) return false;
                std::memcpy(shared_.data() + a, &value, sizeof value);
                break;
            }
            case Opcode::Jmp: thread.pc = in.target; break;
            case Opcode::Bz:
                if (a == 0) thread.pc = in.target;
                break;
            case Opcode::Bnz:
                if (a != 0) thread.pc = in.target;
                break;
            case Opcode::Bar: return true;
            case Opcode::Trap:
                return fail(thread, in, "trap %llu", static_cast<unsigned long long>(a));
            case Opcode::Ret: thread.ended = true; return true;
            }
        }
        thread.ended = true;
        return true;
    }

    bool checkDeviceAccess(const Thread& thread, const Instruction& in, uint64_t address) {
        if (address % 4 != 0) {
            return fail(thread, in, "misaligned 4-byte access at address 0x%llx",
                        static_cast<unsigned long long>(address));
        }
        if (!inDeviceMemory_(address, 4)) {
            return fail(thread, in, "illegal address 0x%llx (not in device memory)",
                        static_cast<unsigned long long>(address));
        }
        return true;
    }

    bool checkSharedAccess(const Thread& thread, const Instruction& in, uint64_t offset) {
        if (offset % 4 != 0 || offset > shared_.size() || shared_.size() - offset < 4) {
            return fail(thread, in, "shared memory offset %llu is %s (%zu bytes per block)",
                        static_cast<unsigned long long>(offset),
                        offset % 4 != 0 ? "misaligned" : "out of bounds", shared_.size());
        }
        return true;
    }

    bool fail(const Thread& thread, const Instruction& in, const char* format, ...)
        __attribute__((format(printf, 4, 5))) {
        char what[256];
        va_list args;
        va_start(args, format);
        std::vsnprintf(what, sizeof what, format, args);
        va_end(args);
        char where[160];
        std::snprintf(where, sizeof where, " at line %u, block (%u,%u,%u) thread (%llu,%llu,%llu)",
                      in.line, index_.x, index_.y, index_.z,
                      static_cast<unsigned long long>(thread.specials[kTid]),
                      static_cast<unsigned long long>(thread.specials[kTid + 1]),
                      static_cast<unsigned long long>(thread.specials[kTid + 2]));
        fault_ = kernel_.name + ": " + what + where;
        return false;
    }

    const Kernel& kernel_;
    const Launch& launch_;
    const DeviceMemoryCheck& inDeviceMemory_;
    const halDim3 index_;
    std::vector<unsigned char> shared_;
    std::vector<Thread> threads_;
    std::string fault_;
};

}  // namespace

std::string runKernel(const Kernel& kernel, const Launch& launch,
                      const DeviceMemoryCheck& inDeviceMemory) {
    for (uint32_t z = 0; z < launch.grid.z; ++z) {
        for (uint32_t y = 0; y < launch.grid.y; ++y) {
            for (uint32_t x = 0; x < launch.grid.x; ++x) {
                std::string fault = Block(kernel, launch, inDeviceMemory, {x, y, z}).run();
                if (!fault.empty()) return fault;
            }
        }
    }
    return {};
}

}  // namespace polyhal_template
