// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "json_value.h"

namespace metaroce::testjson {

namespace {

class Parser {
public:
    explicit Parser(std::string_view s) : s_(s) {}

    Value document() {
        Value v = value();
        ws();
        if (i_ != s_.size())
            fail("text after the document");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string &what) {
        throw ParseError(what + " at offset " + std::to_string(i_));
    }
    void ws() {
        while (i_ < s_.size() &&
               (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r'))
            i_++;
    }
    bool eat(char c) {
        ws();
        if (i_ < s_.size() && s_[i_] == c) {
            i_++;
            return true;
        }
        return false;
    }
    void want(char c) {
        if (!eat(c))
            fail(std::string("expected '") + c + "'");
    }
    bool word(std::string_view w) {
        if (s_.substr(i_, w.size()) != w)
            return false;
        i_ += w.size();
        return true;
    }

    Value value() {
        ws();
        if (i_ >= s_.size())
            fail("unexpected end");
        char c = s_[i_];
        Value v;
        if (c == '{') {
            i_++;
            Object o;
            if (!eat('}')) {
                do {
                    ws();
                    std::string k = string();
                    if (o.count(k))
                        fail("duplicate key " + k);
                    want(':');
                    o.emplace(k, value());
                } while (eat(','));
                want('}');
            }
            v.v.emplace<5>(std::move(o));
        } else if (c == '[') {
            i_++;
            Array a;
            if (!eat(']')) {
                do
                    a.push_back(value());
                while (eat(','));
                want(']');
            }
            v.v.emplace<4>(std::move(a));
        } else if (c == '"') {
            v.v.emplace<3>(string());
        } else if (word("true")) {
            v.v.emplace<1>(true);
        } else if (word("false")) {
            v.v.emplace<1>(false);
        } else if (word("null")) {
            v.v.emplace<0>(nullptr);
        } else {
            v.v.emplace<2>(number());
        }
        return v;
    }

    std::string string() {
        if (i_ >= s_.size() || s_[i_] != '"')
            fail("expected a string");
        i_++;
        std::string out;
        for (;;) {
            if (i_ >= s_.size())
                fail("unterminated string");
            unsigned char c = static_cast<unsigned char>(s_[i_++]);
            if (c == '"')
                return out;
            if (c < 0x20)
                fail("control character in a string");
            if (c != '\\') {
                out += static_cast<char>(c);
                continue;
            }
            if (i_ >= s_.size())
                fail("unterminated escape");
            char e = s_[i_++];
            switch (e) {
            case '"':
            case '\\':
            case '/':
                out += e;
                break;
            case 'n':
                out += '\n';
                break;
            case 't':
                out += '\t';
                break;
            case 'r':
                out += '\r';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'u': {
                if (i_ + 4 > s_.size())
                    fail("short \\u escape");
                unsigned long cp = std::stoul(std::string(s_.substr(i_, 4)), nullptr, 16);
                i_ += 4;
                if (cp >= 0x80)
                    fail("non-ASCII \\u escape (not produced by the tool)");
                out += static_cast<char>(cp);
                break;
            }
            default:
                fail("bad escape");
            }
        }
    }

    std::string number() {
        size_t start = i_;
        if (i_ < s_.size() && s_[i_] == '-')
            i_++;
        auto digits = [&] {
            size_t d = i_;
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9')
                i_++;
            return i_ - d;
        };
        size_t lead = i_;
        if (!digits())
            fail("expected a value");
        if (s_[lead] == '0' && i_ - lead > 1)
            fail("leading zero");
        if (i_ < s_.size() && s_[i_] == '.') {
            i_++;
            if (!digits())
                fail("no digits after the point");
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            i_++;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-'))
                i_++;
            if (!digits())
                fail("no digits in the exponent");
        }
        return std::string(s_.substr(start, i_ - start));
    }

    std::string_view s_;
    size_t i_ = 0;
};

} // namespace

const Value &Value::operator[](const std::string &key) const {
    if (kind() != ObjectKind)
        throw ParseError("not an object, looking up " + key);
    auto &o = std::get<5>(v);
    auto it = o.find(key);
    if (it == o.end())
        throw ParseError("no key " + key);
    return it->second;
}

const Value &Value::operator[](size_t i) const {
    if (kind() != ArrayKind)
        throw ParseError("not an array");
    return std::get<4>(v).at(i);
}

size_t Value::size() const {
    if (kind() == ArrayKind)
        return std::get<4>(v).size();
    if (kind() == ObjectKind)
        return std::get<5>(v).size();
    throw ParseError("no size");
}

bool Value::has(const std::string &key) const {
    return kind() == ObjectKind && std::get<5>(v).count(key);
}

std::string Value::number() const {
    if (kind() != Number)
        throw ParseError("not a number");
    return std::get<2>(v);
}

const std::string &Value::str() const {
    if (kind() != String)
        throw ParseError("not a string");
    return std::get<3>(v);
}

bool Value::boolean() const {
    if (kind() != Bool)
        throw ParseError("not a boolean");
    return std::get<1>(v);
}

Value parse(std::string_view text) {
    return Parser(text).document();
}

} // namespace metaroce::testjson
