-- SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
--
-- MetaRoCE dissector for Wireshark and tshark (4.0 and later, Lua 5.2).
--
-- Decodes the MetaRoCE wire format, Documentation/metaroce/protocol.rst,
-- on UDP port 4792 (preference metaroce.udp_port; "Decode As" works too):
-- the base header with its connection tag, every opcode header, the ACK's
-- SACK map with the PSNs it reports, NAK codes, the HELLO handshake's tags,
-- flags and the payload. A packet that the kernel's codec
-- (kernel/proto/wire.c) would drop carries an expert item named after the
-- check that fails (metaroce.malformed.trunc, .version, .opcode, .flags,
-- .reserved, .field, .length: enum mr_err in kernel/proto/types.h).
--
-- Install: `make -C userspace/wireshark install-user` (this user) or
-- `make install` (system-wide), or run `tshark -X lua_script:metaroce.lua`.
--
-- Everything about the format is in the tables below, which mirror wire.c's:
-- `fields` names every field once, `layouts` lists the fields of each
-- header in wire order, and `versions` gives each wire version its base
-- header, opcodes and checks. A new version adds an entry to `versions`
-- (and its new fields and layouts); the dissection code does not change.
-- Only the version the codec speaks is decoded: a version 1 packet (before
-- connection tags) is flagged as unknown, as the kernel drops it.

-- A second copy (per-user and system-wide, or -X besides an installed one)
-- finds the protocol registered by the first and leaves it be.
local registered, metaroce = pcall(Proto, "metaroce", "MetaRoCE")
if not registered then
    return
end

local DEFAULT_PORT = 4792

-- Base header flags (wire.h) and the sets each opcode may carry.
local FLAG_ACK_REQ = 0x01
local FLAG_SOLICITED = 0x02
local FLAG_WINDOW_LIMITED = 0x08
local SEQ_FLAGS = FLAG_ACK_REQ + FLAG_WINDOW_LIMITED
local RECV_FLAGS = SEQ_FLAGS + FLAG_SOLICITED

-- HELLO flags (wire.h).
local HELLO_KNOWN = 0x1
local HELLO_REPLY = 0x2

local MAX_PATHS = 64
local QPN_MAX = 0xffffff
local MAX_MSG_LEN = 0x80000000
local MAX_PAYLOAD = 4096
local SACK_BITS = 256
local ATOMIC_LEN = 8

local nak_codes = {[1] = "REMOTE_ACCESS", [2] = "INVALID_REQUEST", [3] = "RNR"}

------------------------------------------------------------------------
-- Fields: every filterable name, as struct mr_pkt names its members.

