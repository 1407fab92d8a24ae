// The template device's kernel image: a small text assembly ("tasm"), parsed and checked when a
// module is loaded, as a vendor driver compiles PTX or SPIR-V then. With a real runtime this
// file goes away: moduleLoadData hands the image to cuModuleLoadData, zeModuleCreate, ...
//
//   tasm 1                              first line: the format and its version
//   .kernel fill_u32(ptr, u32, u32)     a kernel and its arguments' types (u32, f32, ptr)
//       mad   r0, %ctaid.x, %ntid.x, %tid.x   ; r0 = the thread's element
//       setlt r1, r0, a2                operands: r0..r15, arguments a0.., #immediates and
//       bz    r1, done                  %tid, %ntid, %ctaid, %nctaid with .x, .y or .z
//       mad   r2, r0, #4, a0
//       st32  r2, a1
//   done:
//       ret
//   .end
//
// Everything after ';' on a line is a comment. Every thread of a launch runs its kernel's
// instructions with registers of its own (64-bit, zero at the start); Opcode says what each
// instruction does, kernel_run.hpp how a launch runs them.
#ifndef POLYHAL_TEMPLATE_ENGINE_KERNEL_IMAGE_HPP_
#define POLYHAL_TEMPLATE_ENGINE_KERNEL_IMAGE_HPP_

#include <polyhal/plugin.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace polyhal_template {

enum class Opcode : uint8_t {
    Mov,    // mov d, a          d = a
    Add,    // add d, a, b       d = a + b (64-bit, wrapping)
    Sub,    // sub d, a, b       d = a - b
    Mul,    // mul d, a, b       d = a * b
    Mad,    // mad d, a, b, c    d = a * b + c
    FAdd,   // fadd d, a, b      the low 32 bits as floats: d = a + b
    FMul,   // fmul d, a, b      d = a * b
    SetLt,  // setlt d, a, b     d = a < b (unsigned), 1 or 0
    Ld32,   // ld32 d, a         d = the 32 bits of device memory at address a
    St32,   // st32 a, b         the 32 bits of device memory at address a = low 32 bits of b
    Lds32,  // lds32 d, a        d = the 32 bits of the block's shared memory at offset a
    Sts32,  // sts32 a, b        shared memory at offset a = low 32 bits of b
    Jmp,    // jmp label
    Bz,     // bz a, label       jump when a == 0
    Bnz,    // bnz a, label      jump when a != 0
    Bar,    // bar               waits until every running thread of the block has reached it
    Trap,   // trap #code        the launch fails, reporting the code
    Ret,    // ret               the thread ends (so does running past the last instruction)
};

struct Operand {
    enum class Kind : uint8_t { Register, Argument, Immediate, Special };
    Kind kind = Kind::Immediate;
    uint64_t value = 0;  // register or argument index, immediate, or a Special below
};

// The launch's coordinates a kernel may read, in the order %tid.x .. %nctaid.z.
enum Special : uint8_t { kTid, kNtid = 3, kCtaid = 6, kNctaid = 9, kSpecialCount = 12 };

struct Instruction {
    Opcode opcode = Opcode::Ret;
    Operand operands[4];
    uint32_t target = 0;  // the instruction a jump goes to
    uint32_t line = 0;    // in the image, for fault messages
};

enum class ArgumentType : uint8_t { U32, F32, Ptr };

// Launches share the kernel (shared_from_this), so a queued launch never outlives it.
struct Kernel : std::enable_shared_from_this<Kernel> {
    using Handle = halPluginFunction;
    std::string name;
    std::vector<ArgumentType> arguments;
    std::vector<Instruction> code;
};

constexpr uint32_t kRegisterCount = 16;

// The bytes an argument of `type` takes in halKernelArg, and its name in the image.
size_t argumentSize(ArgumentType type);
const char* argumentTypeName(ArgumentType type);

// The kernels of one image, in the order it defines them.
using KernelImage = std::vector<std::shared_ptr<Kernel>>;

// Parses and checks `size` bytes at `text` (borrowed, untrusted, not NUL-terminated). Returns
// false with the reason, naming the line, in `problem` when the image is not a valid one.
bool parseKernelImage(const char* text, size_t size, KernelImage& kernels, std::string& problem);

}  // namespace polyhal_template

#endif  // POLYHAL_TEMPLATE_ENGINE_KERNEL_IMAGE_HPP_
