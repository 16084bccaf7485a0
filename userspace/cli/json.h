// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// A small JSON writer, compact or indented (-p), in the shape iproute2's
// -j output has: member order as written, strings escaped per RFC 8259.
#ifndef METAROCE_CLI_JSON_H
#define METAROCE_CLI_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace metaroce::json {

class Writer {
public:
    explicit Writer(bool pretty) : pretty_(pretty) {}
    Writer &begin_object();
    Writer &end_object();
    Writer &begin_array();
    Writer &end_array();
    Writer &key(std::string_view k);
    Writer &string(std::string_view v);
    Writer &number(uint64_t v);
    Writer &number_text(std::string_view decimal); // an already formatted number
    Writer &boolean(bool v);
    Writer &null();

    template <typename T> Writer &member(std::string_view k, const T &v) {
        key(k);
        if constexpr (std::is_same_v<T, bool>)
            return boolean(v);
        else if constexpr (std::is_integral_v<T>)
            return number(static_cast<uint64_t>(v));
        else
            return string(v);
    }

    // The document so far; complete once every container is closed.
    const std::string &str() const { return out_; }

private:
    void before_value();
    void newline();
    bool pretty_;
    std::string out_;
    struct Level {
        bool object;
        bool empty = true;
    };
    std::vector<Level> stack_;
    bool after_key_ = false;
};

std::string escape(std::string_view s);

} // namespace metaroce::json

#endif
