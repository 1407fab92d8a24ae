// A small strict JSON reader for the trace tests: parses a whole document into values, and
// fails on anything RFC 8259 does not allow (trailing commas, unterminated strings, junk).
#ifndef POLYHAL_TESTS_CONFORMANCE_JSON_READER_HPP_
#define POLYHAL_TESTS_CONFORMANCE_JSON_READER_HPP_

#include <string>
#include <utility>
#include <vector>

namespace cts::json {

struct Value {
    enum class Type { Null, Boolean, Number, String, Array, Object };
    Type type = Type::Null;
    bool boolean = false;
    double number = 0;
    std::string string;
    std::vector<Value> array;
    std::vector<std::pair<std::string, Value>> object;

    // The member `key` of an object, or nullptr.
    const Value* find(const std::string& key) const;
    bool isNumber() const { return type == Type::Number; }
    bool isString() const { return type == Type::String; }
};

// Parses `text`; on failure returns false with `error` saying where and why.
bool parse(const std::string& text, Value* value, std::string* error);

}  // namespace cts::json

#endif  // POLYHAL_TESTS_CONFORMANCE_JSON_READER_HPP_