-- The ProtoFields are made once the versions table below has named the
-- opcodes: Wireshark copies a value-string table when it makes a field.
local fields = {}
local field_specs = {}
local function field(...)
    field_specs[#field_specs + 1] = table.pack(...)
end
local function make_field(name, kind, label, base_, strings, mask, blurb)
    local abbrev = "metaroce." .. name
    if kind == "none" then
        fields[name] = ProtoField.none(abbrev, label, base.NONE, blurb)
    elseif kind == "bytes" then
        fields[name] = ProtoField.bytes(abbrev, label, base.NONE, blurb)
    elseif kind == "bool" then -- base_: the width of the field the flag is in
        fields[name] = ProtoField.bool(abbrev, label, base_ or 8, nil, mask, blurb)
    else
        fields[name] = ProtoField[kind](abbrev, label, base_ or base.DEC, strings, mask, blurb)
    end
end
local DEC, HEX = base.DEC, base.HEX

local opcode_names = {} -- filled from the versions table below

field("version", "uint8", "Version", DEC)
field("opcode", "uint8", "Opcode", HEX, opcode_names)
field("flags", "uint8", "Flags", HEX)
field("flags.ack_req", "bool", "ACK_REQ", nil, nil, FLAG_ACK_REQ, "Acknowledge this path now")
field("flags.solicited", "bool", "SOLICITED", nil, nil, FLAG_SOLICITED,
      "The receive completion is solicited")
field("flags.window_limited", "bool", "WINDOW_LIMITED", nil, nil, FLAG_WINDOW_LIMITED,
      "The sender's windows, well below the rate hint, held it back")
field("flags.reserved", "uint8", "Reserved flags", HEX, nil, 0xf4)
field("path", "uint8", "Path", DEC, nil, nil, "Path id, 0-63")
field("order", "uint8", "Order", DEC, nil, nil,
      "Requests: the message it completes after is order + 1 before it; 127-255: none")
field("qpn", "uint24", "Destination QPN", HEX)
field("psn", "uint32", "PSN", DEC, nil, nil, "Path sequence number")
field("epoch", "uint16", "Epoch", DEC, nil, nil, "Path epoch")
field("stream", "uint16", "Stream", DEC, nil, nil, "Requests: the message's stream")
field("tag", "uint64", "Connection tag", HEX, nil, nil,
      "The receiving QP's tag, learned in the HELLO handshake; 0 in UD and early HELLOs")

field("send", "none", "SEND header")
field("send.msn", "uint32", "MSN", DEC)
field("send.rsn", "uint32", "RSN", DEC)
field("send.length", "uint32", "Message length", DEC)
field("send.offset", "uint32", "Offset", DEC)
field("send.imm", "uint32", "Immediate data", HEX)
field("send.inv_rkey", "uint32", "Invalidated rkey", HEX)

field("write", "none", "WRITE header")
field("write.msn", "uint32", "MSN", DEC)
field("write.rkey", "uint32", "rkey", HEX)
field("write.va", "uint64", "Virtual address", HEX)
field("write.length", "uint32", "Message length", DEC)
field("write.offset", "uint32", "Offset", DEC)
field("write.rsn", "uint32", "RSN", DEC)
field("write.imm", "uint32", "Immediate data", HEX)

field("read_req", "none", "READ request header")
field("read_req.msn", "uint32", "MSN", DEC)
field("read_req.rkey", "uint32", "rkey", HEX)
field("read_req.va", "uint64", "Virtual address", HEX)
field("read_req.length", "uint32", "Length", DEC)

field("atomic", "none", "Atomic header")
field("atomic.msn", "uint32", "MSN", DEC)
field("atomic.rkey", "uint32", "rkey", HEX)
field("atomic.va", "uint64", "Virtual address", HEX)
field("atomic.swap_add", "uint64", "Swap or add value", HEX)
field("atomic.compare", "uint64", "Compare value", HEX)

field("read_resp", "none", "READ response header")
field("read_resp.msn", "uint32", "MSN", DEC, nil, nil, "The READ request answered")
field("read_resp.length", "uint32", "READ length", DEC)
field("read_resp.offset", "uint32", "Offset", DEC)

field("atomic_resp", "none", "Atomic response header")
field("atomic_resp.msn", "uint32", "MSN", DEC, nil, nil, "The atomic request answered")
field("atomic_resp.orig", "uint64", "Original value", HEX)

field("ack", "none", "ACK header")
field("ack.cum_psn", "uint32", "Cumulative PSN", DEC, nil, nil,
      "Every PSN before this one has arrived")
field("ack.sack_map", "bytes", "SACK map")
field("ack.sack_word", "uint64", "SACK word", HEX)
field("ack.sack_count", "uint32", "PSNs SACKed", DEC)
field("ack.sack", "uint32", "SACKed PSN", DEC, nil, nil, "A PSN the SACK map reports as arrived")
field("ack.missing", "uint32", "Missing PSN", DEC, nil, nil,
      "A PSN below the last SACKed one that has not arrived")
field("ack.msn_done", "uint32", "MSN done", DEC, nil, nil,
      "Every request before this MSN has completed")
field("ack.ecn_count", "uint32", "ECN count", DEC)
field("ack.rate_hint", "uint32", "Rate hint", DEC)

field("nak", "none", "NAK header")
field("nak.msn", "uint32", "MSN", DEC, nil, nil, "The refused request")
field("nak.code", "uint8", "Code", DEC, nak_codes)
field("nak.reserved", "uint8", "Reserved", HEX)
field("nak.rnr_delay", "uint16", "RNR delay (10 us units)", DEC)

field("ud", "none", "Datagram header")
field("ud.src_qpn", "uint32", "Source QPN", HEX)
field("ud.qkey", "uint32", "Q_Key", HEX)
field("ud.imm", "uint32", "Immediate data", HEX)

field("hello", "none", "HELLO header")
field("hello.src_tag", "uint64", "Sender's tag", HEX, nil, nil,
      "The tag the sender's peer must put in what it sends")
field("hello.flags", "uint32", "HELLO flags", HEX)
field("hello.flags.known", "bool", "KNOWN", 32, nil, HELLO_KNOWN,
      "The sender holds the receiver's tag (the base header's)")
field("hello.flags.reply", "bool", "REPLY", 32, nil, HELLO_REPLY,
      "An answer to a HELLO: not answered")
field("hello.rate_hint", "uint32", "Rate hint", DEC, nil, nil,
      "The sender's first share for the receiver, kbit/s; 0: none")

field("hdr_len", "uint32", "Header length", DEC)
field("payload_len", "uint32", "Payload length", DEC)
field("payload", "bytes", "Payload")

------------------------------------------------------------------------
-- Layouts: the fields of each header in wire order, { offset, size, name }
-- (offsets within the header), as wire.c's mr_*_fields tables. A header
-- shows the fields that fit in its opcode's length, as in wire.c: SEND
-- stops before imm, WRITE before rsn, FETCH_ADD before compare.
-- `reserved` fields must be zero, `request` ones too but in requests
-- (opcodes 0x01-0x08); `max` is the largest value allowed.

local layouts = {
    base_v2 = {
        {0, 1, "version"}, {1, 1, "opcode"}, {2, 1, "flags"},
        {3, 1, "path", max = MAX_PATHS - 1}, {4, 1, "order", request = true},
        {5, 3, "qpn"}, {8, 4, "psn"}, {12, 2, "epoch"},
        {14, 2, "stream", request = true}, {16, 8, "tag"},
    },
    send = {
        {0, 4, "send.msn"}, {4, 4, "send.rsn"}, {8, 4, "send.length"},
        {12, 4, "send.offset"}, {16, 4, "send.imm"},
    },
    send_inv = {
        {0, 4, "send.msn"}, {4, 4, "send.rsn"}, {8, 4, "send.length"},
        {12, 4, "send.offset"}, {16, 4, "send.inv_rkey"},
    },
    write = {
        {0, 4, "write.msn"}, {4, 4, "write.rkey"}, {8, 8, "write.va"},
        {16, 4, "write.length"}, {20, 4, "write.offset"}, {24, 4, "write.rsn"},
        {28, 4, "write.imm"},
    },
    read_req = {
        {0, 4, "read_req.msn"}, {4, 4, "read_req.rkey"}, {8, 8, "read_req.va"},
        {16, 4, "read_req.length"},
    },
    atomic = {
        {0, 4, "atomic.msn"}, {4, 4, "atomic.rkey"}, {8, 8, "atomic.va"},
        {16, 8, "atomic.swap_add"}, {24, 8, "atomic.compare"},
    },
    read_resp = {{0, 4, "read_resp.msn"}, {4, 4, "read_resp.length"}, {8, 4, "read_resp.offset"}},
    atomic_resp = {{0, 4, "atomic_resp.msn"}, {4, 8, "atomic_resp.orig"}},
    ack = {
        {0, 4, "ack.cum_psn"}, {4, 32, "ack.sack_map", sack = true},
        {36, 4, "ack.msn_done"}, {40, 4, "ack.ecn_count"}, {44, 4, "ack.rate_hint"},
    },
    nak = {
        {0, 4, "nak.msn"}, {4, 1, "nak.code"}, {5, 1, "nak.reserved", reserved = true},
        {6, 2, "nak.rnr_delay"},
    },
    ud = {{0, 4, "ud.src_qpn"}, {4, 4, "ud.qkey"}, {8, 4, "ud.imm"}},
    hello = {{0, 8, "hello.src_tag"}, {8, 4, "hello.flags"}, {12, 4, "hello.rate_hint"}},
}

------------------------------------------------------------------------
-- Expert items, one per check of the codec (enum mr_err).

local experts = {}
local function malformed(name, text)
    experts[name] = ProtoExpert.new("metaroce.malformed." .. name, text,
                                    expert.group.MALFORMED, expert.severity.ERROR)
end
malformed("trunc", "Truncated: the packet ends before its headers do")
malformed("version", "Unknown MetaRoCE version")
malformed("opcode", "Unknown opcode")
malformed("flags", "Flag not allowed on this opcode")
malformed("reserved", "Reserved field is not zero")
malformed("field", "Field holds a value it may not hold")
malformed("length", "Payload and length fields disagree")

------------------------------------------------------------------------
-- Checks of the opcode headers (wire.c's mr_check and its helpers). Each
-- gets the decoded values `v` (numbers; 64-bit ones as UInt64), the
-- payload length and the base header, and returns nil or
-- (expert name, field name to mark, text).

local function before(a, b) -- serial-number order of 32-bit PSNs
    local d = (a - b) % 4294967296
    return d >= 2147483648
end

local function check_slice(length, offset, payload, prefix)
    if length > MAX_MSG_LEN then
        return "field", prefix .. ".length", "Message length above 2^31"
    end
    if payload > MAX_PAYLOAD then
        return "length", "payload_len", "Payload above " .. MAX_PAYLOAD .. " bytes"
    end
    if offset + payload > length then
        return "length", prefix .. ".offset", "Payload ends beyond the message"
    end
    if payload == 0 and length > 0 then
        return "length", "payload_len", "No payload in a message that has bytes"
    end
end

-- A remote range [va, va + length) must not wrap around 2^64.
local function check_range(va, length, name)
    if length > 0 and va + UInt64(length - 1) < va then
        return "field", name, "Address range wraps around 2^64"
    end
end

local function check_send(v, payload)
    return check_slice(v["send.length"], v["send.offset"], payload, "send")
end

local function check_write(v, payload)
    local e, f, t = check_slice(v["write.length"], v["write.offset"], payload, "write")
    if e then return e, f, t end
    return check_range(v["write.va"], v["write.length"], "write.va")
end

local function check_read_req(v)
    if v["read_req.length"] > MAX_MSG_LEN then
        return "field", "read_req.length", "READ length above 2^31"
    end
    return check_range(v["read_req.va"], v["read_req.length"], "read_req.va")
end

local function check_atomic(v)
    return check_range(v["atomic.va"], ATOMIC_LEN, "atomic.va")
end

local function check_read_resp(v, payload)
    local length, offset = v["read_resp.length"], v["read_resp.offset"]
    -- Empty inside the READ: a resent slice whose region is gone.
    if payload == 0 and offset < length and length <= MAX_MSG_LEN then
        return
    end
    return check_slice(length, offset, payload, "read_resp")
end

local function check_ack(v, payload, b)
    if v.sack_bits[0] then
        return "field", "ack.sack_map", "SACK bit 0 set: cum PSN reported as both missing and arrived"
    end
    if before(b.psn, v["ack.cum_psn"]) then return end
    local d = (b.psn - v["ack.cum_psn"]) % 4294967296
    if d < SACK_BITS and v.sack_bits[d] then return end
    return "field", "psn", "PSN neither before the cum PSN nor SACKed"
end

local function check_nak(v)
    local code = v["nak.code"]
    if code < 1 or code > 3 then
        return "field", "nak.code", "Unknown NAK code"
    end
    if v["nak.rnr_delay"] ~= 0 and code ~= 3 then
        return "field", "nak.rnr_delay", "RNR delay in a NAK that is not RNR"
    end
end

local ZERO64 = UInt64(0)

local function check_ud(v, payload, b)
    if b.path ~= 0 then return "field", "path", "A datagram rides no path: path must be 0" end
    if b.epoch ~= 0 then return "field", "epoch", "A datagram rides no path: epoch must be 0" end
    if b.tag ~= ZERO64 then
        return "field", "tag", "A datagram belongs to no connection: tag must be 0"
    end
    if v["ud.src_qpn"] > QPN_MAX then return "field", "ud.src_qpn", "Source QPN above 24 bits" end
    if payload > MAX_PAYLOAD then
        return "length", "payload_len", "Payload above " .. MAX_PAYLOAD .. " bytes"
    end
end

-- A HELLO has no sequence; its sender has a tag, and may know ours.
local function check_hello(v, payload, b)
    if b.psn ~= 0 then return "field", "psn", "A HELLO has no sequence: PSN must be 0" end
    if b.epoch ~= 0 then return "field", "epoch", "A HELLO has no sequence: epoch must be 0" end
    if v["hello.src_tag"] == ZERO64 then
        return "field", "hello.src_tag", "A HELLO's sender has a tag: not 0"
    end
    local flags = v["hello.flags"]
    if bit32.band(flags, bit32.bnot(HELLO_KNOWN + HELLO_REPLY)) ~= 0 then
        return "field", "hello.flags", string.format("Undefined HELLO flags 0x%x", flags)
    end
    if bit32.band(flags, HELLO_KNOWN) ~= 0 and b.tag == ZERO64 then
        return "field", "hello.flags", "KNOWN, but no tag to know: the base header's tag is 0"
    end
end

------------------------------------------------------------------------
-- Versions: base header, opcodes (wire.c's mr_ops: header length, the
-- flags allowed, whether a payload may follow, layout, checks, and
-- whether the opcode is a connection's, whose packets carry a tag).

local versions = {
    [2] = {
        base_len = 24,
        base = "base_v2",
        ops = {
            [0x01] = {"SEND", 16, RECV_FLAGS, true, "send", check_send, true},
            [0x02] = {"SEND_IMM", 20, RECV_FLAGS, true, "send", check_send, true},
            [0x03] = {"SEND_INV", 20, RECV_FLAGS, true, "send_inv", check_send, true},
            [0x04] = {"WRITE", 24, SEQ_FLAGS, true, "write", check_write, true},
            [0x05] = {"WRITE_IMM", 32, RECV_FLAGS, true, "write", check_write, true},
            [0x06] = {"READ_REQ", 20, SEQ_FLAGS, false, "read_req", check_read_req, true},
            [0x07] = {"CMP_SWAP", 32, SEQ_FLAGS, false, "atomic", check_atomic, true},
            [0x08] = {"FETCH_ADD", 24, SEQ_FLAGS, false, "atomic", check_atomic, true},
            [0x09] = {"UD_SEND", 8, FLAG_SOLICITED, true, "ud", check_ud, false},
            [0x0a] = {"UD_SEND_IMM", 12, FLAG_SOLICITED, true, "ud", check_ud, false},
            [0x10] = {"READ_RESP", 12, SEQ_FLAGS, true, "read_resp", check_read_resp, true},
            [0x11] = {"ATOMIC_RESP", 12, SEQ_FLAGS, false, "atomic_resp", nil, true},
            [0x20] = {"ACK", 48, 0, false, "ack", check_ack, true},
            [0x21] = {"NAK", 8, 0, false, "nak", check_nak, true},
            [0x22] = {"HELLO", 16, 0, false, "hello", check_hello, false},
        },
    },
}

-- The subtree item of each opcode header: the layout's family name.
local subtree_of = {send_inv = "send"}

-- The codec checks an unknown version's length against the base header it
-- knows: the shortest of them.
local min_base_len
for _, ver in pairs(versions) do
    for code, op in pairs(ver.ops) do
        opcode_names[code] = op[1]
        ver.ops[code] = {name = op[1], len = op[2], flags = op[3], data = op[4],
                         layout = op[5], check = op[6], tagged = op[7]}
    end
    min_base_len = math.min(min_base_len or ver.base_len, ver.base_len)
end

local flat = {}
for _, spec in ipairs(field_specs) do
    make_field(table.unpack(spec, 1, spec.n))
    flat[#flat + 1] = fields[spec[1]]
end
metaroce.fields = flat
local flat_experts = {}
for _, e in pairs(experts) do flat_experts[#flat_experts + 1] = e end
metaroce.experts = flat_experts

metaroce.prefs.udp_port = Pref.uint("UDP port", DEFAULT_PORT,
                                    "The UDP port MetaRoCE runs on (both ends use the same)")

------------------------------------------------------------------------
-- Dissection.

-- Adds the fields of `layout` at `offset` that fit in `len` bytes of the
-- header and in the packet; returns the decoded values and the items by
-- field name. Reports reserved fields that are not zero.
local function add_layout(tvb, tree, layout, offset, len, v, items, errs)
    local avail = tvb:len()
    for _, f in ipairs(layout) do
        local at, size, name = f[1], f[2], f[3]
        if at + size <= len and offset + at + size <= avail then
            local range = tvb(offset + at, size)
            if f.sack then
                local item = tree:add(fields[name], range)
                items[name] = item
                v.sack_bits = {}
                for w = 0, 3 do
                    item:add(fields["ack.sack_word"], range(8 * w, 8))
                    -- Word w, bit b (value 1 << b): PSN cum + 64 w + b.
                    for half = 0, 1 do
                        local bits = range(8 * w + 4 * (1 - half), 4):uint()
                        for b = 0, 31 do
                            if bit32.band(bits, bit32.lshift(1, b)) ~= 0 then
                                v.sack_bits[64 * w + 32 * half + b] = true
                            end
                        end
                    end
                end
                v.sack_range = range
            else
                local item = tree:add(fields[name], range)
                items[name] = item
                local value = size == 8 and range:uint64() or range:uint()
                v[name] = value
                local request = v.opcode and v.opcode >= 0x01 and v.opcode <= 0x08
                if (f.reserved or (f.request and not request)) and value ~= 0 then
                    errs[#errs + 1] = {"reserved", name, "Reserved field is not zero"}
                elseif f.max and value > f.max then
                    errs[#errs + 1] = {"field", name, "Above " .. f.max}
                end
            end
        end
    end
end

-- The PSNs an ACK's SACK map reports, and the holes below the last one.
local function add_sack_psns(tree, v)
    local cum = v["ack.cum_psn"]
    local last = -1
    local count = 0
    for b = 0, SACK_BITS - 1 do
        if v.sack_bits[b] then
            last = b
            count = count + 1
        end
    end
    local range = v.sack_range
    tree:add(fields["ack.sack_count"], range, count):set_generated()
    local sacked, missing = {}, {}
    for b = 0, SACK_BITS - 1 do
        local psn = (cum + b) % 4294967296
        local byte = range(8 * math.floor(b / 64) + 7 - math.floor(b % 64 / 8), 1)
        if v.sack_bits[b] then
            tree:add(fields["ack.sack"], byte, psn):set_generated()
            sacked[#sacked + 1] = psn
        elseif b < last then
            missing[#missing + 1] = psn
            tree:add(fields["ack.missing"], byte, psn):set_generated()
        end
    end
    return sacked, missing
end

local function summary_ranges(psns) -- "5-7,9"
    local out, i = {}, 1
    while i <= #psns do
        local j = i
        while j < #psns and psns[j + 1] == (psns[j] + 1) % 4294967296 do j = j + 1 end
        out[#out + 1] = (j > i) and (psns[i] .. "-" .. psns[j]) or tostring(psns[i])
        i = j + 1
    end
    return table.concat(out, ",")
end

local function flag_names(flags)
    local n = {}
    if bit32.band(flags, FLAG_ACK_REQ) ~= 0 then n[#n + 1] = "ACK_REQ" end
    if bit32.band(flags, FLAG_SOLICITED) ~= 0 then n[#n + 1] = "SOLICITED" end
    if bit32.band(flags, FLAG_WINDOW_LIMITED) ~= 0 then n[#n + 1] = "WINDOW_LIMITED" end
    if bit32.band(flags, 0xf4) ~= 0 then n[#n + 1] = string.format("0x%02x", bit32.band(flags, 0xf4)) end
    return table.concat(n, ",")
end

local function report(tree, items, errs)
    for _, e in ipairs(errs) do
        local item = items[e[2]] or tree
        item:add_proto_expert_info(experts[e[1]], e[3])
    end
end

function metaroce.dissector(tvb, pinfo, tree)
    local len = tvb:len()
    local reported = tvb:reported_len()
    pinfo.cols.protocol = "MetaRoCE"
    local root = tree:add(metaroce, tvb())
    local items, errs = {root = root}, {}

    if reported < 1 then
        root:add_proto_expert_info(experts.trunc, "Empty datagram")
        pinfo.cols.info = "MetaRoCE (empty)"
        return reported
    end
    local version = tvb(0, 1):uint()
    local ver = versions[version]
    if not ver then
        items.version = root:add(fields.version, tvb(0, 1))
        if reported < min_base_len then
            errs[#errs + 1] = {"trunc", "version", "Shorter than the base header"}
        end
        errs[#errs + 1] = {"version", "version", "Version " .. version .. " is not known"}
        report(root, items, errs)
        pinfo.cols.info = "MetaRoCE unknown version " .. version
        return reported
    end

    -- The base header: its values in `b`.
    local v = {}
    add_layout(tvb, root, layouts[ver.base], 0, ver.base_len, v, items, errs)
    local base_errs = errs
    errs = {}
    if reported < ver.base_len then
        errs[#errs + 1] = {"trunc", "root", "Shorter than the base header (" .. ver.base_len .. " bytes)"}
        report(root, items, errs)
        report(root, items, base_errs)
        pinfo.cols.info = "MetaRoCE (truncated)"
        return reported
    end
    if len < ver.base_len then
        -- Cut short by the capture's snaplen: nothing to check.
        report(root, items, base_errs)
        pinfo.cols.info = "MetaRoCE (cut short by the capture)"
        return reported
    end
    local b = {opcode = v.opcode, flags = v.flags, path = v.path, qpn = v.qpn, psn = v.psn,
               epoch = v.epoch, tag = v.tag}
    local flags_item = items.flags
    flags_item:add(fields["flags.ack_req"], tvb(2, 1))
    flags_item:add(fields["flags.solicited"], tvb(2, 1))
    flags_item:add(fields["flags.window_limited"], tvb(2, 1))
    flags_item:add(fields["flags.reserved"], tvb(2, 1))
    local flags_text = flag_names(b.flags)
    if flags_text ~= "" then flags_item:append_text(" (" .. flags_text .. ")") end

    local op = ver.ops[b.opcode]
    if not op then
        errs[#errs + 1] = {"opcode", "opcode", string.format("Opcode 0x%02x is not known", b.opcode)}
        report(root, items, errs)
        report(root, items, base_errs)
        pinfo.cols.info = string.format("Unknown opcode 0x%02x", b.opcode)
        root:append_text(string.format(", unknown opcode 0x%02x", b.opcode))
        return reported
    end

    -- The opcode header; the order of the checks is wire.c's.
    local hdr_len = ver.base_len + op.len
    local hdr = root:add(fields[subtree_of[op.layout] or op.layout],
                         tvb(ver.base_len, math.min(op.len, len - ver.base_len)))
    add_layout(tvb, hdr, layouts[op.layout], ver.base_len, op.len, v, items, base_errs)
    if reported < hdr_len then
        errs[#errs + 1] = {"trunc", "root", "Shorter than the " .. op.name .. " headers ("
                           .. hdr_len .. " bytes)"}
    end
    for _, e in ipairs(base_errs) do errs[#errs + 1] = e end -- reserved, path
    local payload = reported - hdr_len
    if payload < 0 then payload = 0 end
    root:add(fields.hdr_len, tvb(0, math.min(hdr_len, len)), hdr_len):set_generated()
    local payload_item
    if payload > 0 and len > hdr_len then
        payload_item = root:add(fields.payload_len, tvb(hdr_len), payload)
        payload_item:set_generated()
        root:add(fields.payload, tvb(hdr_len))
    else
        payload_item = root:add(fields.payload_len, payload)
        payload_item:set_generated()
    end
    items.payload_len = payload_item

    -- The checks need every header byte: not on a frame cut short by the
    -- capture's snaplen (Wireshark marks those itself).
    local sacked, missing
    if reported >= hdr_len and len >= hdr_len then
        if bit32.band(b.flags, bit32.bnot(op.flags)) ~= 0 then
            errs[#errs + 1] = {"flags", "flags", "Flags " .. flag_names(bit32.band(b.flags,
                               bit32.bnot(op.flags))) .. " not allowed on " .. op.name}
        end
        if not op.data and payload > 0 then
            errs[#errs + 1] = {"length", "payload_len", op.name .. " carries no payload"}
        end
        if op.tagged and b.tag == ZERO64 then
            errs[#errs + 1] = {"field", "tag", op.name .. " without its receiver's tag"}
        end
        if op.layout == "hello" then
            local f = items["hello.flags"]
            f:add(fields["hello.flags.known"], tvb(hdr_len - 8, 4))
            f:add(fields["hello.flags.reply"], tvb(hdr_len - 8, 4))
        end
        if op.layout == "ack" then sacked, missing = add_sack_psns(items["ack.sack_map"], v) end
        if op.check then
            local e, f, t = op.check(v, payload, b)
            if e then errs[#errs + 1] = {e, f, t} end
        end
    end
    report(root, items, errs)

    -- The summary line.
    local info = string.format("%s QPN 0x%06x path %d epoch %d PSN %d", op.name, b.qpn,
                               b.path, b.epoch, b.psn)
    local m = v["send.msn"] or v["write.msn"] or v["read_req.msn"] or v["atomic.msn"]
        or v["read_resp.msn"] or v["atomic_resp.msn"] or v["nak.msn"]
    if m then info = info .. " MSN " .. m end
    if op.layout == "ack" and sacked then
        info = info .. " cum " .. v["ack.cum_psn"]
        if #sacked > 0 then info = info .. " SACK " .. summary_ranges(sacked) end
        if #missing > 0 then info = info .. " missing " .. summary_ranges(missing) end
    elseif op.layout == "nak" and v["nak.code"] then
        info = info .. " " .. (nak_codes[v["nak.code"]] or "code " .. v["nak.code"])
    elseif op.layout == "hello" and v["hello.flags"] then
        info = info .. " tag 0x" .. b.tag:tohex() .. " src_tag 0x" .. v["hello.src_tag"]:tohex()
        local names = {}
        if bit32.band(v["hello.flags"], HELLO_KNOWN) ~= 0 then names[#names + 1] = "KNOWN" end
        if bit32.band(v["hello.flags"], HELLO_REPLY) ~= 0 then names[#names + 1] = "REPLY" end
        if #names > 0 then info = info .. " " .. table.concat(names, ",") end
    end
    if payload > 0 then info = info .. " len " .. payload end
    if flags_text ~= "" then info = info .. " [" .. flags_text .. "]" end
    if #errs > 0 then info = info .. " [Malformed]" end
    pinfo.cols.info = info
    root:append_text(", " .. op.name .. ", path " .. b.path .. ", PSN " .. b.psn)
    return reported
end

------------------------------------------------------------------------
-- Registration on the UDP port, which follows the preference.

local udp_table = DissectorTable.get("udp.port")
local current_port = nil

local function register_port()
    local port = metaroce.prefs.udp_port
    if current_port == port then return end
    if current_port then udp_table:remove(current_port, metaroce) end
    if port > 0 and port < 65536 then
        udp_table:add(port, metaroce)
        current_port = port
    else
        current_port = nil
    end
end

function metaroce.prefs_changed()
    register_port()
end

register_port()
