#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""Send hand-built requests to the metaroce generic netlink family.

    genl_raw.py CASE...

Prints "CASE ERRNO" per case: the error the kernel answered with (0 for
an ACK). Malformed messages the metaroce tool never sends, so that the
kernel's own validation is what answers (tests/39-netlink.sh).
"""
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2
CTRL_CMD_GETFAMILY, CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 3, 1, 2
DEV_GET, DEV_SET = 1, 2
A_DEV_INDEX, A_DEV_NAME, A_DEV_NETDEV_IFINDEX, A_DEV_PATHS = 2, 3, 4, 7


def attr(kind, payload):
    hdr = struct.pack("=HH", 4 + len(payload), kind)
    return hdr + payload + b"\0" * (-len(payload) % 4)


def name(dev):
    return attr(A_DEV_NAME, dev.encode() + b"\0")


def request(sock, family, cmd, attrs, seq):
    body = struct.pack("=BBH", cmd, 1, 0) + attrs
    msg = struct.pack("=IHHII", 16 + len(body), family,
                      NLM_F_REQUEST | NLM_F_ACK, seq, 0) + body
    sock.send(msg)
    while True:
        data = sock.recv(65536)
        off = 0
        while off + 16 <= len(data):
            length, kind, _, rseq, _ = struct.unpack_from("=IHHII", data, off)
            if kind == NLMSG_ERROR and rseq == seq:
                return data, off, -struct.unpack_from("=i", data, off + 16)[0]
            off += (length + 3) & ~3


def family_id(sock):
    body = struct.pack("=BBH", CTRL_CMD_GETFAMILY, 1, 0) + \
        attr(CTRL_ATTR_FAMILY_NAME, b"metaroce\0")
    sock.send(struct.pack("=IHHII", 16 + len(body), GENL_ID_CTRL,
                          NLM_F_REQUEST, 1, 0) + body)
    data = sock.recv(65536)
    length, kind = struct.unpack_from("=IH", data, 0)
    if kind == NLMSG_ERROR:
        sys.exit("no metaroce family: errno %d" %
                 -struct.unpack_from("=i", data, 16)[0])
    off = 20
    while off + 4 <= length:
        alen, akind = struct.unpack_from("=HH", data, off)
        if akind == CTRL_ATTR_FAMILY_ID:
            return struct.unpack_from("=H", data, off + 4)[0]
        off += (alen + 3) & ~3
    sys.exit("no family id in the reply")


CASES = {
    # value out of its policy's range
    "paths-range": (DEV_SET, name("mrc0") + attr(A_DEV_PATHS, struct.pack("=I", 100))),
    # a string longer than its policy's 63 characters
    "name-long": (DEV_GET, attr(A_DEV_NAME, b"a" * 80 + b"\0")),
    # a u32 of two bytes
    "index-short": (DEV_GET, attr(A_DEV_INDEX, b"\1\0")),
    # an attribute type the family does not know
    "unknown-attr": (DEV_GET, name("mrc0") + attr(200, b"\0\0\0\0")),
    # a read-only attribute in DEV_SET
    "read-only": (DEV_SET, name("mrc0") + attr(A_DEV_NETDEV_IFINDEX, struct.pack("=I", 1))),
    # an attribute whose length runs past the message
    "truncated": (DEV_GET, struct.pack("=HH", 64, A_DEV_NAME) + b"mrc0"),
    # no device named at all
    "no-selector": (DEV_GET, b""),
}


def main():
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    sock.bind((0, 0))
    fam = family_id(sock)
    for seq, case in enumerate(sys.argv[1:], start=10):
        cmd, attrs = CASES[case]
        print(case, request(sock, fam, cmd, attrs, seq)[2])
    sock.close()


if __name__ == "__main__":
    main()
