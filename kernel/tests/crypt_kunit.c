// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * KUnit: packet encryption through the kernel's AES-128-GCM (crypt.c). A
 * real packet, encoded by the codec, is sealed with the key of host A to
 * host B and opened with B's view of the same key; a changed byte anywhere
 * or another key fails the tag; consecutive packets get distinct nonces.
 */
#include <kunit/test.h>
#include <linux/slab.h>

#include "../crypt.h"
#include "verbs_fixture.h"

#define CRYPT_PAYLOAD 300u

struct crypt_ctx {
	u8 other[MR_AEAD_PSK_LEN];	/* another psk */
	struct in6_addr a, b;
	struct mr_crypt_dir a_to_b;	/* A sends with it */
	struct mr_crypt_dir b_from_a;	/* B receives with it */
	u8 *pkt;			/* room for a packet and its trailer */
	u8 *clear;			/* the packet as encoded */
	u32 len;
};

static const u8 crypt_psk[MR_AEAD_PSK_LEN] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
};

/* A SEND of CRYPT_PAYLOAD bytes to QPN 0x123, as the codec writes it. */
static u32 crypt_encode(struct kunit *test, u8 *buf)
{
	struct mr_pkt pkt = {};
	unsigned int i;
	int n;

	pkt.base.opcode = MR_OP_SEND;
	pkt.base.flags = MR_FLAG_ACK_REQ;
	pkt.base.path = 3;
	pkt.base.qpn = 0x123;
	pkt.base.psn = 77;
	pkt.base.tag = 0x1122334455667788ull;
	pkt.send.msn = 5;
	pkt.send.length = CRYPT_PAYLOAD;
	pkt.payload_len = CRYPT_PAYLOAD;
	n = mr_wire_encode(&pkt, buf, MR_MAX_HDR_LEN);
	KUNIT_ASSERT_GT(test, n, 0);
	for (i = 0; i < CRYPT_PAYLOAD; i++)
		buf[n + i] = (u8)(i * 7 + 1);
	return n + CRYPT_PAYLOAD;
}

static int crypt_init(struct kunit *test)
{
	struct crypt_ctx *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	u32 size = MR_MAX_HDR_LEN + CRYPT_PAYLOAD + MR_AEAD_TRAILER_LEN;

	KUNIT_ASSERT_NOT_NULL(test, c);
	test->priv = c;
	memcpy(c->other, crypt_psk, sizeof(c->other));
	c->other[31] ^= 0x80;
	ipv6_addr_set_v4mapped(htonl(0x0a000001), &c->a);
	ipv6_addr_set_v4mapped(htonl(0x0a000002), &c->b);
	/* Each end derives the key on its own. */
	KUNIT_ASSERT_EQ(test, mr_crypt_dir_init(&c->a_to_b, crypt_psk, &c->a,
						&c->b), 0);
	KUNIT_ASSERT_EQ(test, mr_crypt_dir_init(&c->b_from_a, crypt_psk,
						&c->a, &c->b), 0);
	/* kmalloc'd: the sg lists need linear memory, as skb heads are. */
	c->pkt = kunit_kzalloc(test, size, GFP_KERNEL);
	c->clear = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c->pkt);
	KUNIT_ASSERT_NOT_NULL(test, c->clear);
	c->len = crypt_encode(test, c->clear);
	memcpy(c->pkt, c->clear, c->len);
	return 0;
}

static void crypt_exit(struct kunit *test)
{
	struct crypt_ctx *c = test->priv;

	if (!c)
		return;
	mr_crypt_dir_free(&c->a_to_b);
	mr_crypt_dir_free(&c->b_from_a);
}

/* Seal the sample with A's key; the sealed length. */
static u32 crypt_seal(struct kunit *test, struct crypt_ctx *c)
{
	KUNIT_ASSERT_EQ(test, mr_crypt_seal(&c->a_to_b, c->pkt, c->len,
					    mr_crypt_next_counter(&c->a_to_b)),
			0);
	return c->len + MR_AEAD_TRAILER_LEN;
}

