#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Check that uapi/metaroce-netlink.h and the YAML spec describe one ABI.

Every attribute set, command and enum of the spec must be a C enum of the
header with the same names, in the same order, with the same values; the
type each header comment starts with must be the spec's type; the ranges
the header defines must be the spec's checks; the family, version and group
names must match. Prints one line per failure and exits 1 if any.
"""
import re
import sys

import yaml

C_TYPES = {"u8", "u16", "u32", "u64", "string", "binary", "nest"}

# Header range constants and the spec attribute whose checks they mirror.
RANGES = {
    ("dev", "paths"): ("METAROCE_PATHS_MIN", "METAROCE_PATHS_MAX"),
    ("dev", "fail-after"): ("METAROCE_FAIL_AFTER_MIN", "METAROCE_FAIL_AFTER_MAX"),
    ("cc", "gain-shift"): ("METAROCE_CC_GAIN_SHIFT_MIN", "METAROCE_CC_GAIN_SHIFT_MAX"),
    ("cc", "init-path-window"): ("METAROCE_CC_WINDOW_MIN", "METAROCE_CC_PATH_WINDOW_MAX"),
    ("cc", "max-path-window"): ("METAROCE_CC_WINDOW_MIN", "METAROCE_CC_PATH_WINDOW_MAX"),
    ("cc", "init-conn-window"): ("METAROCE_CC_WINDOW_MIN", "METAROCE_CC_CONN_WINDOW_MAX"),
    ("cc", "max-conn-window"): ("METAROCE_CC_WINDOW_MIN", "METAROCE_CC_CONN_WINDOW_MAX"),
    ("cc", "min-window"): ("METAROCE_CC_MIN_WINDOW_MIN", "METAROCE_CC_MIN_WINDOW_MAX"),
    ("cc", "ai"): ("METAROCE_CC_AI_MIN", "METAROCE_CC_AI_MAX"),
    ("cc", "target-delay-ns"): ("METAROCE_CC_TARGET_DELAY_MIN_NS",
                                "METAROCE_CC_TARGET_DELAY_MAX_NS"),
    ("cc", "loss-burst"): ("METAROCE_CC_LOSS_BURST_MIN", "METAROCE_CC_LOSS_BURST_MAX"),
    ("key", "secret"): ("METAROCE_KEY_LEN_MIN", "METAROCE_KEY_LEN_MAX"),
}


def c_name(prefix, name):
    return (prefix + name).upper().replace("-", "_")


def parse_header(text):
    """Return ({enum: [(name, value, comment)]}, {define: text})."""
    defines = {}
    for m in re.finditer(r"^#define[ \t]+(\w+)[ \t]+(.+?)[ \t]*$", text, re.M):
        defines[m.group(1)] = m.group(2)
    enums = {}
    for m in re.finditer(r"enum\s+(\w+)\s*\{(.*?)\};", text, re.S):
        entries, value, pending = [], -1, ""
        body = m.group(2)
        # Comments standing before an entry belong to it, as do trailing ones.
        for line in body.splitlines():
            line = line.strip()
            if not line:
                continue
            em = re.match(r"(\w+)\s*(?:=\s*([^,/]+?))?\s*,?\s*(?:/\*\s*(.*?)\s*(?:\*/)?)?$", line)
            if not em or line.startswith("/*") or line.startswith("*"):
                cm = re.match(r"/?\*\s*(.*?)\s*(?:\*/)?$", line)
                if cm and cm.group(1):
                    pending = pending or cm.group(1)
                continue
            name, val, comment = em.group(1), em.group(2), em.group(3)
            if val is not None:
                val = val.strip()
                value = eval_c(val, entries, defines)
            else:
                value += 1
            entries.append((name, value, comment or pending))
            pending = ""
        enums[m.group(1)] = entries
    return enums, defines


def eval_c(expr, entries=(), defines=None):
    known = {n: v for n, v, _ in entries}
    expr = re.sub(r"(\d+)U?L{0,2}\b", r"\1", expr)
    for name in re.findall(r"[A-Z_][A-Z0-9_]+", expr):
        if name in known:
            expr = expr.replace(name, str(known[name]))
        elif defines and name in defines:
            expr = expr.replace(name, "(%s)" % eval_c(defines[name], (), defines))
    return int(eval(expr, {"__builtins__": {}}))


def comment_type(comment):
    m = re.match(r"(u8|u16|u32|u64|string|binary|nest)\b", comment or "")
    return m.group(1) if m else None


def main():
    spec_path, header_path = sys.argv[1], sys.argv[2]
    spec = yaml.safe_load(open(spec_path))
    enums, defines = parse_header(open(header_path).read())
    errors = []

    def want(cond, msg):
        if not cond:
            errors.append(msg)

    want(defines.get("METAROCE_GENL_NAME") == '"%s"' % spec["name"], "family name")
    want(eval_c(defines.get("METAROCE_GENL_VERSION", "0")) == spec["version"], "version")
    groups = [g["name"] for g in spec["mcast-groups"]["list"]]
    want(defines.get("METAROCE_GENL_MCGRP_EVENTS") == '"%s"' % groups[0], "group name")
    consts = {d["name"]: d["value"] for d in spec["definitions"] if d["type"] == "const"}
    for name, value in consts.items():
        cname = c_name("metaroce-", name)
        want(cname in defines and eval_c(defines[cname], (), defines) == value,
             "%s is not %d" % (cname, value))

    for d in spec["definitions"]:
        if d["type"] != "enum":
            continue
        cenum = "metaroce_" + d["name"].replace("-", "_")
        got = enums.get(cenum)
        if got is None:
            errors.append("enum %s missing" % cenum)
            continue
        start = d.get("value-start", 0)
        names = [e if isinstance(e, str) else e["name"] for e in d["entries"]]
        expect = [(c_name(d["name-prefix"], n), start + i) for i, n in enumerate(names)]
        want([(n, v) for n, v, _ in got] == expect,
             "enum %s: %s != %s" % (cenum, [(n, v) for n, v, _ in got], expect))

    sets = {s["name"]: s for s in spec["attribute-sets"]}
    for name, aset in sets.items():
        cenum = "metaroce_a_" + name.replace("-", "_")
        got = enums.get(cenum)
        if got is None:
            errors.append("enum %s missing" % cenum)
            continue
        attrs = aset["attributes"]
        prefix = aset["name-prefix"]
        for i, attr in enumerate(attrs):
            if i >= len(got):
                errors.append("%s: %s missing" % (cenum, attr["name"]))
                break
            cname, value, comment = got[i]
            want(cname == c_name(prefix, attr["name"]) and value == i,
                 "%s[%d] is %s=%d, spec says %s" % (cenum, i, cname, value, attr["name"]))
            if attr["type"] in C_TYPES:
                want(comment_type(comment) == attr["type"],
                     "%s: header comment says %s, spec says %s"
                     % (cname, comment_type(comment), attr["type"]))
            elif attr["type"] in ("pad", "unused"):
                want(comment is None or comment == "", "%s: comment on %s" % (cname, attr["type"]))
            else:
                errors.append("%s: unknown spec type %s" % (cname, attr["type"]))
            if attr["type"] == "nest":
                want(attr["nested-attributes"] in sets, "%s: no set %s" % (cname,
                     attr["nested-attributes"]))
        tail = [n for n, _, _ in got[len(attrs):]]
        upper = c_name(prefix, "max")
        want(tail == ["__" + upper, upper], "%s: ends with %s" % (cenum, tail))

    for (sname, aname), (lo, hi) in RANGES.items():
        attr = next(a for a in sets[sname]["attributes"] if a["name"] == aname)
        checks = attr.get("checks", {})
        lo_key, hi_key = ("min-len", "max-len") if attr["type"] == "binary" else ("min", "max")
        want(eval_c(defines[lo], (), defines) == checks.get(lo_key),
             "%s/%s: %s != spec %s" % (sname, aname, lo, checks.get(lo_key)))
        want(eval_c(defines[hi], (), defines) == checks.get(hi_key),
             "%s/%s: %s != spec %s" % (sname, aname, hi, checks.get(hi_key)))

    ops = spec["operations"]
    got = enums.get("metaroce_cmd", [])
    expect = [(c_name(ops["name-prefix"], "unspec"), 0)]
    expect += [(c_name(ops["name-prefix"], op["name"]), op["value"]) for op in ops["list"]]
    upper = c_name(ops["name-prefix"], "max")
    expect_tail = ["__" + upper, upper]
    want([(n, v) for n, v, _ in got[:len(expect)]] == expect,
         "metaroce_cmd: %s != %s" % ([(n, v) for n, v, _ in got], expect))
    want([n for n, _, _ in got[len(expect):]] == expect_tail, "metaroce_cmd tail")
    for op in ops["list"]:
        aset = sets.get(op.get("attribute-set", "dev"))
        names = {a["name"] for a in aset["attributes"]}
        for mode in ("do", "dump", "event"):
            part = op.get(mode)
            if not part:
                continue
            lists = [part] if mode == "event" else [part.get("request"), part.get("reply")]
            for lst in lists:
                for a in (lst or {}).get("attributes", []):
                    want(a in names, "%s %s: no attribute %s" % (op["name"], mode, a))

    for e in errors:
        print("spec_check: " + e)
    if errors:
        return 1
    print("spec_check: %d attribute sets, %d commands, %d enums agree"
          % (len(sets), len(ops["list"]),
             sum(1 for d in spec["definitions"] if d["type"] == "enum")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
