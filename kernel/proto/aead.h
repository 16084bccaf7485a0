/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Authenticated encryption of packets (AES-128-GCM), the pure parts: the
 * trailer layout, the nonce, the key derivation (HMAC-SHA256, with its own
 * SHA-256), the length rules and the pre-shared key's text form. The cipher itself is the kernel's
 * (crypt.c); protocol.rst, section "Encryption", has the rules.
 *
 * An encrypted packet: | base header (24, clear: the AAD) | ciphertext of
 * opcode header and payload | nonce counter (8, big-endian) | tag (16) |
 */
#ifndef METAROCE_PROTO_AEAD_H
#define METAROCE_PROTO_AEAD_H

#include "types.h"
#include "wire.h"

#define MR_AEAD_PSK_LEN 32u		/* the pre-shared key */
#define MR_AEAD_PSK_HEX_LEN (2 * MR_AEAD_PSK_LEN)
#define MR_AEAD_KEY_LEN 16u		/* AES-128 */
#define MR_AEAD_SALT_LEN 4u
#define MR_AEAD_COUNTER_LEN 8u
#define MR_AEAD_NONCE_LEN (MR_AEAD_SALT_LEN + MR_AEAD_COUNTER_LEN)
#define MR_AEAD_TAG_LEN 16u
#define MR_AEAD_TRAILER_LEN (MR_AEAD_COUNTER_LEN + MR_AEAD_TAG_LEN)
#define MR_AEAD_AAD_LEN MR_BASE_HDR_LEN
#define MR_AEAD_ADDR_LEN 16u		/* IPv6, or IPv4 v4-mapped */
#define MR_AEAD_KDF_OUT_LEN 32u	/* HMAC-SHA256 */

/* The key derivation's label: its input is label || src || dst. */
#define MR_AEAD_LABEL "MetaRoCE v2 AES-128-GCM"
#define MR_AEAD_LABEL_LEN (sizeof(MR_AEAD_LABEL) - 1)
#define MR_AEAD_KDF_IN_LEN (MR_AEAD_LABEL_LEN + 2 * MR_AEAD_ADDR_LEN)

/* The shortest opcode header: an encrypted packet has no less to hide. */
#define MR_AEAD_MIN_TEXT_LEN MR_NAK_HDR_LEN
#define MR_AEAD_MIN_LEN \
	(MR_AEAD_AAD_LEN + MR_AEAD_MIN_TEXT_LEN + MR_AEAD_TRAILER_LEN)

/*
 * What the trailer takes beyond MR_TRANSPORT_HDR_RESERVE in a data packet
 * (the reserve already leaves room above the longest data headers): an
 * encrypting device's netdev MTU carries this much less payload. ACKs,
 * NAKs and HELLOs carry no payload and fit in any usable MTU.
 */
#define MR_AEAD_DATA_HDR_MAX_LEN (MR_BASE_HDR_LEN + MR_WRITE_IMM_HDR_LEN)
#define MR_AEAD_MTU_EXTRA \
	(MR_AEAD_DATA_HDR_MAX_LEN + MR_AEAD_TRAILER_LEN - \
	 MR_TRANSPORT_HDR_RESERVE)

static_assert(MR_BASE_HDR_LEN + MR_CMP_SWAP_HDR_LEN <=
	      MR_AEAD_DATA_HDR_MAX_LEN, "a data header is longer");
static_assert(MR_MAX_HDR_LEN + MR_AEAD_TRAILER_LEN <=
	      MR_TRANSPORT_HDR_RESERVE + MR_AEAD_MTU_EXTRA + 256u,
	      "an encrypted ACK fits the smallest MTU");

/* SHA-256, for the key derivation's HMAC. */
#define MR_AEAD_SHA256_LEN 32u
#define MR_AEAD_SHA256_BLOCK 64u

struct mr_aead_sha256 {
	u32 h[8];
	u8 buf[MR_AEAD_SHA256_BLOCK];
	u64 len;	/* bytes so far */
	u32 fill;	/* bytes in buf */
};

/*
 * A receiver's replay window for one direction's key (protocol.rst,
 * "Replay"): counters within MR_AEAD_REPLAY_WINDOW below the highest
 * accepted are each taken once; older ones are stale. A counter at least
 * MR_AEAD_STREAM_SPAN away from the highest belongs to another stream
 * (the sender derived the key again, from a random start), which replaces
 * the current one unless its high 32 bits fall in a stream left before.
 */
#define MR_AEAD_REPLAY_WINDOW 1024u
#define MR_AEAD_REPLAY_RETIRED 8u
#define MR_AEAD_STREAM_SPAN 0x100000000ull	/* 2^32 */

/* The high 32 bits of a stream's first and highest counters. */
struct mr_aead_span {
	u32 lo;
	u32 hi;
};

struct mr_aead_replay {
	u64 top;		/* the highest counter accepted */
	u32 first;		/* the stream's first counter >> 32 */
	u32 n_retired;		/* streams left so far */
	bool started;
	/* Bit c % WINDOW: counter c, for c in (top - WINDOW, top], seen. */
	u64 seen[MR_AEAD_REPLAY_WINDOW / 64];
	struct mr_aead_span retired[MR_AEAD_REPLAY_RETIRED];
};

/* The base header flag of an encrypted packet. */
static inline bool mr_aead_is_encrypted(const u8 *buf)
{
	return buf[2] & MR_FLAG_ENCRYPTED;
}

int mr_aead_parse_psk(const char *text, u32 len, u8 psk[MR_AEAD_PSK_LEN]);
u32 mr_aead_kdf_input(u8 out[MR_AEAD_KDF_IN_LEN],
		      const u8 src[MR_AEAD_ADDR_LEN],
		      const u8 dst[MR_AEAD_ADDR_LEN]);
void mr_aead_sha256_init(struct mr_aead_sha256 *s);
void mr_aead_sha256_update(struct mr_aead_sha256 *s, const u8 *data, u32 len);
void mr_aead_sha256_final(struct mr_aead_sha256 *s,
			  u8 out[MR_AEAD_SHA256_LEN]);
void mr_aead_hmac_sha256(const u8 *key, u32 key_len, const u8 *msg,
			 u32 msg_len, u8 out[MR_AEAD_SHA256_LEN]);
void mr_aead_kdf(const u8 psk[MR_AEAD_PSK_LEN], const u8 src[MR_AEAD_ADDR_LEN],
		 const u8 dst[MR_AEAD_ADDR_LEN], u8 out[MR_AEAD_KDF_OUT_LEN]);
void mr_aead_nonce(u8 nonce[MR_AEAD_NONCE_LEN],
		   const u8 salt[MR_AEAD_SALT_LEN], u64 counter);
int mr_aead_text_len(u32 len, u32 *text_len);
void mr_aead_put_counter(u8 *pkt, u32 text_len, u64 counter);
u64 mr_aead_get_counter(const u8 *pkt, u32 text_len);
int mr_aead_replay_check(struct mr_aead_replay *r, u64 counter);

#endif /* METAROCE_PROTO_AEAD_H */