static void crypt_round_trip(struct kunit *test)
{
	struct crypt_ctx *c = test->priv;
	u32 sealed = crypt_seal(test, c);
	struct mr_pkt pkt;

	KUNIT_EXPECT_TRUE(test, mr_aead_is_encrypted(c->pkt));
	/* The base header stays clear but for the flag. */
	KUNIT_EXPECT_EQ(test, c->pkt[2], c->clear[2] | MR_FLAG_ENCRYPTED);
	KUNIT_EXPECT_EQ(test, memcmp(c->pkt + 3, c->clear + 3,
				     MR_BASE_HDR_LEN - 3), 0);
	/* Opcode header and payload do not. */
	KUNIT_EXPECT_NE(test, memcmp(c->pkt + MR_BASE_HDR_LEN,
				     c->clear + MR_BASE_HDR_LEN,
				     c->len - MR_BASE_HDR_LEN), 0);
	/* Not decodable as it is: the codec refuses the flag. */
	KUNIT_EXPECT_EQ(test, mr_wire_decode(c->pkt, sealed, &pkt),
			-MR_EFLAGS);

	KUNIT_ASSERT_EQ(test, mr_crypt_open(&c->b_from_a, c->pkt, sealed),
			(int)c->len);
	KUNIT_EXPECT_EQ(test, memcmp(c->pkt, c->clear, c->len), 0);
	KUNIT_ASSERT_EQ(test, mr_wire_decode(c->pkt, c->len, &pkt), 0);
	KUNIT_EXPECT_EQ(test, pkt.base.opcode, MR_OP_SEND);
	KUNIT_EXPECT_EQ(test, pkt.base.flags, MR_FLAG_ACK_REQ);
	KUNIT_EXPECT_EQ(test, pkt.base.qpn, 0x123u);
	KUNIT_EXPECT_EQ(test, pkt.payload_len, CRYPT_PAYLOAD);
}

/* One changed bit anywhere in the packet fails the tag. */
static void crypt_tampered(struct kunit *test)
{
	struct crypt_ctx *c = test->priv;
	u32 sealed = crypt_seal(test, c);
	u32 text = sealed - MR_BASE_HDR_LEN - MR_AEAD_TRAILER_LEN;
	const u32 at[] = {
		8,					/* base header: PSN */
		16,					/* base header: tag */
		MR_BASE_HDR_LEN,			/* opcode header */
		MR_BASE_HDR_LEN + text - 1,		/* payload's last byte */
		MR_BASE_HDR_LEN + text,			/* trailer: counter */
		sealed - MR_AEAD_TAG_LEN,		/* the tag */
		sealed - 1,
	};
	u8 *copy = kunit_kmalloc(test, sealed, GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, copy);
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		memcpy(copy, c->pkt, sealed);
		copy[at[i]] ^= 0x01;
		KUNIT_EXPECT_EQ_MSG(test, mr_crypt_open(&c->b_from_a, copy,
							sealed),
				    -EBADMSG, "byte %u changed", at[i]);
	}
	/* Untouched, it opens. */
	memcpy(copy, c->pkt, sealed);
	KUNIT_EXPECT_EQ(test, mr_crypt_open(&c->b_from_a, copy, sealed),
			(int)c->len);
	/* Cut short, it is not even tried. */
	KUNIT_EXPECT_EQ(test, mr_crypt_open(&c->b_from_a, c->pkt,
					    MR_AEAD_MIN_LEN - 1), -EINVAL);
}

/* Another psk, or the other direction's key, fails the tag. */
static void crypt_wrong_key(struct kunit *test)
{
	struct crypt_ctx *c = test->priv;
	struct mr_crypt_dir other = {}, reverse = {};
	u32 sealed = crypt_seal(test, c);
	u8 *copy = kunit_kmalloc(test, sealed, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, copy);
	KUNIT_ASSERT_EQ(test, mr_crypt_dir_init(&other, c->other, &c->a,
						&c->b), 0);
	KUNIT_ASSERT_EQ(test, mr_crypt_dir_init(&reverse, crypt_psk, &c->b,
						&c->a), 0);
	memcpy(copy, c->pkt, sealed);
	KUNIT_EXPECT_EQ(test, mr_crypt_open(&other, copy, sealed), -EBADMSG);
	memcpy(copy, c->pkt, sealed);
	KUNIT_EXPECT_EQ(test, mr_crypt_open(&reverse, copy, sealed),
			-EBADMSG);
	memcpy(copy, c->pkt, sealed);
	KUNIT_EXPECT_EQ(test, mr_crypt_open(&c->b_from_a, copy, sealed),
			(int)c->len);
	mr_crypt_dir_free(&other);
	mr_crypt_dir_free(&reverse);
}

/* Two packets in a row: counters one apart, different ciphertexts. */
static void crypt_nonce_unique(struct kunit *test)
{
	struct crypt_ctx *c = test->priv;
	u32 sealed = crypt_seal(test, c);
	u32 text = sealed - MR_BASE_HDR_LEN - MR_AEAD_TRAILER_LEN;
	u8 *first = kunit_kmalloc(test, sealed, GFP_KERNEL);
	u64 n1, n2;

	KUNIT_ASSERT_NOT_NULL(test, first);
	memcpy(first, c->pkt, sealed);
	memcpy(c->pkt, c->clear, c->len);
	crypt_seal(test, c);
	n1 = mr_aead_get_counter(first, text);
	n2 = mr_aead_get_counter(c->pkt, text);
	KUNIT_EXPECT_EQ(test, n2, n1 + 1);
	KUNIT_EXPECT_NE(test, memcmp(first + MR_BASE_HDR_LEN,
				     c->pkt + MR_BASE_HDR_LEN,
				     sealed - MR_BASE_HDR_LEN), 0);
	/* Both open, each with its own nonce. */
	KUNIT_EXPECT_EQ(test, mr_crypt_open(&c->b_from_a, first, sealed),
			(int)c->len);
	KUNIT_EXPECT_EQ(test, mr_crypt_open(&c->b_from_a, c->pkt, sealed),
			(int)c->len);
	KUNIT_EXPECT_EQ(test, memcmp(first, c->pkt, c->len), 0);
}

