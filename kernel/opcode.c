// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send work request opcodes: one row each, with the request packet it
 * becomes on RC, UC and UD (0 where the QP type refuses it). UC has no
 * responses, so neither READ nor atomics nor remote invalidation; UD
 * sends datagrams only.
 */
#include "opcode.h"
#include "proto/wire.h"

static const struct mr_opcode_info mr_opcode_table[] = {
	[IB_WR_SEND] = {
		.name = "SEND",
		.wire = { MR_OP_SEND, MR_OP_SEND, MR_OP_UD_SEND },
		.flags = MR_OPC_CONSUMES | MR_OPC_INLINE,
		.wc = IB_WC_SEND,
	},
	[IB_WR_SEND_WITH_IMM] = {
		.name = "SEND_WITH_IMM",
		.wire = { MR_OP_SEND_IMM, MR_OP_SEND_IMM, MR_OP_UD_SEND_IMM },
		.flags = MR_OPC_CONSUMES | MR_OPC_INLINE | MR_OPC_IMM,
		.wc = IB_WC_SEND,
	},
	[IB_WR_SEND_WITH_INV] = {
		.name = "SEND_WITH_INV",
		.wire = { MR_OP_SEND_INV, 0, 0 },
		.flags = MR_OPC_CONSUMES | MR_OPC_INLINE | MR_OPC_INV,
		.wc = IB_WC_SEND,
	},
	[IB_WR_RDMA_WRITE] = {
		.name = "RDMA_WRITE",
		.wire = { MR_OP_WRITE, MR_OP_WRITE, 0 },
		.flags = MR_OPC_INLINE | MR_OPC_REMOTE,
		.wc = IB_WC_RDMA_WRITE,
	},
	[IB_WR_RDMA_WRITE_WITH_IMM] = {
		.name = "RDMA_WRITE_WITH_IMM",
		.wire = { MR_OP_WRITE_IMM, MR_OP_WRITE_IMM, 0 },
		.flags = MR_OPC_CONSUMES | MR_OPC_INLINE | MR_OPC_REMOTE |
			 MR_OPC_IMM,
		.wc = IB_WC_RDMA_WRITE,
	},
	[IB_WR_RDMA_READ] = {
		.name = "RDMA_READ",
		.wire = { MR_OP_READ_REQ, 0, 0 },
		.flags = MR_OPC_RD | MR_OPC_REMOTE | MR_OPC_LOCAL_WRITE,
		.wc = IB_WC_RDMA_READ,
	},
	[IB_WR_ATOMIC_CMP_AND_SWP] = {
		.name = "ATOMIC_CMP_AND_SWP",
		.wire = { MR_OP_CMP_SWAP, 0, 0 },
		.flags = MR_OPC_RD | MR_OPC_REMOTE | MR_OPC_ATOMIC |
			 MR_OPC_LOCAL_WRITE,
		.wc = IB_WC_COMP_SWAP,
	},
	[IB_WR_ATOMIC_FETCH_AND_ADD] = {
		.name = "ATOMIC_FETCH_AND_ADD",
		.wire = { MR_OP_FETCH_ADD, 0, 0 },
		.flags = MR_OPC_RD | MR_OPC_REMOTE | MR_OPC_ATOMIC |
			 MR_OPC_LOCAL_WRITE,
		.wc = IB_WC_FETCH_ADD,
	},
};

/* The row of @op, or NULL for an opcode no QP type takes. */
const struct mr_opcode_info *mr_opcode_get(enum ib_wr_opcode op)
{
	if ((unsigned int)op >= ARRAY_SIZE(mr_opcode_table) ||
	    !mr_opcode_table[op].name)
		return NULL;
	return &mr_opcode_table[op];
}
