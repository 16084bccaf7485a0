// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* KUnit: per-path selective acknowledgment, proto/sack.c. */
#include <kunit/test.h>

#include "../proto/sack.h"

/* Starts that put the window across the 2^32 wrap, and one that does not. */
static const u32 sack_starts[] = { 0, 0xffffff00, 0xfffffff0 };

static bool sack_bit(const u64 *map, u32 i)
{
	return mr_sack_res_test(map, i);
}

static void sack_rx_reorder_dup_beyond(struct kunit *test)
{
	struct mr_sack_rx rx;
	struct mr_ack_hdr a;
	unsigned int k;
	u32 s;

	for (k = 0; k < ARRAY_SIZE(sack_starts); k++) {
		s = sack_starts[k];
		mr_sack_rx_init(&rx, s);
		KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, s + 1),
				MR_SACK_NEW);
		KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, s + 3),
				MR_SACK_NEW);
		KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, s + 3),
				MR_SACK_DUP);
		KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, s + 256),
				MR_SACK_BEYOND);
		KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, s + 255),
				MR_SACK_NEW);
		mr_sack_rx_fill_ack(&rx, &a);
		KUNIT_EXPECT_EQ(test, a.cum_psn, s);
		KUNIT_EXPECT_EQ(test, a.sack[0], 0xaull);
		KUNIT_EXPECT_EQ(test, a.sack[3], 1ull << 63);
		KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, s),
				MR_SACK_NEW);
		KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, s - 1),
				MR_SACK_DUP);
		mr_sack_rx_fill_ack(&rx, &a);
		KUNIT_EXPECT_EQ(test, a.cum_psn, s + 2);
		KUNIT_EXPECT_EQ(test, a.sack[0], 0x2ull);
		KUNIT_EXPECT_EQ(test, a.sack[3], 1ull << 61);
	}
}

static void sack_rx_epochs(struct kunit *test)
{
	struct mr_sack_rx rx;

	mr_sack_rx_init(&rx, 10);
	KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, 10), MR_SACK_NEW);
	/* Later epochs start at PSN 0. */
	KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 1, 10), MR_SACK_NEW);
	KUNIT_EXPECT_EQ(test, rx.epoch, 1);
	KUNIT_EXPECT_EQ(test, rx.cum, 0u);
	KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, 11), MR_SACK_STALE);
	mr_sack_rx_reset(&rx, 0xffff);
	KUNIT_EXPECT_EQ(test, mr_sack_rx_record(&rx, 0, 10), MR_SACK_NEW);
	KUNIT_EXPECT_EQ(test, rx.epoch, 0);
}

static void sack_tx_loss_once(struct kunit *test)
{
	struct mr_sack_tx *tx = kunit_kzalloc(test, sizeof(*tx), GFP_KERNEL);
	u16 *mark = kunit_kcalloc(test, MR_SACK_WINDOW, sizeof(*mark),
				  GFP_KERNEL);
	u64 map[MR_SACK_WORDS] = { 0 };
	struct mr_sack_res res;
	unsigned int k, i;
	u32 s, psn;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, tx);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mark);
	for (k = 0; k < ARRAY_SIZE(sack_starts); k++) {
		s = sack_starts[k];
		mr_sack_tx_init(tx, s, mark);
		for (i = 0; i < 10; i++)
			KUNIT_ASSERT_EQ(test, mr_sack_tx_send(tx, &psn), 0);
		map[0] = 1ull << 2;	/* s + 2 arrived, s and s + 1 did not */
		KUNIT_ASSERT_EQ(test, mr_sack_tx_ack(tx, 0, s, map, &res), 0);
		KUNIT_EXPECT_EQ(test, res.n_acked, 1u);
		KUNIT_EXPECT_TRUE(test, sack_bit(res.acked, 2));
		KUNIT_EXPECT_EQ(test, res.n_lost, 2u);
		KUNIT_EXPECT_TRUE(test, sack_bit(res.lost, 0));
		KUNIT_EXPECT_TRUE(test, sack_bit(res.lost, 1));
		KUNIT_ASSERT_EQ(test, mr_sack_tx_ack(tx, 0, s, map, &res), 0);
		KUNIT_EXPECT_EQ(test, res.n_lost, 0u);
		KUNIT_EXPECT_EQ(test, mr_sack_tx_pipe(tx), 7u);

		/* A resend is lost again only once something newer lands. */
		KUNIT_ASSERT_EQ(test, mr_sack_tx_resend(tx, s), 0);
		map[0] |= 1ull << 9;
		KUNIT_ASSERT_EQ(test, mr_sack_tx_ack(tx, 0, s, map, &res), 0);
		KUNIT_EXPECT_FALSE(test, sack_bit(res.lost, 0));
		KUNIT_ASSERT_EQ(test, mr_sack_tx_send(tx, &psn), 0);
		map[0] |= 1ull << 10;
		KUNIT_ASSERT_EQ(test, mr_sack_tx_ack(tx, 0, s, map, &res), 0);
		KUNIT_EXPECT_TRUE(test, sack_bit(res.lost, 0));
		KUNIT_EXPECT_EQ(test, res.n_lost, 1u);

		/* Everything, at last: s was resent, so its RTT is unusable. */
		KUNIT_ASSERT_EQ(test, mr_sack_tx_resend(tx, s), 0);
		map[0] = 0;
		KUNIT_ASSERT_EQ(test, mr_sack_tx_ack(tx, 0, s + 11, map, &res),
				0);
		KUNIT_EXPECT_TRUE(test, sack_bit(res.ambiguous, 0));
		KUNIT_EXPECT_FALSE(test, sack_bit(res.ambiguous, 1));
		KUNIT_EXPECT_EQ(test, tx->n_lost, 0u);
		KUNIT_EXPECT_EQ(test, tx->n_sacked, 0u);
		KUNIT_EXPECT_EQ(test, mr_sack_tx_room(tx), 256u);
	}
}