/*
 * The same key derived again (another boot, a clone, another device)
 * counts from another random start: no clock decides, and the two never
 * share a nonce within 2^20 packets each.
 */
static void crypt_nonce_rederived(struct kunit *test)
{
	struct crypt_ctx *c = test->priv;
	struct mr_crypt_dir again = {};
	u64 n1, n2;

	KUNIT_ASSERT_EQ(test, mr_crypt_dir_init(&again, crypt_psk, &c->a,
						&c->b), 0);
	n1 = mr_crypt_next_counter(&c->a_to_b);
	n2 = mr_crypt_next_counter(&again);
	KUNIT_EXPECT_GT(test, n1 > n2 ? n1 - n2 : n2 - n1, 1ull << 20);
	mr_crypt_dir_free(&again);
}

/*
 * A full table of peers evicts the least recently used idle one for a new
 * peer, and none that is in use: address handles left unused (an
 * unprivileged user's) cannot keep new peers out.
 */
static void crypt_table_evicts_idle(struct kunit *test)
{
	struct mr_dev *dev = kunit_kzalloc(test, sizeof(*dev), GFP_KERNEL);
	struct mr_flow f[5] = {};
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, dev);
	KUNIT_ASSERT_EQ(test, mr_counters_init(dev), 0);
	KUNIT_ASSERT_EQ(test, mr_crypt_dev_init_key(dev, "kunit", crypt_psk),
			0);
	mr_crypt_set_max_peers(dev, 4);
	for (i = 0; i < ARRAY_SIZE(f); i++) {
		ipv6_addr_set_v4mapped(htonl(0x0a000001), &f[i].saddr);
		ipv6_addr_set_v4mapped(htonl(0x0a000100 + i), &f[i].daddr);
	}
	for (i = 0; i < 4; i++) {
		mr_crypt_peer_prepare(dev, &f[i]);
		KUNIT_EXPECT_EQ(test, mr_crypt_peer_age(dev, &f[i], 0), 0);
	}
	/* Full, every peer in use: no place for a fifth. */
	mr_crypt_peer_prepare(dev, &f[4]);
	KUNIT_EXPECT_EQ(test, mr_crypt_peer_age(dev, &f[4], 0), -ENOENT);
	KUNIT_EXPECT_EQ(test, mr_test_stat(dev, MR_CNT_PEER_TABLE_FULL), 1ull);
	KUNIT_EXPECT_EQ(test, mr_test_stat(dev, MR_CNT_PEER_EVICTIONS), 0ull);
	/* Two idle: the one unused the longest makes room. */
	KUNIT_EXPECT_EQ(test, mr_crypt_peer_age(dev, &f[1], MR_CRYPT_IDLE + 2 * HZ), 0);
	KUNIT_EXPECT_EQ(test, mr_crypt_peer_age(dev, &f[2], MR_CRYPT_IDLE + HZ), 0);
	mr_crypt_peer_prepare(dev, &f[4]);
	KUNIT_EXPECT_EQ(test, mr_crypt_peer_age(dev, &f[4], 0), 0);
	KUNIT_EXPECT_EQ(test, mr_crypt_peer_age(dev, &f[1], 0), -ENOENT);
	KUNIT_EXPECT_EQ(test, mr_test_stat(dev, MR_CNT_PEER_EVICTIONS), 1ull);
	/* Its keys come back when it is used again, in place of the other. */
	mr_crypt_peer_prepare(dev, &f[1]);
	KUNIT_EXPECT_EQ(test, mr_crypt_peer_age(dev, &f[2], 0), -ENOENT);
	KUNIT_EXPECT_EQ(test, mr_crypt_peer_age(dev, &f[1], 0), 0);
	KUNIT_EXPECT_EQ(test, mr_test_stat(dev, MR_CNT_PEER_EVICTIONS), 2ull);
	mr_crypt_dev_fini(dev);
	mr_counters_free(dev);
}

static struct kunit_case crypt_cases[] = {
	KUNIT_CASE(crypt_round_trip),
	KUNIT_CASE(crypt_tampered),
	KUNIT_CASE(crypt_wrong_key),
	KUNIT_CASE(crypt_nonce_unique),
	KUNIT_CASE(crypt_nonce_rederived),
	KUNIT_CASE(crypt_table_evicts_idle),
	{}
};

static struct kunit_suite crypt_suite = {
	.name = "metaroce_crypt",
	.init = crypt_init,
	.exit = crypt_exit,
	.test_cases = crypt_cases,
};

kunit_test_suite(crypt_suite);
