// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "json.h"

#include <cstdio>
#include <stdexcept>

namespace metaroce::json {

std::string escape(std::string_view s) {
    std::string out;
    for (unsigned char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\r':
            out += "\\r";
            break;
        default:
            if (c < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                out += buf;
            } else {
                out += static_cast<char>(c);
            }
        }
    }
    return out;
}

void Writer::newline() {
    if (!pretty_)
        return;
    out_ += '\n';
    out_.append(stack_.size() * 4, ' ');
}

void Writer::before_value() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (stack_.empty())
        return;
    if (stack_.back().object)
        throw std::logic_error("JSON value in an object without a key");
    if (!stack_.back().empty)
        out_ += ',';
    stack_.back().empty = false;
    newline();
}

Writer &Writer::key(std::string_view k) {
    if (stack_.empty() || !stack_.back().object || after_key_)
        throw std::logic_error("JSON key outside an object");
    if (!stack_.back().empty)
        out_ += ',';
    stack_.back().empty = false;
    newline();
    out_ += '"' + escape(k) + (pretty_ ? "\": " : "\":");
    after_key_ = true;
    return *this;
}

Writer &Writer::begin_object() {
    before_value();
    out_ += '{';
    stack_.push_back({true});
    return *this;
}

Writer &Writer::begin_array() {
    before_value();
    out_ += '[';
    stack_.push_back({false});
    return *this;
}

Writer &Writer::end_object() {
    if (stack_.empty() || !stack_.back().object || after_key_)
        throw std::logic_error("unbalanced JSON object");
    bool empty = stack_.back().empty;
    stack_.pop_back();
    if (!empty)
        newline();
    out_ += '}';
    return *this;
}

Writer &Writer::end_array() {
    if (stack_.empty() || stack_.back().object)
        throw std::logic_error("unbalanced JSON array");
    bool empty = stack_.back().empty;
    stack_.pop_back();
    if (!empty)
        newline();
    out_ += ']';
    return *this;
}

Writer &Writer::string(std::string_view v) {
    before_value();
    out_ += '"' + escape(v) + '"';
    return *this;
}

Writer &Writer::number(uint64_t v) {
    before_value();
    out_ += std::to_string(v);
    return *this;
}

Writer &Writer::number_text(std::string_view decimal) {
    before_value();
    out_ += decimal;
    return *this;
}

Writer &Writer::boolean(bool v) {
    before_value();
    out_ += v ? "true" : "false";
    return *this;
}

Writer &Writer::null() {
    before_value();
    out_ += "null";
    return *this;
}

} // namespace metaroce::json
