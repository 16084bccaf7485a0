// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The codec's byte layout in the terms of protocol.rst's tables, for
 * scripts/spec-check to compare with them. One line per row:
 *
 *   base OFFSET SIZE FIELD
 *   flag 0xBIT NAME
 *   opcode 0xVALUE NAME hdr LEN total LEN payload yes|no flags a,b|-
 *   field OPCODE OFFSET SIZE FIELD
 *
 * Offsets are absolute, from the start of the base header. FIELD is the
 * spec's name (the Field column), mapped from struct mr_pkt members by
 * mr_names[] below; adjacent members of one name are one row (the four
 * SACK words are "SACK map"), and bytes of a header that no member covers
 * are "reserved" rows (NAK byte 29, base bytes 4 and 14-15).
 *
 * The opcode headers come from wire.c's own tables (mr_ops[]); the base
 * header, which wire.c writes in code, is found by encoding packets that
 * differ in one member and seeing which bytes change.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../wire.c"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Opcode names are the spec's; wire.h has only the enum. */
static const char *const mr_op_names[MR_OP_MAX + 1] = {
	[MR_OP_SEND] = "SEND",
	[MR_OP_SEND_IMM] = "SEND_IMM",
	[MR_OP_SEND_INV] = "SEND_INV",
	[MR_OP_WRITE] = "WRITE",
	[MR_OP_WRITE_IMM] = "WRITE_IMM",
	[MR_OP_READ_REQ] = "READ_REQ",
	[MR_OP_CMP_SWAP] = "CMP_SWAP",
	[MR_OP_FETCH_ADD] = "FETCH_ADD",
	[MR_OP_UD_SEND] = "UD_SEND",
	[MR_OP_UD_SEND_IMM] = "UD_SEND_IMM",
	[MR_OP_READ_RESP] = "READ_RESP",
	[MR_OP_ATOMIC_RESP] = "ATOMIC_RESP",
	[MR_OP_ACK] = "ACK",
	[MR_OP_NAK] = "NAK",
	[MR_OP_HELLO] = "HELLO",
};

static const struct {
	unsigned int bit;
	const char *name;
} mr_flag_names[] = {
	{ MR_FLAG_ACK_REQ, "ACK_REQ" },
	{ MR_FLAG_SOLICITED, "SOLICITED" },
	{ MR_FLAG_ENCRYPTED, "ENCRYPTED" },
	{ MR_FLAG_WINDOW_LIMITED, "WINDOW_LIMITED" },
};

/*
 * Member to Field column. Keyed by field table and member, since the
 * union's arms share offsets. SEND_INV's inv_rkey is the spec's "imm"
 * row, which says so in its Meaning.
 */
