#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Write the recorded netlink messages of the CLI tests (tests/data/*.hex).

The attribute numbers and types come from the YAML spec, not from the C++
code under test, so the tests check the parser and the request builder
against the spec. Each file holds what one exchange puts on the wire:
datagrams separated by a line "---", every field annotated.

  gen_data.py SPEC OUTDIR          write the files
  gen_data.py --check SPEC OUTDIR  fail if a file differs from what this writes

Conventions shared with the C++ tests: the tool's socket has port id
0x1234; the family id is 0x1e and the events group 11; the family lookup
has sequence number 1 and the command 2.
"""
import os
import struct
import sys

import yaml

PORTID = 0x1234
FAMILY_ID = 0x1E
EVENTS_GROUP = 11
GENL_ID_CTRL = 0x10

NLM_F_REQUEST, NLM_F_MULTI, NLM_F_ACK = 0x1, 0x2, 0x4
NLM_F_DUMP_INTR = 0x10
NLM_F_DUMP = 0x300
NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x100, 0x200
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLA_F_NESTED = 0x8000
ERRNO = {"ENOENT": 2, "EPERM": 1, "ENODEV": 19, "EINVAL": 22, "ERANGE": 34, "EBUSY": 16,
         "EOPNOTSUPP": 95, "EEXIST": 17}

# nlctrl, from linux/genetlink.h
CTRL = {
    "family-id": (1, "u16"), "family-name": (2, "string"), "version": (3, "u32"),
    "hdrsize": (4, "u32"), "maxattr": (5, "u32"), "ops": (6, "nest"),
    "mcast-groups": (7, "nest"),
}
CTRL_OP = {"id": (1, "u32"), "flags": (2, "u32")}
CTRL_GRP = {"name": (1, "string"), "id": (2, "u32")}
# extended ACK, from linux/netlink.h
EXTACK = {"msg": (1, "string"), "offs": (2, "u32"), "policy": (4, "nest"),
          "miss-type": (5, "u32"), "miss-nest": (6, "u32")}
POLICY = {"type": (1, "u32"), "min-value-u": (4, "u64"), "max-value-u": (5, "u64"),
          "pad": (11, "pad")}
NL_ATTR_TYPE_U32 = 4


class Piece:
    def __init__(self, data, comment, depth):
        self.data, self.comment, self.depth = data, comment, depth


class Spec:
    def __init__(self, path):
        spec = yaml.safe_load(open(path))
        self.sets = {}
        for s in spec["attribute-sets"]:
            self.sets[s["name"]] = {a["name"]: (i, a["type"], a.get("nested-attributes"))
                                    for i, a in enumerate(s["attributes"])}
        self.cmds = {op["name"]: op["value"] for op in spec["operations"]["list"]}
        self.version = spec["version"]
        self.enums = {}
        for d in spec["definitions"]:
            if d["type"] == "enum":
                names = [e if isinstance(e, str) else e["name"] for e in d["entries"]]
                start = d.get("value-start", 0)
                self.enums[d["name"]] = {n: start + i for i, n in enumerate(names)}

    def table(self, set_name):
        return {k: (v[0], v[1]) for k, v in self.sets[set_name].items()}, \
               {k: v[2] for k, v in self.sets[set_name].items()}


def scalar(kind, value):
    fmt = {"u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q"}
    if kind in fmt:
        return struct.pack(fmt[kind], value)
    if kind == "string":
        return value.encode() + b"\0"
    if kind == "binary":
        return bytes(value)
    raise ValueError(kind)


def fmt_value(kind, value):
    if kind == "binary":
        return bytes(value).hex()
    if kind == "string":
        return '"%s"' % value
    return str(value)


class Encoder:
    """Attributes of one set; u64 payloads optionally 8-byte aligned with pads."""

    def __init__(self, spec, align64=False, nest_flag=True):
        self.spec, self.align64, self.nest_flag = spec, align64, nest_flag

    def attrs(self, table, nested, items, offset, depth, set_name):
        pieces = []
        for name, value in items:
            if name == "raw":  # a hand-made attribute: (type, payload, comment)
                atype, payload, comment = value
                hdr = struct.pack("<HH", 4 + len(payload), atype)
                pad = b"\0" * (-len(payload) % 4)
                pieces.append(Piece(hdr + payload + pad, comment, depth))
                offset += len(hdr + payload + pad)
                continue
            atype, kind = table[name]
            if kind == "u64" and self.align64 and (offset + 4) % 8:
                pad_type = table["pad"][0]
                pieces.append(Piece(struct.pack("<HH", 4, pad_type), "pad", depth))
                offset += 4
            if kind == "nest":
                sub = nested[name]
                if isinstance(sub, str):
                    sub_table, sub_nested = self.spec.table(sub)
                else:
                    sub_table, sub_nested, sub = sub[0], sub[1], sub[2]
                inner = self.attrs(sub_table, sub_nested, value, offset + 4, depth + 1, sub)
                length = 4 + sum(len(p.data) for p in inner)
                # nla_nest_start() sets NLA_F_NESTED; nlctrl's lists do not
                flag = NLA_F_NESTED if self.nest_flag else 0
                pieces.append(Piece(struct.pack("<HH", length, atype | flag),
                                    "%s/%s: nest, %d bytes" % (set_name, name, length), depth))
                pieces += inner
                offset += length
                continue
            payload = scalar(kind, value)
            hdr = struct.pack("<HH", 4 + len(payload), atype)
            pad = b"\0" * (-len(payload) % 4)
            pieces.append(Piece(hdr + payload + pad, "%s/%s = %s" % (set_name, name,
                                fmt_value(kind, value)), depth))
            offset += len(hdr + payload + pad)
        return pieces


def nlmsg(mtype, flags, seq, pid, body, comment):
    """body: pieces after the nlmsghdr."""
    length = 16 + sum(len(p.data) for p in body)
    hdr = struct.pack("<IHHII", length, mtype, flags, seq, pid)
    return [Piece(hdr, "nlmsghdr len %d type 0x%x flags 0x%x seq %d pid 0x%x: %s"
                  % (length, mtype, flags, seq, pid, comment), 0)] + body


def genl(spec, cmd, set_name, items, align64=False, version=None, cmd_name=None):
    table, nested = spec.table(set_name)
    cmd_no = spec.cmds[cmd] if isinstance(cmd, str) else cmd
    version = spec.version if version is None else version
    hdr = Piece(struct.pack("<BBH", cmd_no, version, 0),
                "genlmsghdr cmd %s (%d) version %d" % (cmd_name or cmd, cmd_no, version), 0)
    return [hdr] + Encoder(spec, align64).attrs(table, nested, items, 20, 1, set_name)


def family_msg(mtype, flags, seq, pid, spec, cmd, set_name, items, comment, **kw):
    return nlmsg(mtype, flags, seq, pid, genl(spec, cmd, set_name, items, **kw), comment)


def ctrl_reply(seq, version, groups):
    table = CTRL
    nested = {"ops": (CTRL_OPS_TABLE, CTRL_OPS_NESTED, "ops"),
              "mcast-groups": (GRPS_TABLE, GRPS_NESTED, "mcast-groups")}
    ops = [("op%d" % i, [("id", op), ("flags", fl)]) for i, (op, fl) in
           enumerate([(1, 0xe), (2, 0x1b), (3, 0xe), (4, 0xc)], start=1)]
    grps = [("grp%d" % i, [("name", n), ("id", gid)]) for i, (n, gid) in
            enumerate(groups, start=1)]
    items = [("family-id", FAMILY_ID), ("family-name", "metaroce"), ("version", version),
             ("hdrsize", 0), ("maxattr", 0), ("ops", ops)]
    if groups:
        items.append(("mcast-groups", grps))
    enc = Encoder(None, nest_flag=False)
    body = [Piece(struct.pack("<BBH", 1, 2, 0), "genlmsghdr cmd CTRL_CMD_NEWFAMILY version 2",
                  0)] + enc.attrs(table, nested, items, 20, 1, "ctrl")
    return nlmsg(GENL_ID_CTRL, 0, seq, PORTID, body, "family metaroce")


# nlctrl lists: nests numbered 1, 2, ... each holding one op or group.
CTRL_OPS_TABLE = {"op%d" % i: (i, "nest") for i in range(1, 10)}
CTRL_OPS_NESTED = {"op%d" % i: (CTRL_OP, {}, "op") for i in range(1, 10)}
GRPS_TABLE = {"grp%d" % i: (i, "nest") for i in range(1, 10)}
GRPS_NESTED = {"grp%d" % i: (CTRL_GRP, {}, "grp") for i in range(1, 10)}


def done(seq, error=0, extack=None, flags=NLM_F_MULTI):
    body = [Piece(struct.pack("<i", -error), "error %d" % -error, 0)]
    if extack:
        flags |= NLM_F_ACK_TLVS
        body += Encoder(None).attrs(EXTACK, {}, extack, 20, 1, "extack")
    return nlmsg(NLMSG_DONE, flags, seq, PORTID, body, "done")


def error(seq, request_pieces, err, extack=None, capped=True):
    """NLMSG_ERROR answering a request (err 0: an ACK)."""
    req = b"".join(p.data for p in request_pieces)
    flags = NLM_F_CAPPED if capped or err == 0 else 0
    body = [Piece(struct.pack("<i", -err), "error %d" % -err, 0)]
    orig = req if not (flags & NLM_F_CAPPED) else req[:16]
    body.append(Piece(orig, "the request's %s" % ("header" if len(orig) == 16 else
                                                    "header and payload"), 1))
    if extack:
        flags |= NLM_F_ACK_TLVS
        nested = {"policy": (POLICY, {}, "policy")}
        body += Encoder(None, align64=False).attrs(EXTACK, nested, extack,
                                                    20 + len(orig), 1, "extack")
    return nlmsg(NLMSG_ERROR, flags, seq, PORTID, body, "ack" if err == 0 else "error")


def offset_of(pieces, comment_start):
    off = 0
    for p in pieces:
        if p.comment.startswith(comment_start):
            return off
        off += len(p.data)
    raise KeyError(comment_start)


def write(path, datagrams, title):
    lines = ["# %s" % title, "# generated by tests/gen_data.py from the YAML spec; do not edit"]
    for i, dgram in enumerate(datagrams):
        if i:
            lines.append("---")
        for p in dgram:
            hexs = " ".join(p.data[j:j + 4].hex() for j in range(0, len(p.data), 4))
            lines.append("%s%s  # %s" % ("  " * p.depth, hexs, p.comment))
    return path, "\n".join(lines) + "\n"


def ipv4(s):
    return [int(x) for x in s.split(".")]


def ipv6(s):
    import ipaddress
    return list(ipaddress.IPv6Address(s).packed)


def scenarios(spec):
    E = spec.enums
    out = []
    F, P = FAMILY_ID, PORTID

    def req(cmd, set_name, items, flags, seq=2, comment="request"):
        return family_msg(F, flags, seq, 0, spec, cmd, set_name, items, comment)

    # --- family lookup ---------------------------------------------------
    ctrl_table = {"family-name": (2, "string")}
    ctrl_req = nlmsg(GENL_ID_CTRL, NLM_F_REQUEST | NLM_F_ACK, 1, 0,
                     [Piece(struct.pack("<BBH", 3, 1, 0),
                            "genlmsghdr cmd CTRL_CMD_GETFAMILY version 1", 0)] +
                     Encoder(None).attrs(ctrl_table, {}, [("family-name", "metaroce")], 20, 1,
                                         "ctrl"), "get family")
    out.append(write("req-ctrl-getfamily.hex", [ctrl_req], "CTRL_CMD_GETFAMILY metaroce"))
    out.append(write("ctrl-family.hex",
                     [ctrl_reply(1, 1, [("events", EVENTS_GROUP)]), error(1, ctrl_req, 0)],
                     "the family, version 1, group events = 11, then the ACK"))
    out.append(write("ctrl-family-v2.hex", [ctrl_reply(1, 2, [("events", EVENTS_GROUP)]),
                                            error(1, ctrl_req, 0)],
                     "the family at an incompatible version 2"))
    out.append(write("ctrl-family-nogroup.hex", [ctrl_reply(1, 1, []), error(1, ctrl_req, 0)],
                     "the family without multicast groups"))
    out.append(write("ctrl-enoent.hex", [error(1, ctrl_req, ERRNO["ENOENT"])],
                     "no such family: the module is not loaded"))

    # --- devices ---------------------------------------------------------
    mrc0 = [("index", 3), ("name", "mrc0"), ("netdev-ifindex", 5), ("netdev-name", "veth0"),
            ("udp-port", 4792), ("paths", 16), ("fail-after", 3), ("num-qps", 4),
            ("cc", [("enabled", 1), ("ecn", 1), ("delay", 1), ("loss", 1), ("gain-shift", 4),
                    ("ai", 1024), ("init-path-window", 16 * 1024),
                    ("init-conn-window", 64 * 1024), ("max-path-window", 256 * 1024),
                    ("max-conn-window", 4096 * 1024), ("min-window", 256),
                    ("target-delay-ns", 50000), ("loss-burst", 8)]),
            ("ingress-kbps", 0), ("ingress-active-kbps", 10000000),
            ("stats", [("entry", [("name", n), ("value", v)]) for n, v in
                       [("rx_packets", 1200), ("rx_bytes", 1234567), ("tx_packets", 1100),
                        ("tx_bytes", 1200000), ("retransmits", 7), ("path_failovers", 1)]]),
            ("num-keys", 0)]
    # mrc1 lacks fail-after and most of cc: replies may omit attributes.
    mrc1 = [("index", 4), ("name", "mrc1"), ("netdev-ifindex", 7), ("netdev-name", "eth1"),
            ("udp-port", 4792), ("paths", 4), ("num-qps", 0), ("cc", [("enabled", 0)]),
            ("ingress-kbps", 2500000), ("ingress-active-kbps", 2500000),
            ("stats", []), ("num-keys", 0),
            ("raw", (200, struct.pack("<I", 7), "an attribute from the future (200): ignored"))]
    dump = NLM_F_REQUEST | NLM_F_DUMP
    do = NLM_F_REQUEST | NLM_F_ACK
    dev_dump_req = req("dev-get", "dev", [], dump, comment="dump devices")
    out.append(write("req-dev-dump.hex", [dev_dump_req], "DEV_GET dump"))
    out.append(write("dev-dump.hex",
                     [family_msg(F, NLM_F_MULTI, 2, P, spec, "dev-get", "dev", mrc0, "mrc0"),
                      family_msg(F, NLM_F_MULTI, 2, P, spec, "dev-get", "dev", mrc1, "mrc1",
                                 align64=True) + done(2)],
                     "two devices over two datagrams; the second with 64-bit pads"))
    dev_get_req = req("dev-get", "dev", [("name", "mrc0")], do, comment="get mrc0")
    out.append(write("req-dev-get.hex", [dev_get_req], "DEV_GET mrc0"))
    out.append(write("dev-get.hex", [family_msg(F, 0, 2, P, spec, "dev-get", "dev", mrc0,
                                                "mrc0"), error(2, dev_get_req, 0)],
                     "mrc0, then the ACK"))
    dev_get9 = req("dev-get", "dev", [("name", "mrc9")], do, comment="get mrc9")
    out.append(write("req-dev-get-mrc9.hex", [dev_get9], "DEV_GET mrc9"))
    out.append(write("err-enodev.hex",
                     [error(2, dev_get9, ERRNO["ENODEV"],
                            [("msg", "no metaroce device of that name in this namespace")])],
                     "ENODEV with an extack message"))
    out.append(write("dev-dump-intr.hex",
                     [family_msg(F, NLM_F_MULTI | NLM_F_DUMP_INTR, 2, P, spec, "dev-get",
                                 "dev", mrc1, "mrc1, interrupted") + done(2)],
                     "a dump marked inconsistent"))

    set_paths = req("dev-set", "dev", [("name", "mrc0"), ("paths", 48)], do,
                    comment="set mrc0 paths 48")
    out.append(write("req-dev-set-paths.hex", [set_paths], "DEV_SET mrc0 paths 48"))
    out.append(write("dev-set-ack.hex", [error(2, set_paths, 0)], "ACK"))
    off = offset_of(set_paths, "dev/paths")
    out.append(write("err-range.hex",
                     [error(2, set_paths, ERRNO["ERANGE"],
                            [("msg", "integer out of range"), ("offs", off),
                             ("policy", [("type", NL_ATTR_TYPE_U32), ("min-value-u", 1),
                                         ("max-value-u", 32)])])],
                     "ERANGE for paths (offset %d), policy range 1-32" % off))
    out.append(write("err-range-uncapped.hex",
                     [error(2, set_paths, ERRNO["ERANGE"],
                            [("msg", "integer out of range"), ("offs", off)], capped=False)],
                     "ERANGE without NETLINK_CAP_ACK: the request is echoed whole"))
    out.append(write("err-eperm.hex", [error(2, set_paths, ERRNO["EPERM"])],
                     "EPERM, no extack (genetlink's capability check)"))
    set_port = req("dev-set", "dev", [("name", "mrc0"), ("udp-port", 4793)], do,
                   comment="set mrc0 udp-port 4793")
    out.append(write("req-dev-set-port.hex", [set_port], "DEV_SET mrc0 udp-port 4793"))
    out.append(write("err-ebusy.hex",
                     [error(2, set_port, ERRNO["EBUSY"],
                            [("msg", "the UDP port cannot change while the device has QPs"),
                             ("offs", offset_of(set_port, "dev/udp-port"))])],
                     "EBUSY for udp-port"))
    set_all = req("dev-set", "dev",
                  [("name", "mrc0"), ("udp-port", 4793), ("paths", 8), ("fail-after", 4),
                   ("cc", [("enabled", 1), ("ecn", 1), ("delay", 0), ("loss", 1),
                           ("gain-shift", 5), ("ai", 512), ("init-path-window", 8192),
                           ("init-conn-window", 32768), ("max-path-window", 131072),
                           ("max-conn-window", 1048576), ("min-window", 256),
                           ("target-delay-ns", 25000), ("loss-burst", 4)]),
                   ("ingress-kbps", 12500)], do, comment="set mrc0, everything")
    out.append(write("req-dev-set-all.hex", [set_all], "DEV_SET mrc0 with every setting"))
    set_cc_off = req("dev-set", "dev", [("name", "mrc0"), ("cc", [("enabled", 0)]),
                                        ("ingress-kbps", 0)], do, comment="set mrc0 cc off")
    out.append(write("req-dev-set-cc-off.hex", [set_cc_off], "DEV_SET mrc0 cc off, ingress auto"))
    out.append(write("err-einval-cc.hex",
                     [error(2, set_cc_off, ERRNO["EINVAL"],
                            [("msg", "min-window is above init-path-window"),
                             ("offs", offset_of(set_cc_off, "dev/cc"))])],
                     "EINVAL with a message and the cc nest's offset"))
    out.append(write("err-eopnotsupp.hex",
                     [error(2, set_cc_off, ERRNO["EOPNOTSUPP"],
                            [("msg", "congestion control is not built in")])],
                     "EOPNOTSUPP with a message"))

    # --- QPs -------------------------------------------------------------
    qp_type, qp_state, hs = E["qp-type"], E["qp-state"], E["qp-handshake"]
    head = [("dev-index", 3), ("dev-name", "mrc0")]
    # The connection tags go to CAP_NET_ADMIN callers only (unprivileged below).
    tags17 = [("local-tag", 0x0123456789ABCDEF), ("peer-tag", 0xFEDCBA9876543210)]
    tags19 = [("local-tag", 0x00000000DEADBEEF), ("peer-tag", 0)]
    qp1 = head + [("num", 1), ("type", qp_type["gsi"]), ("state", qp_state["rts"])]

    def qp17_with(tags):
        return head + [("num", 17), ("type", qp_type["rc"]), ("state", qp_state["rts"]),
                       ("peer-num", 18), ("local-ipv4", ipv4("10.0.0.1")),
                       ("peer-ipv4", ipv4("10.0.0.2")), ("handshake", hs["done"])] + tags + \
            qp17_tail

    qp17_tail = [("paths", 4), ("mtu", 1024),
                   ("conn-window", 256 * 1024 + 512), ("inflight", 37),
                   ("pacing-kbps", 12500), ("rate-hint-kbps", 10000000), ("alpha", 4096),
                   ("srtt-ns", 45200),
                   ("stats", [("tx-packets", 100000), ("tx-bytes", 102400000),
                              ("rx-packets", 50000), ("rx-bytes", 1600000),
                              ("retransmits", 12), ("sack-gaps", 9), ("rto-events", 2),
                              ("tail-probes", 3), ("path-failovers", 1), ("duplicates", 4),
                              ("rnr-naks", 0), ("ce-marks", 250), ("cc-decreases", 6),
                              ("hint-limited", 40)])]
    qp17 = qp17_with(tags17)

    def qp19_with(tags):
        return head + [("num", 19), ("type", qp_type["uc"]), ("state", qp_state["rtr"]),
                       ("peer-num", 20), ("local-ipv6", ipv6("fd00::1")),
                       ("peer-ipv6", ipv6("fd00::2")), ("handshake", hs["waiting"])] + tags + \
            [("paths", 4), ("mtu", 4096), ("conn-window", 64 * 1024), ("inflight", 0),
             ("pacing-kbps", 0), ("rate-hint-kbps", 0), ("alpha", 0),
             ("stats", [("tx-packets", 0), ("retransmits", 0)])]

    qp19 = qp19_with(tags19)
    qp21 = head + [("num", 21), ("type", qp_type["ud"]), ("state", qp_state["rts"])]
    # Before RTR: no tag, so none even for CAP_NET_ADMIN; and a state from the future.
    qp23 = head + [("num", 23), ("type", qp_type["rc"]), ("state", qp_state["init"]),
                   ("handshake", hs["none"])]
    qp25 = head + [("num", 25), ("type", qp_type["rc"]), ("state", qp_state["rts"]),
                   ("handshake", 200)] + tags17
    qp_dump_req = req("qp-get", "qp", [], dump, comment="dump QPs")
    out.append(write("req-qp-dump.hex", [qp_dump_req], "QP_GET dump, every device"))
    out.append(write("qp-dump.hex",
                     [family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp1, "qp 1") +
                      family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp17, "qp 17",
                                 align64=True) +
                      family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp19, "qp 19") +
                      family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp21, "qp 21") +
                      done(2)],
                     "four QPs of mrc0 in one datagram"))
    out.append(write("qp-dump-unprivileged.hex",
                     [family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp1, "qp 1") +
                      family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp17_with([]),
                                 "qp 17 without its tags", align64=True) +
                      family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp19_with([]),
                                 "qp 19 without its tags"),
                      family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp23, "qp 23") +
                      done(2)],
                     "QPs as a caller without CAP_NET_ADMIN sees them: no tags"))
    out.append(write("qp-dump-handshakes.hex",
                     [family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp23, "qp 23") +
                      family_msg(F, NLM_F_MULTI, 2, P, spec, "qp-get", "qp", qp25,
                                 "qp 25, handshake state from the future", align64=True) +
                      done(2)],
                     "a QP before RTR, and a handshake state this tool does not know"))
    qp_dump_dev = req("qp-get", "qp", [("dev-name", "mrc0")], dump, comment="dump mrc0's QPs")
    out.append(write("req-qp-dump-dev.hex", [qp_dump_dev], "QP_GET dump, dev mrc0"))
    qp_dump_num = req("qp-get", "qp", [("num", 17)], dump, comment="dump QP 17 of any device")
    out.append(write("req-qp-dump-num.hex", [qp_dump_num], "QP_GET dump, qpn 17"))
    qp_get = req("qp-get", "qp", [("dev-name", "mrc0"), ("num", 17)], do, comment="get qp 17")
    out.append(write("req-qp-get.hex", [qp_get], "QP_GET mrc0 17"))
    out.append(write("qp-get.hex", [family_msg(F, 0, 2, P, spec, "qp-get", "qp", qp17, "qp 17"),
                                    error(2, qp_get, 0)], "QP 17, then the ACK"))
    qp_get99 = req("qp-get", "qp", [("dev-name", "mrc0"), ("num", 99)], do, comment="get qp 99")
    out.append(write("req-qp-get-99.hex", [qp_get99], "QP_GET mrc0 99"))
    out.append(write("err-enoent-qp.hex",
                     [error(2, qp_get99, ERRNO["ENOENT"], [("msg", "no such QP")])],
                     "ENOENT for QP 99"))
    out.append(write("qp-dump-empty.hex", [done(2)], "an empty dump"))

    # --- paths -----------------------------------------------------------
    ps = E["path-state"]
    phead = [("dev-index", 3), ("dev-name", "mrc0"), ("qpn", 17)]

    def path(pid, sport, epoch, state, srtt, rttvar, rto, base, window, inflight, alpha,
             consec, stats):
        items = phead + [("id", pid), ("sport", sport), ("epoch", epoch), ("state", ps[state])]
        if srtt is not None:
            items += [("srtt-ns", srtt), ("rttvar-ns", rttvar)]
        items += [("rto-ns", rto)]
        if base is not None:
            items += [("base-rtt-ns", base)]
        items += [("window", window), ("inflight", inflight), ("alpha", alpha),
                  ("consec-rtos", consec)]
        names = ["tx-packets", "retransmits", "sack-gaps", "rto-events", "tail-probes",
                 "ce-marks"]
        items += [("stats", list(zip(names, stats)))]
        return items

    paths = [
        path(0, 49213, 0, "active", 45200, 12100, 10000000, 40000, 16384, 12, 0, 0,
             [25000, 3, 2, 0, 1, 0]),
        path(1, 50122, 1, "active", 52000, 8000, 10000000, 41000, 8704, 8, 16384, 0,
             [24000, 5, 4, 1, 1, 200]),
        path(2, 61007, 2, "failed", 1500000, 600000, 40000000, 42000, 1024, 0, 65536, 3,
             [1200, 4, 1, 3, 0, 0]),
        path(3, 55555, 0, "active", None, None, 20000000, None, 256, 0, 0, 0,
             [0, 0, 0, 0, 0, 0]),
    ]
    path_req = req("path-get", "path", [("dev-name", "mrc0"), ("qpn", 17)], dump,
                   comment="dump paths of qp 17")
    out.append(write("req-path-dump.hex", [path_req], "PATH_GET dump mrc0 17"))
    out.append(write("path-dump.hex",
                     [sum((family_msg(F, NLM_F_MULTI, 2, P, spec, "path-get", "path", p,
                                      "path %d" % i, align64=(i == 1))
                           for i, p in enumerate(paths[:2])), []),
                      sum((family_msg(F, NLM_F_MULTI, 2, P, spec, "path-get", "path", p,
                                      "path %d" % (i + 2)) for i, p in enumerate(paths[2:])),
                          []) + done(2)],
                     "four paths of QP 17 over two datagrams"))
    path_req_id = req("path-get", "path", [("dev-name", "mrc0"), ("qpn", 17), ("id", 2)], dump,
                      comment="dump path 2 of qp 17")
    out.append(write("req-path-dump-id.hex", [path_req_id], "PATH_GET dump mrc0 17 path 2"))
    out.append(write("err-done-einval.hex",
                     [done(2, ERRNO["EINVAL"], [("msg", "QP 17 changed during the dump")])],
                     "a dump that fails at its end: NLMSG_DONE with an error and a message"))
    out.append(write("err-missing.hex",
                     [error(2, path_req, ERRNO["EINVAL"],
                            [("msg", "missing attribute"), ("miss-type", 4)])],
                     "EINVAL: attribute 4 (qpn) missing"))

    # --- planes ----------------------------------------------------------
    pst = E["plane-state"]

    def plane(dev, pid, netdev, ifindex, state, paths, stats, retry=None):
        items = [("dev-index", 3), ("dev-name", dev), ("id", pid), ("netdev-ifindex", ifindex),
                 ("netdev-name", netdev), ("state", pst[state]), ("paths", paths)]
        if retry is not None:
            items += [("retry-ns", retry)]
        names = ["tx_packets", "tx_bytes", "rx_packets", "rx_bytes", "ce_marks", "downs"]
        return items + [("stats", [("entry", [("name", n), ("value", v)])
                                   for n, v in zip(names, stats)])]

    planes = [
        plane("mrp0", 0, "p0", 7, "up", 8, [190326, 271000000, 96012, 5000000, 3, 0]),
        plane("mrp0", 1, "p1", 8, "timed-out", 0, [48211, 68000000, 24010, 1000000, 0, 1],
              retry=180000000),
    ]
    plane_req = req("plane-get", "plane", [("dev-name", "mrp0")], dump,
                    comment="dump planes of mrp0")
    out.append(write("req-plane-dump.hex", [plane_req], "PLANE_GET dump mrp0"))
    out.append(write("plane-dump.hex",
                     [sum((family_msg(F, NLM_F_MULTI, 2, P, spec, "plane-get", "plane", p,
                                      "plane %d" % i, align64=(i == 1))
                           for i, p in enumerate(planes)), []) + done(2)],
                     "two planes of mrp0"))
    plane_add = req("plane-add", "plane", [("dev-name", "mrp0"), ("netdev-name", "p2")], do,
                    comment="add plane p2")
    out.append(write("req-plane-add.hex", [plane_add], "PLANE_ADD mrp0 p2"))
    out.append(write("err-eexist-plane.hex",
                     [error(2, plane_add, ERRNO["EEXIST"],
                            [("msg", "the netdev is a plane of the device already")])],
                     "EEXIST for a plane already there"))
    plane_del = req("plane-del", "plane", [("dev-name", "mrp0"), ("netdev-name", "p2")], do,
                    comment="delete plane p2")
    out.append(write("req-plane-del.hex", [plane_del], "PLANE_DEL mrp0 p2"))
    out.append(write("plane-del-ack.hex", [error(2, plane_del, 0)], "the ACK"))

    # --- malformed replies ------------------------------------------------
    bad = family_msg(F, NLM_F_MULTI, 2, P, spec, "dev-get", "dev",
                     [("index", 3), ("name", "mrc0"),
                      ("raw", (spec.sets["dev"]["paths"][0], b"\x10\x00",
                               "dev/paths with 2 bytes instead of 4"))], "bad length")
    out.append(write("bad-attr-len.hex", [bad + done(2)], "a u32 attribute of 2 bytes"))
    bad_str = family_msg(F, NLM_F_MULTI, 2, P, spec, "dev-get", "dev",
                         [("index", 3),
                          ("raw", (spec.sets["dev"]["name"][0], b"mrc0",
                                   "dev/name without its NUL"))], "bad string")
    out.append(write("bad-string.hex", [bad_str + done(2)], "a string without NUL"))
    trunc = family_msg(F, NLM_F_MULTI, 2, P, spec, "dev-get", "dev", mrc1, "mrc1")
    data = b"".join(p.data for p in trunc)
    out.append(write("bad-truncated.hex", [[Piece(data[:40], "the first 40 bytes of a %d-byte "
                                                  "message" % len(data), 0)]],
                     "a datagram that ends inside a message"))
    out.append(write("bad-seq.hex",
                     [family_msg(F, NLM_F_MULTI, 7, P, spec, "dev-get", "dev", mrc1,
                                 "mrc1 with sequence number 7") + done(2)],
                     "a reply to another request"))

    # --- events ----------------------------------------------------------
    ev = E["qp-error-reason"]
    events = [
        family_msg(F, 0, 0, 0, spec, "path-failover-ntf", "event",
                   [("dev-index", 3), ("dev-name", "mrc0"), ("qpn", 17), ("path-id", 2),
                    ("old-epoch", 1), ("new-epoch", 2), ("old-sport", 50333),
                    ("new-sport", 61007), ("moved", 5)], "path failover"),
        family_msg(F, 0, 0, 0, spec, "qp-error-ntf", "event",
                   [("dev-index", 3), ("dev-name", "mrc0"), ("qpn", 19),
                    ("reason", ev["retry-exceeded"])], "qp error"),
    ]
    events2 = [
        family_msg(F, 0, 0, 0, spec, "dev-change-ntf", "dev",
                   [a if a[0] != "paths" else ("paths", 8) for a in mrc1], "dev change"),
        family_msg(F, 0, 0, 0, spec, "plane-down-ntf", "event",
                   [("dev-index", 3), ("dev-name", "mrc0"), ("plane", 1),
                    ("plane-netdev", "p1"), ("plane-reason", E["plane-reason"]["timeout"])],
                   "plane down"),
        family_msg(F, 0, 0, 0, spec, 42, "event", [("dev-index", 3), ("dev-name", "mrc0")],
                   "a command from the future (42): ignored", cmd_name="unknown"),
        nlmsg(GENL_ID_CTRL, 0, 0, 0, [Piece(struct.pack("<BBH", 7, 2, 0),
                                            "genlmsghdr CTRL_CMD_NEWMCAST_GRP", 0)],
              "another family's event: ignored"),
        family_msg(F, 0, 0, 0, spec, "qp-error-ntf", "event",
                   [("dev-index", 4), ("dev-name", "mrc1"), ("qpn", 33), ("reason", 200)],
                   "qp error, reason from the future"),
    ]
    out.append(write("events.hex", [sum(events, []), sum(events2, [])],
                     "events in two datagrams"))
    return out


def spec_table(spec_path):
    """Every attribute of every set, for the C++ tables' test."""
    spec = yaml.safe_load(open(spec_path))
    lines = ["# set number name type [nested set]: the attribute sets of the spec",
             "# generated by tests/gen_data.py from the YAML spec; do not edit"]
    for s in spec["attribute-sets"]:
        for i, a in enumerate(s["attributes"]):
            if a["type"] == "unused":
                continue
            extra = " " + a["nested-attributes"] if a["type"] == "nest" else ""
            lines.append("%s %d %s %s%s" % (s["name"], i, a["name"], a["type"], extra))
    return "spec-attrs.txt", "\n".join(lines) + "\n"


def main():
    args = sys.argv[1:]
    check = args and args[0] == "--check"
    if check:
        args = args[1:]
    spec = Spec(args[0])
    outdir = args[1]
    files = scenarios(spec) + [spec_table(args[0])]
    bad = 0
    for name, text in files:
        path = os.path.join(outdir, name)
        if check:
            try:
                same = open(path).read() == text
            except FileNotFoundError:
                same = False
            if not same:
                print("gen_data: %s is not what gen_data.py writes" % path)
                bad += 1
        else:
            with open(path, "w") as f:
                f.write(text)
    known = {n for n, _ in files}
    for name in sorted(os.listdir(outdir)):
        if (name.endswith(".hex") or name.endswith(".txt")) and name not in known:
            print("gen_data: %s is written by nobody" % os.path.join(outdir, name))
            bad += 1
    if check and not bad:
        print("gen_data: %d recorded files match the spec" % len(files))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
