/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What each send work request opcode is, on each QP type, in one table
 * (opcode.c): which QP types take it and with which request packet, what
 * its completion says, and how the transport treats it.
 */
#ifndef METAROCE_OPCODE_H
#define METAROCE_OPCODE_H

#include <rdma/ib_verbs.h>

/* The QP types as the table tells them apart. */
enum mr_opcode_qpt {
	MR_OPC_RC,
	MR_OPC_UC,
	MR_OPC_UD,		/* UD and GSI */
	MR_OPC_NQPT
};

#define MR_OPC_CONSUMES BIT(0)	/* takes a posted receive; may be solicited */
#define MR_OPC_RD BIT(1)	/* one request packet, answered by a response */
#define MR_OPC_INLINE BIT(2)	/* may carry its data inline */
#define MR_OPC_REMOTE BIT(3)	/* names remote memory: address and rkey */
#define MR_OPC_ATOMIC BIT(4)	/* one 8-byte SGE and an aligned address */
#define MR_OPC_IMM BIT(5)	/* carries immediate data */
#define MR_OPC_INV BIT(6)	/* carries an rkey for the peer to invalidate */
#define MR_OPC_LOCAL_WRITE BIT(7)	/* its SGEs receive data */

struct mr_opcode_info {
	const char *name;
	/* The opcode of its request packets per QP type (MR_OP_*), 0: refused. */
	u8 wire[MR_OPC_NQPT];
	u8 flags;		/* MR_OPC_* */
	enum ib_wc_opcode wc;	/* of its send completion */
};

const struct mr_opcode_info *mr_opcode_get(enum ib_wr_opcode op);

static inline enum mr_opcode_qpt mr_opcode_qpt(enum ib_qp_type type)
{
	if (type == IB_QPT_RC)
		return MR_OPC_RC;
	return type == IB_QPT_UC ? MR_OPC_UC : MR_OPC_UD;
}

/* The request packet opcode of @op on a QP of @type, 0 if it is refused. */
static inline u8 mr_opcode_wire(const struct mr_opcode_info *op,
				enum ib_qp_type type)
{
	return op ? op->wire[mr_opcode_qpt(type)] : 0;
}

static inline bool mr_opcode_has(enum ib_wr_opcode op, u8 flag)
{
	const struct mr_opcode_info *o = mr_opcode_get(op);

	return o && (o->flags & flag);
}

#endif /* METAROCE_OPCODE_H */