static const struct mr_name {
	const struct mr_field *table;	/* NULL: the base header */
	u16 member;
	const char *name;
} mr_names[] = {
#define N(t, m, name) { t, offsetof(struct mr_pkt, m), name }
	N(NULL, base.opcode, "opcode"),
	N(NULL, base.flags, "flags"),
	N(NULL, base.path, "path"),
	N(NULL, base.qpn, "dest QPN"),
	N(NULL, base.psn, "PSN"),
	N(NULL, base.epoch, "epoch"),
	N(NULL, base.order, "order"),
	N(NULL, base.stream, "stream"),
	N(NULL, base.tag, "tag"),
	N(mr_send_fields, send.msn, "MSN"),
	N(mr_send_fields, send.rsn, "RSN"),
	N(mr_send_fields, send.length, "length"),
	N(mr_send_fields, send.offset, "offset"),
	N(mr_send_fields, send.imm, "imm"),
	N(mr_send_inv_fields, send.msn, "MSN"),
	N(mr_send_inv_fields, send.rsn, "RSN"),
	N(mr_send_inv_fields, send.length, "length"),
	N(mr_send_inv_fields, send.offset, "offset"),
	N(mr_send_inv_fields, send.inv_rkey, "imm"),
	N(mr_write_fields, write.msn, "MSN"),
	N(mr_write_fields, write.rkey, "rkey"),
	N(mr_write_fields, write.va, "VA"),
	N(mr_write_fields, write.length, "length"),
	N(mr_write_fields, write.offset, "offset"),
	N(mr_write_fields, write.rsn, "RSN"),
	N(mr_write_fields, write.imm, "imm"),
	N(mr_read_req_fields, read_req.msn, "MSN"),
	N(mr_read_req_fields, read_req.rkey, "rkey"),
	N(mr_read_req_fields, read_req.va, "VA"),
	N(mr_read_req_fields, read_req.length, "length"),
	N(mr_atomic_fields, atomic.msn, "MSN"),
	N(mr_atomic_fields, atomic.rkey, "rkey"),
	N(mr_atomic_fields, atomic.va, "VA"),
	N(mr_atomic_fields, atomic.swap_add, "swap/add"),
	N(mr_atomic_fields, atomic.compare, "compare"),
	N(mr_read_resp_fields, read_resp.msn, "MSN"),
	N(mr_read_resp_fields, read_resp.length, "length"),
	N(mr_read_resp_fields, read_resp.offset, "offset"),
	N(mr_atomic_resp_fields, atomic_resp.msn, "MSN"),
	N(mr_atomic_resp_fields, atomic_resp.orig, "orig"),
	N(mr_ack_fields, ack.cum_psn, "cum PSN"),
	N(mr_ack_fields, ack.sack[0], "SACK map"),
	N(mr_ack_fields, ack.sack[1], "SACK map"),
	N(mr_ack_fields, ack.sack[2], "SACK map"),
	N(mr_ack_fields, ack.sack[3], "SACK map"),
	N(mr_ack_fields, ack.msn_done, "MSN done"),
	N(mr_ack_fields, ack.ecn_count, "ECN count"),
	N(mr_ack_fields, ack.rate_hint, "rate hint"),
	N(mr_nak_fields, nak.msn, "MSN"),
	N(mr_nak_fields, nak.code, "code"),
	N(mr_nak_fields, nak.rnr_delay, "RNR delay"),
	N(mr_ud_fields, ud.src_qpn, "source QPN"),
	N(mr_ud_fields, ud.qkey, "Q_Key"),
	N(mr_ud_fields, ud.imm, "imm"),
	N(mr_hello_fields, hello.src_tag, "source tag"),
	N(mr_hello_fields, hello.flags, "flags"),
	N(mr_hello_fields, hello.rate_hint, "rate hint"),
#undef N
};

static const char *mr_name_of(const struct mr_field *table, u16 member)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mr_names); i++)
		if (mr_names[i].table == table && mr_names[i].member == member)
			return mr_names[i].name;
	fprintf(stderr, "wire_tables: no spec name for member %u\n", member);
	exit(1);
}

static bool mr_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * The rows of one header: names[i] is the field of byte i, NULL where no
 * member is. A run of one name is one row (the SACK words), a run of
 * NULL a "reserved" row.
 */
static void mr_print_rows(const char *prefix, const char **names,
			  unsigned int from, unsigned int len)
{
	unsigned int i = 0, j;

	while (i < len) {
		for (j = i + 1; j < len && mr_same(names[j], names[i]); j++)
			;
		printf("%s %u %u %s\n", prefix, from + i, j - i,
		       names[i] ? names[i] : "reserved");
		i = j;
	}
}

/* A valid packet to encode: a SEND of nothing on a connection. */
static struct mr_pkt mr_probe_pkt(void)
{
	struct mr_pkt p = { .base = { .opcode = MR_OP_SEND, .tag = 1 } };

	return p;
}

static void mr_encode_or_die(const struct mr_pkt *p, u8 *buf)
{
	if (mr_wire_encode(p, buf, MR_MAX_HDR_LEN) < 0) {
		fprintf(stderr, "wire_tables: probe packet refused\n");
		exit(1);
	}
}

