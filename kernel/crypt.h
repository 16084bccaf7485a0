/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Optional authenticated encryption of every packet (AES-128-GCM), keyed
 * per direction and pair of addresses from the module's pre-shared key.
 */
#ifndef METAROCE_CRYPT_H
#define METAROCE_CRYPT_H

#include <linux/skbuff.h>

#include "counters.h"
#include "metaroce.h"
#include "proto/aead.h"

struct crypto_aead;

/*
 * One direction's key: the AES key in the transform, the salt, and the
 * next nonce counter, which starts at random when the key is derived.
 */
struct mr_crypt_dir {
	struct crypto_aead *tfm;
	u8 salt[MR_AEAD_SALT_LEN];
	atomic64_t counter;
};

int mr_crypt_dev_init(struct mr_dev *dev, const char *ibdev_name);
void mr_crypt_dev_fini(struct mr_dev *dev);
void mr_crypt_peer_prepare(struct mr_dev *dev, const struct mr_flow *flow);
int mr_crypt_tx(struct mr_dev *dev, struct sk_buff *skb,
		const struct mr_flow *flow);
int mr_crypt_rx(struct mr_dev *dev, struct sk_buff *skb,
		enum mr_counter *drop);

/*
 * A full table of peers makes room by evicting its least recently used
 * peer idle this long: address handles that send nothing hold no place.
 */
#define MR_CRYPT_IDLE (10 * HZ)

/* The parts below, for the KUnit suite. */
int mr_crypt_dev_init_key(struct mr_dev *dev, const char *ibdev_name,
			  const u8 *psk);
void mr_crypt_set_max_peers(struct mr_dev *dev, unsigned int max);
int mr_crypt_peer_age(struct mr_dev *dev, const struct mr_flow *flow,
		      unsigned long ago);
int mr_crypt_dir_init(struct mr_crypt_dir *dir, const u8 *psk,
		      const struct in6_addr *src, const struct in6_addr *dst);
void mr_crypt_dir_free(struct mr_crypt_dir *dir);
u64 mr_crypt_next_counter(struct mr_crypt_dir *dir);
int mr_crypt_seal(const struct mr_crypt_dir *dir, u8 *pkt, u32 len,
		  u64 counter);
int mr_crypt_open(const struct mr_crypt_dir *dir, u8 *pkt, u32 len);

#endif /* METAROCE_CRYPT_H */
