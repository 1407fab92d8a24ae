// Implements json_reader.hpp: a recursive-descent parser over the whole text.
#include "json_reader.hpp"

#include <cctype>
#include <cstdlib>
#include <cstring>

namespace cts::json {

namespace {

class Parser {
  public:
    explicit Parser(const std::string& text) : text_(text) {}

    bool document(Value* value) {
        skipSpace();
        if (!parseValue(value, 0)) return false;
        skipSpace();
        return position_ == text_.size() || failAt("text after the document");
    }

    const std::string& error() const { return error_; }

  private:
    static constexpr int kMaxDepth = 64;

    bool failAt(const char* what) {
        error_ = std::string(what) + " at offset " + std::to_string(position_);
        return false;
    }

    void skipSpace() {
        while (position_ < text_.size() && std::strchr(" \t\r\n", text_[position_]) != nullptr &&
               text_[position_] != '\0') {
            ++position_;
        }
    }

    bool consume(char expected) {
        if (position_ < text_.size() && text_[position_] == expected) {
            ++position_;
            return true;
        }
        return false;
    }

    bool literal(const char* word) {
        const size_t length = std::strlen(word);
        if (text_.compare(position_, length, word) != 0) return failAt("an unknown literal");
        position_ += length;
        return true;
    }

    bool parseValue(Value* value, int depth) {
        if (depth > kMaxDepth) return failAt("nesting too deep");
        if (position_ >= text_.size()) return failAt("the end of the text");
        switch (text_[position_]) {
        case '{': return parseObject(value, depth);
        case '[': return parseArray(value, depth);
        case '"': value->type = Value::Type::String; return parseString(&value->string);
        case 't':
            value->type = Value::Type::Boolean;
            value->boolean = true;
            return literal("true");
        case 'f':
            value->type = Value::Type::Boolean;
            value->boolean = false;
            return literal("false");
        case 'n': value->type = Value::Type::Null; return literal("null");
        default: return parseNumber(value);
        }
    }

    bool parseObject(Value* value, int depth) {
        value->type = Value::Type::Object;
        ++position_;
        skipSpace();
        if (consume('}')) return true;
        for (;;) {
            skipSpace();
            std::string key;
            if (position_ >= text_.size() || text_[position_] != '"') {
                return failAt("an object key that is not a string");
            }
            if (!parseString(&key)) return false;
            skipSpace();
            if (!consume(':')) return failAt("a missing ':'");
            skipSpace();
            Value member;
            if (!parseValue(&member, depth + 1)) return false;
            value->object.emplace_back(std::move(key), std::move(member));
            skipSpace();
            if (consume('}')) return true;
            if (!consume(',')) return failAt("a missing ',' or '}'");
        }
    }

    bool parseArray(Value* value, int depth) {
        value->type = Value::Type::Array;
        ++position_;
        skipSpace();
        if (consume(']')) return true;
        for (;;) {
            skipSpace();
            Value element;
            if (!parseValue(&element, depth + 1)) return false;
            value->array.push_back(std::move(element));
            skipSpace();
            if (consume(']')) return true;
            if (!consume(',')) return failAt("a missing ',' or ']'");
        }
    }

    bool parseString(std::string* out) {
        ++position_;  // the opening quote
        while (position_ < text_.size()) {
            const char c = text_[position_++];
            if (c == '"') return true;
            if (static_cast<unsigned char>(c) < 0x20) return failAt("a control character");
            if (c != '\\') {
                out->push_back(c);
                continue;
            }
            if (position_ >= text_.size()) break;
            const char escaped = text_[position_++];
            switch (escaped) {
            case '"': out->push_back('"'); break;
            case '\\': out->push_back('\\'); break;
            case '/': out->push_back('/'); break;
            case 'b': out->push_back('\b'); break;
            case 'f': out->push_back('\f'); break;
            case 'n': out->push_back('\n'); break;
            case 'r': out->push_back('\r'); break;
            case 't': out->push_back('\t'); break;
            case 'u': {
                if (position_ + 4 > text_.size()) return failAt("a short \\u escape");
                const std::string hex = text_.substr(position_, 4);
                char* end = nullptr;
                const long code = std::strtol(hex.c_str(), &end, 16);
                if (end != hex.c_str() + 4) return failAt("a bad \\u escape");
                position_ += 4;
                out->push_back(code < 0x80 ? static_cast<char>(code) : '?');
                break;
            }
            default: return failAt("an unknown escape");
            }
        }
        return failAt("an unterminated string");
    }

    bool parseNumber(Value* value) {
        const size_t begin = position_;
        consume('-');
        if (position_ >= text_.size() ||
            !std::isdigit(static_cast<unsigned char>(text_[position_]))) {
            return failAt("an unexpected character");
        }
        if (text_[position_] == '0' && position_ + 1 < text_.size() &&
            std::isdigit(static_cast<unsigned char>(text_[position_ + 1]))) {
            return failAt("a number with a leading zero");
        }
        while (position_ < text_.size() &&
               std::strchr("0123456789.eE+-", text_[position_]) != nullptr &&
               text_[position_] != '\0') {
            ++position_;
        }
        const std::string digits = text_.substr(begin, position_ - begin);
        char* end = nullptr;
        value->type = Value::Type::Number;
        value->number = std::strtod(digits.c_str(), &end);
        if (end != digits.c_str() + digits.size()) return failAt("a malformed number");
        return true;
    }

    const std::string& text_;
    size_t position_ = 0;
    std::string error_;
};

}  // namespace

const Value* Value::find(const std::string& key) const {
    for (const auto& [name, member] : object) {
        if (name == key) return &member;
    }
    return nullptr;
}

bool parse(const std::string& text, Value* value, std::string* error) {
    Parser parser(text);
    if (parser.document(value)) return true;
    *error = parser.error();
    return false;
}

}  // namespace cts::json