/* Each base member set to its widest value: which bytes change. */
static void mr_print_base(void)
{
	const char *names[MR_BASE_HDR_LEN] = { 0 };
	struct mr_pkt ref = mr_probe_pkt();
	u8 a[MR_MAX_HDR_LEN], b[MR_MAX_HDR_LEN];
	unsigned int i, m;

	mr_encode_or_die(&ref, a);
	for (m = 0; m < 9; m++) {
		struct mr_pkt p = ref;
		u16 member;

		switch (m) {
		case 0:
			p.base.opcode = MR_OP_SEND_IMM;
			member = offsetof(struct mr_pkt, base.opcode);
			break;
		case 1:
			p.base.flags = MR_RECV_FLAGS;
			member = offsetof(struct mr_pkt, base.flags);
			break;
		case 2:
			p.base.path = MR_WIRE_MAX_PATHS - 1;
			member = offsetof(struct mr_pkt, base.path);
			break;
		case 3:
			p.base.qpn = MR_WIRE_QPN_MAX;
			member = offsetof(struct mr_pkt, base.qpn);
			break;
		case 4:
			p.base.psn = ~0u;
			member = offsetof(struct mr_pkt, base.psn);
			break;
		case 5:
			p.base.epoch = 0xffff;
			member = offsetof(struct mr_pkt, base.epoch);
			break;
		case 6:
			p.base.order = MR_ORDER_NONE;
			member = offsetof(struct mr_pkt, base.order);
			break;
		case 7:
			p.base.stream = 0xffff;
			member = offsetof(struct mr_pkt, base.stream);
			break;
		default:
			p.base.tag = ~0ull;
			member = offsetof(struct mr_pkt, base.tag);
			break;
		}
		mr_encode_or_die(&p, b);
		for (i = 0; i < MR_BASE_HDR_LEN; i++)
			if (a[i] != b[i])
				names[i] = mr_name_of(NULL, member);
	}
	/* A byte that no member moves and that holds the version is it. */
	for (i = 0; i < MR_BASE_HDR_LEN; i++)
		if (!names[i] && a[i] == MR_WIRE_VERSION)
			names[i] = "version";
	mr_print_rows("base", names, 0, MR_BASE_HDR_LEN);
}

static void mr_print_op(unsigned int opcode)
{
	const struct mr_op_info *op = &mr_ops[opcode];
	const char *names[MR_MAX_OP_HDR_LEN] = { 0 };
	const char *sep = "";
	const struct mr_field *f;
	char prefix[32];
	size_t i;

	printf("opcode 0x%02x %s hdr %u total %u payload %s flags ", opcode,
	       mr_op_names[opcode], op->len, mr_wire_hdr_len(opcode),
	       op->flags & MR_WIRE_F_PAYLOAD ? "yes" : "no");
	for (i = 0; i < ARRAY_SIZE(mr_flag_names); i++) {
		if (op->base_flags & mr_flag_names[i].bit) {
			printf("%s%s", sep, mr_flag_names[i].name);
			sep = ",";
		}
	}
	printf("%s\n", *sep ? "" : "-");

	/* The fields the codec reads and writes for this opcode. */
	for (f = op->fields; mr_wire_has_field(op, f); f++)
		for (i = 0; i < f->size; i++)
			names[f->at + i] = mr_name_of(op->fields, f->member);
	snprintf(prefix, sizeof(prefix), "field %s", mr_op_names[opcode]);
	mr_print_rows(prefix, names, MR_BASE_HDR_LEN, op->len);
}

int main(void)
{
	unsigned int opcode;
	size_t i;

	mr_print_base();
	for (i = 0; i < ARRAY_SIZE(mr_flag_names); i++)
		printf("flag 0x%02x %s\n", mr_flag_names[i].bit,
		       mr_flag_names[i].name);
	for (opcode = 0; opcode <= MR_OP_MAX; opcode++) {
		if (!mr_ops[opcode].len != !mr_op_names[opcode]) {
			fprintf(stderr, "wire_tables: opcode 0x%02x: %s\n",
				opcode, mr_ops[opcode].len ?
				"no name here" : "a name but no codec entry");
			return 1;
		}
		if (mr_ops[opcode].len)
			mr_print_op(opcode);
	}
	return 0;
}
