#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Compare tshark's MetaRoCE dissection of a capture with what it must be.

    check-dissector.py [--exact] [--require-opcodes all|LIST] [--sane QPNS]
                       [--aggregate DESC] [--label TEXT] EXPECT TSHARK_JSON

EXPECT is what `mr_pcap write|read` printed for the capture (the values the
frames were built from, or what the kernel's codec decodes); TSHARK_JSON is
`tshark -X lua_script:metaroce.lua -r CAPTURE -T json --no-duplicate-keys`.
One KTAP case per frame; a frame with a Lua error of the dissector fails,
and otherwise:

  - a MetaRoCE frame that decodes: exactly the expected metaroce.* fields,
    each with the expected values in order, no metaroce.malformed.* expert
    item, and header plus payload length equal to the UDP payload;
  - a frame the codec refuses: a metaroce.malformed.* item for the check
    that failed (with --exact, for that check only: the test frames have
    one defect each);
  - any other frame: no MetaRoCE layer at all.

--require-opcodes adds one case: every opcode named (hex, comma-separated;
"all": every opcode of the wire format) decoded in at least one frame.
--sane QPNS (LO-HI) adds one case for a capture of real traffic, on values
the codec accepts but a misplaced field would break: version 2, QPN (and a
UD source QPN) in LO-HI, path below 64, at most 4096 payload bytes, data
placed inside its message (offset + payload <= length; READ and atomic
requests carry none), atomics on 8-byte aligned addresses, NAK codes 1-3,
a HELLO's two tags apart.
--aggregate DESC makes the frame cases one case DESC (for the fuzz test and
long captures) and shows the failing frames only; --require-opcodes and
--sane stay cases of their own.
Prints KTAP and last "N passed, N failed[, N skipped]"; exits 1 if a case
failed, 2 on bad input.
"""
import argparse
import json
import re
import sys

OPCODES = {
    0x01: "SEND", 0x02: "SEND_IMM", 0x03: "SEND_INV", 0x04: "WRITE", 0x05: "WRITE_IMM",
    0x06: "READ_REQ", 0x07: "CMP_SWAP", 0x08: "FETCH_ADD", 0x09: "UD_SEND",
    0x0a: "UD_SEND_IMM", 0x10: "READ_RESP", 0x11: "ATOMIC_RESP", 0x20: "ACK", 0x21: "NAK",
    0x22: "HELLO",
}
WIRE_VERSION = 2
NAK_CODES = {1: "REMOTE_ACCESS", 2: "INVALID_REQUEST", 3: "RNR"}
HEX = re.compile(r"^0x[0-9a-fA-F]+$")
DECIMAL = re.compile(r"^[0-9]+$")


def norm(value):
    """A field value as a number when it is one (tshark prints hex fields as 0x..).

    Both sides go through here, so a one-byte payload ("09") is a number on both."""
    if HEX.match(value):
        return int(value, 16)
    if DECIMAL.match(value):
        return int(value, 10)
    return value.lower()


def read_expect(path):
    """frame number -> {"kind": str, "error": str|None, "fields": {name: [values]}}."""
    frames, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            words = line.split()
            if not words:
                continue
            if words[0] == "frame":
                cur = {"kind": None, "error": None, "fields": {}}
                frames[int(words[1])] = cur
            elif cur is None:
                sys.exit(f"{path}:{lineno}: a line before the first 'frame'")
            elif words[0] == "kind":
                cur["kind"] = words[1]
            elif words[0] == "error":
                cur["error"] = words[1]
            elif words[0].startswith("metaroce."):
                cur["fields"][words[0]] = [norm(w) for w in words[1:]] or [""]
            else:
                sys.exit(f"{path}:{lineno}: cannot read {line.strip()!r}")
    return frames


def shown(values):
    """A value list for a diagnostic, long ones elided in the middle."""
    if values is None:
        return "absent"
    if len(values) > 12:
        values = values[:6] + ["..."] + values[-5:]
    return " ".join(str(v) if len(str(v)) < 60 else str(v)[:57] + "..." for v in values)


def flatten(tree, fields, experts):
    """Collects the metaroce.* fields of a tshark JSON tree, in order."""
    for key, value in tree.items():
        items = value if isinstance(value, list) else [value]
        if key == "_ws.expert":
            for e in items:
                experts.extend(k[len("metaroce.malformed."):] for k in e
                               if k.startswith("metaroce.malformed."))
            continue
        for item in items:
            if key.startswith("metaroce.") and not key.endswith("_tree"):
                # A subtree without a value of its own shows as a dict.
                fields.setdefault(key, []).append("" if isinstance(item, dict) else norm(item))
            if isinstance(item, dict):
                flatten(item, fields, experts)


class Ktap:
    """KTAP cases; quiet ones count but print only when they fail."""

    def __init__(self, quiet=False):
        self.n = self.passed = self.failed = self.skipped = 0
        self.quiet = quiet

    def case(self, ok, desc, diags=()):
        self.n += 1
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        if ok and self.quiet:
            return
        if self.quiet and self.failed > 20:
            return
        for d in diags:
            print(f"# {d}")
        print(f"{'ok' if ok else 'not ok'} {self.n} {desc}")

    def skip(self, desc, why):
        self.n += 1
        self.skipped += 1
        if not self.quiet:
            print(f"ok {self.n} {desc} # SKIP {why}")


def lua_errors(tree):
    """The messages of the Lua errors anywhere in a frame (they are layers of their own)."""
    found = []
    for key, value in tree.items():
        if key.startswith("Lua Error"):
            found.append(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict):
                found.extend(lua_errors(item))
    return found


def check_frame(number, want, layers, exact):
    """(ok, description, diagnostics) for one frame."""
    errors = lua_errors(layers)
    if errors:
        return False, f"frame {number}: no Lua error", errors[:3]
    has = "metaroce" in layers
    if want["kind"] == "other":
        return not has, f"frame {number}: not MetaRoCE", [] if not has else [
            "the dissector claimed a frame that is not MetaRoCE"]
    fields, experts = {}, []
    if has:
        flatten(layers["metaroce"], fields, experts)
    opcode = want["fields"].get("metaroce.opcode", [None])[0]
    name = OPCODES.get(opcode, "malformed") if opcode is not None else "malformed"
    if not has:
        return False, f"frame {number}: {name}", ["no MetaRoCE layer"]
    if want["error"]:
        desc = f"frame {number}: malformed ({want['error']}) flagged"
        if want["error"] not in experts:
            return False, desc, [f"expert items: {experts or 'none'}"]
        if exact and set(experts) != {want["error"]}:
            return False, desc, [f"expert items: {experts}, only {want['error']} expected"]
        return True, desc, []
    diags = []
    if experts:
        diags.append(f"a valid packet flagged malformed: {experts}")
    for key in sorted(set(fields) | set(want["fields"])):
        got, exp = fields.get(key), want["fields"].get(key)
        if got != exp:
            diags.append(f"{key}: dissector {shown(got)}; expected {shown(exp)}")
    udp_len = layers.get("udp", {}).get("udp.length")
    hdr = fields.get("metaroce.hdr_len", [0])[0]
    payload = fields.get("metaroce.payload_len", [0])[0]
    if udp_len is not None and int(udp_len) - 8 != hdr + payload:
        diags.append(f"headers {hdr} + payload {payload} != UDP payload {int(udp_len) - 8}")
    desc = f"frame {number}: {name}, {len(want['fields'])} fields"
    return not diags, desc, diags[:20]


# Opcode header -> (length field, offset field), for data placed in a message.
PLACED = {"send": ("metaroce.send.length", "metaroce.send.offset"),
          "write": ("metaroce.write.length", "metaroce.write.offset"),
          "read_resp": ("metaroce.read_resp.length", "metaroce.read_resp.offset")}


def insane(fields, qpns):
    """What is implausible in the fields of one decoded frame (empty if nothing)."""
    bad = []

    def one(name):
        return fields.get(name, [None])[0]

    if one("metaroce.version") != WIRE_VERSION:
        bad.append(f"version {one('metaroce.version')}")
    for name in ("metaroce.qpn", "metaroce.ud.src_qpn"):
        qpn = one(name)
        if name in fields and not (isinstance(qpn, int) and qpns[0] <= qpn <= qpns[1]):
            bad.append(f"{name} {qpn} outside {qpns[0]}-{qpns[1]}")
    path = one("metaroce.path")
    if not isinstance(path, int) or path >= 64:
        bad.append(f"path {path}")
    payload = one("metaroce.payload_len")
    if not isinstance(payload, int) or payload > 4096:
        bad.append(f"payload_len {payload}")
    for hdr, (length, offset) in PLACED.items():
        if f"metaroce.{hdr}" in fields:
            total, at = one(length), one(offset)
            if not (isinstance(total, int) and isinstance(at, int)) or at + (payload or 0) > total:
                bad.append(f"{hdr}: offset {at} + payload {payload} > length {total}")
    if ("metaroce.read_req" in fields or "metaroce.atomic" in fields) and payload:
        bad.append(f"a request without data carries {payload} bytes")
    va = one("metaroce.atomic.va")
    if va is not None and (not isinstance(va, int) or va % 8):
        bad.append(f"atomic va {va} not 8-byte aligned")
    code = one("metaroce.nak.code")
    if code is not None and code not in (1, 2, 3):
        bad.append(f"NAK code {code}")
    # Each end of a connection draws its own tag.
    src = one("metaroce.hello.src_tag")
    if src is not None and src == one("metaroce.tag"):
        bad.append(f"HELLO names its sender's tag {src:#x} as the receiver's")
    return bad


def qpn_range(text):
    """argparse type for LO-HI."""
    try:
        lo, hi = (int(x, 0) for x in text.split("-"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not LO-HI: {text!r}") from None
    if not 0 <= lo <= hi <= 0xffffff:
        raise argparse.ArgumentTypeError(f"not a QPN range: {text!r}")
    return lo, hi


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--require-opcodes")
    ap.add_argument("--sane", metavar="QPNS", type=qpn_range)
    ap.add_argument("--label", default="")
    ap.add_argument("--aggregate", metavar="DESC",
                    help="one case DESC for all frames; only failing frames are shown")
    ap.add_argument("expect")
    ap.add_argument("tshark_json")
    args = ap.parse_args()

    expect = read_expect(args.expect)
    try:
        with open(args.tshark_json, encoding="utf-8") as f:
            packets = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"check-dissector: cannot read tshark's JSON: {e}")

    t = Ktap(quiet=bool(args.aggregate))
    print("KTAP version 1")
    if args.label:
        print(f"# {args.label}")
    extra = (1 if args.require_opcodes else 0) + (1 if args.sane else 0)
    want_cases = (1 if args.aggregate else len(expect) + 1) + extra
    print(f"1..{want_cases}")
    t.case(len(packets) == len(expect), f"tshark shows {len(packets)} frames, "
           f"expected {len(expect)}")
    seen, counts, nak_codes, wrong, checked = set(), {}, {}, [], 0
    for number in sorted(expect):
        want = expect[number]
        if want["kind"] == "skip":
            layers = packets[number - 1]["_source"]["layers"] if number <= len(packets) else {}
            errors = lua_errors(layers)
            if errors:
                t.case(False, f"frame {number}: no Lua error", errors[:3])
            else:
                t.skip(f"frame {number}", "not checkable (IP fragment or cut short)")
            continue
        layers = packets[number - 1]["_source"]["layers"] if number <= len(packets) else {}
        ok, desc, diags = check_frame(number, want, layers, args.exact)
        t.case(ok, desc, diags)
        if ok and want["kind"] == "metaroce" and not want["error"]:
            opcode = want["fields"]["metaroce.opcode"][0]
            seen.add(opcode)
            counts[opcode] = counts.get(opcode, 0) + 1
            code = want["fields"].get("metaroce.nak.code", [None])[0]
            if code is not None:
                nak_codes[code] = nak_codes.get(code, 0) + 1
            if args.sane:
                checked += 1
                wrong.extend(f"frame {number}: {b}" for b in insane(want["fields"], args.sane))
    if args.aggregate:
        kinds = {}
        for want in expect.values():
            k = "skipped" if want["kind"] == "skip" else "malformed" if want["error"] else want["kind"]
            kinds[k] = kinds.get(k, 0) + 1
        summary = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
        ok = t.failed == 0
        total = Ktap()
        total.case(ok, f"{args.aggregate}: {len(expect)} frames ({summary})",
                   [] if ok else [f"{t.failed} frames disagree (the first 20 above)"])
        t = total
    if counts:
        print("# decoded: " + ", ".join(f"{OPCODES.get(o, hex(o))} {n}"
                                        for o, n in sorted(counts.items())))
    if nak_codes:
        print("# NAK codes: " + ", ".join(f"{NAK_CODES.get(c, c)} {n}"
                                          for c, n in sorted(nak_codes.items())))
    if args.sane:
        t.case(not wrong and checked > 0, f"the fields of {checked} decoded frames are in range "
               f"(version {WIRE_VERSION}, QPN {args.sane[0]}-{args.sane[1]}, path, lengths, alignment)",
               wrong[:10] + ([f"... {len(wrong) - 10} more"] if len(wrong) > 10 else []))
    if args.require_opcodes:
        if args.require_opcodes == "all":
            need = set(OPCODES)
        else:
            need = {int(x, 16) for x in args.require_opcodes.split(",")}
        missing = sorted(need - seen)
        t.case(not missing, f"every required opcode decoded ({len(need - set(missing))} of "
               f"{len(need)})", [f"missing: {', '.join(OPCODES.get(o, hex(o)) for o in missing)}"]
               if missing else [])
    line = f"{t.passed} passed, {t.failed} failed"
    if t.skipped:
        line += f", {t.skipped} skipped"
    print(line)
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
