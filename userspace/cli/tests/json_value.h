// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// A strict RFC 8259 parser for the tests: the tool's JSON must parse, and
// the tests then look values up in the tree.
#ifndef METAROCE_CLI_TESTS_JSON_VALUE_H
#define METAROCE_CLI_TESTS_JSON_VALUE_H

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace metaroce::testjson {

struct Value;
using Object = std::map<std::string, Value>;
using Array = std::vector<Value>;

struct Value {
    // null, bool, number (kept as its text), string, array, object
    std::variant<std::nullptr_t, bool, std::string, std::string, Array, Object> v;
    enum Kind { Null, Bool, Number, String, ArrayKind, ObjectKind };
    Kind kind() const { return static_cast<Kind>(v.index()); }

    const Value &operator[](const std::string &key) const;
    const Value &operator[](size_t i) const;
    size_t size() const;
    bool has(const std::string &key) const;
    std::string number() const; // the number's text
    const std::string &str() const;
    bool boolean() const;
};

class ParseError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The one document in @text (whitespace around it allowed).
Value parse(std::string_view text);

} // namespace metaroce::testjson

#endif
