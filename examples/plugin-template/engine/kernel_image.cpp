// Parsing and checking a tasm kernel image (see kernel_image.hpp). Nothing in the image is
// trusted: every name, index, label and number is checked here, so that running a kernel never
// meets an instruction it cannot execute.
#include "engine/kernel_image.hpp"

#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

namespace polyhal_template {

namespace {

constexpr size_t kMaxKernels = 1024;
constexpr size_t kMaxInstructions = 65536;  // per kernel
constexpr size_t kMaxNameLength = 255;

struct Mnemonic {
    const char* name;
    Opcode opcode;
    uint8_t operands;    // register/argument/immediate/special operands
    bool writesFirst;    // the first operand is the destination register
    bool endsWithLabel;  // a label follows the operands
};

constexpr Mnemonic kMnemonics[] = {
    {"mov", Opcode::Mov, 2, true, false},     {"add", Opcode::Add, 3, true, false},
    {"sub", Opcode::Sub, 3, true, false},     {"mul", Opcode::Mul, 3, true, false},
    {"mad", Opcode::Mad, 4, true, false},     {"fadd", Opcode::FAdd, 3, true, false},
    {"fmul", Opcode::FMul, 3, true, false},   {"setlt", Opcode::SetLt, 3, true, false},
    {"ld32", Opcode::Ld32, 2, true, false},   {"st32", Opcode::St32, 2, false, false},
    {"lds32", Opcode::Lds32, 2, true, false}, {"sts32", Opcode::Sts32, 2, false, false},
    {"jmp", Opcode::Jmp, 0, false, true},     {"bz", Opcode::Bz, 1, false, true},
    {"bnz", Opcode::Bnz, 1, false, true},     {"bar", Opcode::Bar, 0, false, false},
    {"trap", Opcode::Trap, 1, false, false},  {"ret", Opcode::Ret, 0, false, false},
};

constexpr const char* kSpecialNames[kSpecialCount] = {
    "%tid.x",   "%tid.y",   "%tid.z",   "%ntid.x",   "%ntid.y",   "%ntid.z",
    "%ctaid.x", "%ctaid.y", "%ctaid.z", "%nctaid.x", "%nctaid.y", "%nctaid.z",
};

bool isIdentifier(const std::string& word) {
    if (word.empty() || word.size() > kMaxNameLength) return false;
    if (!(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_')) return false;
    for (const char c : word) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    }
    return true;
}

// A decimal or 0x-hexadecimal number of 64 bits at most, the whole of `text`.
bool parseNumber(const std::string& text, uint64_t& value) {
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
    errno = 0;
    char* end = nullptr;
    value = std::strtoull(text.c_str(), &end, 0);
    return errno == 0 && end == text.c_str() + text.size();
}

// The words of a line, split at blanks and commas, the comment dropped.
std::vector<std::string> wordsOf(const std::string& line) {
    std::vector<std::string> words;
    std::string word;
    for (const char c : line.substr(0, line.find(';'))) {
        if (c == ' ' || c == '\t' || c == ',' || c == '\r') {
            if (!word.empty()) words.push_back(std::move(word));
            word.clear();
        } else {
            word += c;
        }
    }
    if (!word.empty()) words.push_back(std::move(word));
    return words;
}

class Parser {
  public:
    Parser(KernelImage& kernels, std::string& problem) : kernels_(kernels), problem_(problem) {}

    // Parses one line; false once the image is known to be invalid.
    bool line(uint32_t number, const std::string& text) {
        line_ = number;
        std::vector<std::string> words = wordsOf(text);
        if (words.empty()) return true;
        if (!sawHeader_) {
            if (words.size() != 2 || words[0] != "tasm" || words[1] != "1") {
                return fail("not a tasm kernel image: the first line must be 'tasm 1'");
            }
            sawHeader_ = true;
            return true;
        }
        if (words[0] == ".kernel") return beginKernel(text);
        if (kernel_ == nullptr) return fail("'%s' outside a .kernel ... .end", words[0].c_str());
        if (words[0] == ".end")
            return words.size() == 1 ? endKernel() : fail("'.end' takes nothing");
        if (words[0].back() == ':') {
            const std::string label = words[0].substr(0, words[0].size() - 1);
            if (!isIdentifier(label)) return fail("'%s' is not a label name", label.c_str());
            if (!labels_.emplace(label, static_cast<uint32_t>(kernel_->code.size())).second) {
                return fail("the label '%s' is defined twice", label.c_str());
            }
            words.erase(words.begin());
            if (words.empty()) return true;
        }
        return instruction(words);
    }

    bool finish() {
        if (!sawHeader_) return fail("not a tasm kernel image: it is empty");
        if (kernel_ != nullptr) return fail("the kernel '%s' has no '.end'", kernel_->name.c_str());
        return true;
    }

  private:
    bool fail(const char* format, ...) __attribute__((format(printf, 2, 3))) {
        char reason[512];
        va_list args;
        va_start(args, format);
        std::vsnprintf(reason, sizeof reason, format, args);
        va_end(args);
        problem_ = "tasm line " + std::to_string(line_) + ": " + reason;
        return false;
    }

    // .kernel name(type, type, ...)
    bool beginKernel(const std::string& text) {
        if (kernel_ != nullptr)
            return fail("'.kernel' inside the kernel '%s'", kernel_->name.c_str());
        if (kernels_.size() == kMaxKernels) return fail("more than %zu kernels", kMaxKernels);
        const std::string declaration = text.substr(0, text.find(';'));
        const size_t open = declaration.find('('), close = declaration.find(')');
        if (open == std::string::npos || close == std::string::npos || close < open ||
            !wordsOf(declaration.substr(close + 1)).empty()) {
            return fail("a kernel is declared as '.kernel name(type, ...)'");
        }
        const std::vector<std::string> head = wordsOf(declaration.substr(0, open));
        if (head.size() != 2 || !isIdentifier(head[1])) {
            return fail("a kernel is declared as '.kernel name(type, ...)' with a C name");
        }
        auto kernel = std::make_shared<Kernel>();
        kernel->name = head[1];
        for (const auto& existing : kernels_) {
            if (existing->name == kernel->name) {
                return fail("the kernel '%s' is defined twice", kernel->name.c_str());
            }
        }
        for (const auto& type : wordsOf(declaration.substr(open + 1, close - open - 1))) {
            if (type == "u32") {
                kernel->arguments.push_back(ArgumentType::U32);
            } else if (type == "f32") {
                kernel->arguments.push_back(ArgumentType::F32);
            } else if (type == "ptr") {
                kernel->arguments.push_back(ArgumentType::Ptr);
            } else {
                return fail("unknown argument type '%s' (u32, f32 or ptr)", type.c_str());
            }
        }
        kernel_ = std::move(kernel);
        labels_.clear();
        jumps_.clear();
        return true;
    }

    bool endKernel() {
        for (const auto& [index, label] : jumps_) {
            const auto found = labels_.find(label.name);
            if (found == labels_.end()) {
                line_ = label.line;
                return fail("no label '%s' in the kernel '%s'", label.name.c_str(),
                            kernel_->name.c_str());
            }
            kernel_->code[index].target = found->second;
        }
        kernels_.push_back(std::move(kernel_));
        return true;
    }

    bool instruction(const std::vector<std::string>& words) {
        const Mnemonic* mnemonic = nullptr;
        for (const auto& known : kMnemonics) {
            if (words[0] == known.name) mnemonic = &known;
        }
        if (mnemonic == nullptr) return fail("unknown instruction '%s'", words[0].c_str());
        const size_t expected = mnemonic->operands + (mnemonic->endsWithLabel ? 1 : 0);
        if (words.size() - 1 != expected) {
            return fail("'%s' takes %zu operand(s), not %zu", mnemonic->name, expected,
                        words.size() - 1);
        }
        if (kernel_->code.size() == kMaxInstructions) {
            return fail("the kernel '%s' has more than %zu instructions", kernel_->name.c_str(),
                        kMaxInstructions);
        }
        Instruction instruction;
        instruction.opcode = mnemonic->opcode;
        instruction.line = line_;
        for (uint8_t i = 0; i < mnemonic->operands; ++i) {
            if (!operand(words[i + 1], instruction.operands[i])) return false;
        }
        if (mnemonic->writesFirst && instruction.operands[0].kind != Operand::Kind::Register) {
            return fail("the destination of '%s' must be a register", mnemonic->name);
        }
        if (mnemonic->endsWithLabel) {
            const std::string& label = words.back();
            if (!isIdentifier(label)) return fail("'%s' is not a label name", label.c_str());
            jumps_.emplace(static_cast<uint32_t>(kernel_->code.size()), PendingLabel{label, line_});
        }
        kernel_->code.push_back(instruction);
        return true;
    }

    bool operand(const std::string& word, Operand& out) {
        uint64_t index = 0;
        if (word[0] == '#') {
            if (!parseNumber(word.substr(1), out.value)) {
                return fail("'%s' is not a 64-bit immediate (#123 or #0x7b)", word.c_str());
            }
            out.kind = Operand::Kind::Immediate;
            return true;
        }
        if (word[0] == '%') {
            for (uint8_t special = 0; special < kSpecialCount; ++special) {
                if (word == kSpecialNames[special]) {
                    out = {Operand::Kind::Special, special};
                    return true;
                }
            }
            return fail("unknown special '%s' (%%tid, %%ntid, %%ctaid, %%nctaid .x .y .z)",
                        word.c_str());
        }
        if ((word[0] == 'r' || word[0] == 'a') && parseNumber(word.substr(1), index)) {
            if (word[0] == 'r') {
                if (index >= kRegisterCount) {
                    return fail("no register '%s' (r0 to r%u)", word.c_str(), kRegisterCount - 1);
                }
                out = {Operand::Kind::Register, index};
            } else {
                if (index >= kernel_->arguments.size()) {
                    return fail("no argument '%s': the kernel '%s' takes %zu", word.c_str(),
                                kernel_->name.c_str(), kernel_->arguments.size());
                }
                out = {Operand::Kind::Argument, index};
            }
            return true;
        }
        return fail("'%s' is not an operand (r0.., a0.., #number or %%special)", word.c_str());
    }

    struct PendingLabel {
        std::string name;
        uint32_t line;
    };

    KernelImage& kernels_;
    std::string& problem_;
    uint32_t line_ = 0;
    bool sawHeader_ = false;
    std::shared_ptr<Kernel> kernel_;          // the kernel being parsed
    std::map<std::string, uint32_t> labels_;  // its labels and the instructions they mark
    std::map<uint32_t, PendingLabel> jumps_;  // its jumps, by instruction, to resolve at .end
};

}  // namespace

size_t argumentSize(ArgumentType type) {
    return type == ArgumentType::Ptr ? sizeof(void*) : 4;
}

const char* argumentTypeName(ArgumentType type) {
    switch (type) {
    case ArgumentType::U32: return "u32";
    case ArgumentType::F32: return "f32";
    case ArgumentType::Ptr: return "ptr";
    }
    return "?";
}

bool parseKernelImage(const char* text, size_t size, KernelImage& kernels, std::string& problem) {
    if (const void* nul = std::memchr(text, '\0', size)) {
        problem = "not a tasm kernel image: byte " +
                  std::to_string(static_cast<const char*>(nul) - text) + " is NUL (tasm is text)";
        return false;
    }
    KernelImage parsed;
    Parser parser(parsed, problem);
    uint32_t number = 0;
    for (size_t start = 0; start < size;) {
        const char* newline =
            static_cast<const char*>(std::memchr(text + start, '\n', size - start));
        const size_t end = newline != nullptr ? static_cast<size_t>(newline - text) : size;
        if (!parser.line(++number, std::string(text + start, end - start))) return false;
        start = end + 1;
    }
    if (!parser.finish()) return false;
    kernels = std::move(parsed);
    return true;
}

}  // namespace polyhal_template