static void sack_tx_bad_acks(struct kunit *test)
{
	struct mr_sack_tx *tx = kunit_kzalloc(test, sizeof(*tx), GFP_KERNEL);
	u16 *mark = kunit_kcalloc(test, MR_SACK_WINDOW, sizeof(*mark),
				  GFP_KERNEL);
	u64 map[MR_SACK_WORDS] = { 0 };
	struct mr_sack_res res;
	u32 psn, i;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, tx);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mark);
	mr_sack_tx_init(tx, 0xfffffffe, mark);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, mr_sack_tx_send(tx, &psn), 0);
	KUNIT_ASSERT_EQ(test, mr_sack_tx_ack(tx, 0, 0, map, &res), 0);
	KUNIT_EXPECT_EQ(test, res.n_acked, 2u);
	KUNIT_EXPECT_EQ(test, mr_sack_tx_ack(tx, 1, 0, map, &res),
			-MR_ESTALE);
	KUNIT_EXPECT_EQ(test, mr_sack_tx_ack(tx, 0, 0xffffffff, map, &res),
			-MR_ESTALE);
	KUNIT_EXPECT_EQ(test, mr_sack_tx_ack(tx, 0, 3, map, &res),
			-MR_EFIELD);
	map[0] = 1ull << 2;	/* PSN 2 was never sent */
	KUNIT_EXPECT_EQ(test, mr_sack_tx_ack(tx, 0, 0, map, &res),
			-MR_EFIELD);
	map[0] = 1;
	KUNIT_EXPECT_EQ(test, mr_sack_tx_ack(tx, 0, 0, map, &res),
			-MR_EFIELD);
	KUNIT_EXPECT_EQ(test, tx->una, 0u);
	KUNIT_EXPECT_EQ(test, tx->n_sacked + tx->n_lost, 0u);
}

static void sack_tx_timeout_and_move(struct kunit *test)
{
	struct mr_sack_tx *tx = kunit_kzalloc(test, sizeof(*tx), GFP_KERNEL);
	u16 *mark = kunit_kcalloc(test, MR_SACK_WINDOW, sizeof(*mark),
				  GFP_KERNEL);
	u64 map[MR_SACK_WORDS] = { 0 };
	struct mr_sack_res res;
	u32 psn, i, n = 0;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, tx);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, mark);
	mr_sack_tx_init(tx, 100, mark);
	for (i = 0; i < MR_SACK_WINDOW; i++)
		KUNIT_ASSERT_EQ(test, mr_sack_tx_send(tx, &psn), 0);
	KUNIT_EXPECT_EQ(test, mr_sack_tx_send(tx, &psn), -MR_ENOSPC);
	map[0] = 1ull << 1;
	KUNIT_ASSERT_EQ(test, mr_sack_tx_ack(tx, 0, 100, map, &res), 0);
	mr_sack_tx_timeout(tx, &res);
	KUNIT_EXPECT_EQ(test, res.n_lost, 254u);
	KUNIT_EXPECT_EQ(test, mr_sack_tx_pipe(tx), 0u);
	for (psn = tx->una; mr_sack_tx_next_unacked(tx, &psn); psn++)
		n++;
	KUNIT_EXPECT_EQ(test, n, 255u);
	mr_sack_tx_reset(tx, 1);
	KUNIT_EXPECT_EQ(test, tx->una, 0u);
	KUNIT_EXPECT_EQ(test, tx->epoch, 1);
	KUNIT_EXPECT_EQ(test, mr_sack_tx_room(tx), 256u);
}

static struct kunit_case sack_cases[] = {
	KUNIT_CASE(sack_rx_reorder_dup_beyond),
	KUNIT_CASE(sack_rx_epochs),
	KUNIT_CASE(sack_tx_loss_once),
	KUNIT_CASE(sack_tx_bad_acks),
	KUNIT_CASE(sack_tx_timeout_and_move),
	{}
};

static struct kunit_suite sack_suite = {
	.name = "metaroce_sack",
	.test_cases = sack_cases,
};

kunit_test_suite(sack_suite);
