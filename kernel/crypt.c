// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Optional authenticated encryption (AES-128-GCM) of every packet of a
 * device. A device created while the module's psk is set encrypts all it
 * sends and drops all it receives in the clear, for its whole life; one
 * created without a key drops what arrives encrypted. proto/aead.c has
 * the layout, protocol.rst ("Encryption") the rules.
 *
 * Each pair of addresses (ours, the peer's) has two keys, one per
 * direction, derived from the psk with HMAC-SHA256 (proto/aead.c).
 * Allocating a cipher and setting its key may sleep, so the table of peers
 * fills in process context: when an RC or UC QP goes to RTR, when a
 * sleepable AH is created, or from a work item that a packet to or from an
 * unknown peer schedules (that packet is dropped; the next one, or the
 * retransmission, finds the key). Keys a received packet asked for are
 * kept only if that packet opens with them, the table is bounded, and so
 * is the rate of derivations for received packets, as every packet is
 * hostile until its tag is checked.
 *
 * Nonces: keys are static, so a nonce must never repeat. Each sending key
 * counts from a random 64-bit start drawn when it is derived, so no clock
 * is trusted: another boot, a clone or another device deriving the same
 * key starts elsewhere. Each receiving key keeps a replay window
 * (proto/aead.c) that takes a counter once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <crypto/aead.h>
#include <kunit/visibility.h>
#include <linux/moduleparam.h>
#include <linux/random.h>
#include <linux/ratelimit.h>
#include <linux/rculist.h>
#include <linux/scatterlist.h>
#include <linux/siphash.h>
#include <linux/workqueue.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/udp.h>

#include "crypt.h"

/* Peers a device keeps keys for: each costs two cipher transforms. */
#define MR_CRYPT_MAX_PEERS 1024
#define MR_CRYPT_BUCKETS 256
/* Peers the packet path asked for that the work item has not made yet. */
#define MR_CRYPT_MAX_PENDING 16
/*
 * Keys a device derives for packets from unknown senders, per second (a
 * burst of as many): each costs an HMAC, a transform and a decryption,
 * and a forged source address costs its sender nothing.
 */
#define MR_CRYPT_RX_MAKE_PER_SEC 32

/* A table key: our address and the peer's, both as IPv6 (v4-mapped). */
struct mr_crypt_addrs {
	struct in6_addr local;
	struct in6_addr peer;
};

/*
 * Keys asked for by the packet path. @pkt: a copy of the received packet
 * that asked, which the keys must open before they are kept; NULL when we
 * send to the peer (we chose it).
 */
struct mr_crypt_request {
	struct mr_crypt_addrs addrs;
	u8 *pkt;
	u32 len;
};

/* The keys of one pair of addresses; freed with the device, or evicted. */
struct mr_crypt_peer {
	struct hlist_node node;		/* in a bucket, under RCU */
	struct mr_crypt_addrs addrs;
	struct mr_crypt_dir tx;		/* K(local, peer) */
	struct mr_crypt_dir rx;		/* K(peer, local) */
	unsigned long used;		/* jiffies: the last packet's */
	spinlock_t replay_lock;
	struct mr_aead_replay replay;	/* rx's counters */
};

/* A device's encryption state (dev->crypt; NULL: it sends in the clear). */
struct mr_crypt {
	struct mr_dev *dev;
	u8 psk[MR_AEAD_PSK_LEN];	/* the module's, when it was created */
	struct mutex lock;		/* serialises making peers */
	/* The peers, added under @lock, read under RCU, freed at the end. */
	struct hlist_head peers[MR_CRYPT_BUCKETS];
	hsiphash_key_t hash_key;	/* random: addresses are the sender's */
	atomic_t n_peers;
	unsigned int max_peers;		/* MR_CRYPT_MAX_PEERS; tests less */
	spinlock_t pending_lock;	/* @pending, @n_pending, @dying */
	struct mr_crypt_request pending[MR_CRYPT_MAX_PENDING];
	unsigned int n_pending;
	bool dying;
	bool full_warned;		/* under @lock */
	struct ratelimit_state rx_make;	/* asked for by received packets */
	struct work_struct work;
};

static struct hlist_head *mr_crypt_bucket(struct mr_crypt *c,
					  const struct mr_crypt_addrs *a)
{
	u32 h = hsiphash(a, sizeof(*a), &c->hash_key);

	return &c->peers[h % MR_CRYPT_BUCKETS];
}

/* Under RCU or @c->lock: the keys of @a, or NULL. */
static struct mr_crypt_peer *mr_crypt_find(struct mr_crypt *c,
					   const struct mr_crypt_addrs *a)
{
	struct mr_crypt_peer *peer;

	hlist_for_each_entry_rcu(peer, mr_crypt_bucket(c, a), node,
				 lockdep_is_held(&c->lock))
		if (!memcmp(&peer->addrs, a, sizeof(*a)))
			return peer;
	return NULL;
}

/* The psk as the parameter holds it; devices copy it at creation. */
static DEFINE_MUTEX(mr_crypt_psk_lock);
static u8 mr_crypt_psk[MR_AEAD_PSK_LEN];
static bool mr_crypt_psk_set;

static int mr_crypt_psk_store(const char *val, const struct kernel_param *kp)
{
	u8 psk[MR_AEAD_PSK_LEN];
	size_t len;
	int err;

	/* "metaroce.psk" on the command line, without "=": none. */
	len = val ? strlen(val) : 0;
	if (len && val[len - 1] == '\n')
		len--;
	if (!len) {
		mutex_lock(&mr_crypt_psk_lock);
		memzero_explicit(mr_crypt_psk, sizeof(mr_crypt_psk));
		mr_crypt_psk_set = false;
		mutex_unlock(&mr_crypt_psk_lock);
		return 0;
	}
	err = mr_aead_parse_psk(val, len, psk);
	if (err == -MR_ELENGTH) {
		pr_warn("psk: %zu characters; it must be %u hex digits (a %u-byte key), or empty for no encryption\n",
			len, MR_AEAD_PSK_HEX_LEN, MR_AEAD_PSK_LEN);
		return -EINVAL;
	}
	if (err) {
		pr_warn("psk: not a hex number; it must be %u hex digits (a %u-byte key), or empty for no encryption\n",
			MR_AEAD_PSK_HEX_LEN, MR_AEAD_PSK_LEN);
		return -EINVAL;
	}
	mutex_lock(&mr_crypt_psk_lock);
	memcpy(mr_crypt_psk, psk, sizeof(psk));
	mr_crypt_psk_set = true;
	mutex_unlock(&mr_crypt_psk_lock);
	memzero_explicit(psk, sizeof(psk));
	return 0;
}

static int mr_crypt_psk_show(char *buf, const struct kernel_param *kp)
{
	int n = 0;

	mutex_lock(&mr_crypt_psk_lock);
	if (mr_crypt_psk_set)
		n = sprintf(buf, "%*phN\n", (int)MR_AEAD_PSK_LEN,
			    mr_crypt_psk);
	mutex_unlock(&mr_crypt_psk_lock);
	return n;
}

static const struct kernel_param_ops mr_crypt_psk_ops = {
	.set = mr_crypt_psk_store,
	.get = mr_crypt_psk_show,
};

module_param_cb(psk, &mr_crypt_psk_ops, NULL, 0600);
MODULE_PARM_DESC(psk, "Pre-shared key of devices added from now on: 64 hex digits to encrypt with AES-128-GCM, empty (default) for none");

/* A nonce counter never used before with @dir's key (but by chance). */
u64 mr_crypt_next_counter(struct mr_crypt_dir *dir)
{
	return atomic64_inc_return(&dir->counter);
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_next_counter);

/**
 * mr_crypt_dir_init() - the key of packets from @src to @dst
 * @dir: filled in; free it with mr_crypt_dir_free()
 * @psk: the pre-shared key
 * @src: the sender's address
 * @dst: the receiver's
 *
 * Process context: allocating the transform and setting its key sleep.
 *
 * Return: 0 or a negative errno.
 */
int mr_crypt_dir_init(struct mr_crypt_dir *dir, const u8 *psk,
		      const struct in6_addr *src, const struct in6_addr *dst)
{
	u8 out[MR_AEAD_KDF_OUT_LEN];
	struct crypto_aead *tfm;
	int err;

	mr_aead_kdf(psk, src->s6_addr, dst->s6_addr, out);
	/* Synchronous only: requests complete inline, in softirq too. */
	tfm = crypto_alloc_aead("gcm(aes)", 0, CRYPTO_ALG_ASYNC);
	if (IS_ERR(tfm)) {
		err = PTR_ERR(tfm);
		goto out;
	}
	err = crypto_aead_setkey(tfm, out, MR_AEAD_KEY_LEN);
	if (!err)
		err = crypto_aead_setauthsize(tfm, MR_AEAD_TAG_LEN);
	if (err) {
		crypto_free_aead(tfm);
		goto out;
	}
	dir->tfm = tfm;
	memcpy(dir->salt, out + MR_AEAD_KEY_LEN, MR_AEAD_SALT_LEN);
	atomic64_set(&dir->counter, get_random_u64());
out:
	memzero_explicit(out, sizeof(out));
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_dir_init);

void mr_crypt_dir_free(struct mr_crypt_dir *dir)
{
	if (dir->tfm)
		crypto_free_aead(dir->tfm);
	dir->tfm = NULL;
	memzero_explicit(dir->salt, sizeof(dir->salt));
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_dir_free);

/*
 * One GCM operation in place over a linear packet: the base header is
 * the AAD, the @text_len bytes after it the text, and the tag follows the
 * trailer's counter, which the sg list steps over.
 */
static int mr_crypt_run(const struct mr_crypt_dir *dir, u8 *pkt,
			u32 text_len, u64 counter, bool encrypt)
{
	u8 *tag = pkt + MR_AEAD_AAD_LEN + text_len + MR_AEAD_COUNTER_LEN;
	u8 nonce[MR_AEAD_NONCE_LEN];
	struct aead_request *req;
	struct scatterlist sg[3];
	int err;

	req = aead_request_alloc(dir->tfm, GFP_ATOMIC);
	if (!req)
		return -ENOMEM;
	mr_aead_nonce(nonce, dir->salt, counter);
	sg_init_table(sg, ARRAY_SIZE(sg));
	sg_set_buf(&sg[0], pkt, MR_AEAD_AAD_LEN);
	sg_set_buf(&sg[1], pkt + MR_AEAD_AAD_LEN, text_len);
	sg_set_buf(&sg[2], tag, MR_AEAD_TAG_LEN);
	aead_request_set_callback(req, 0, NULL, NULL);
	aead_request_set_ad(req, MR_AEAD_AAD_LEN);
	aead_request_set_crypt(req, sg, sg,
			       encrypt ? text_len : text_len + MR_AEAD_TAG_LEN,
			       nonce);
	err = encrypt ? crypto_aead_encrypt(req) : crypto_aead_decrypt(req);
	aead_request_free(req);
	return err;
}

/**
 * mr_crypt_seal() - encrypt a packet in place
 * @dir: the key from us to the receiver
 * @pkt: the encoded packet, linear, with MR_AEAD_TRAILER_LEN bytes of
 *	 room after it
 * @len: its length, headers and payload
 * @counter: from mr_crypt_next_counter(@dir), never used with this key
 *
 * Sets ENCRYPTED in the base header, which stays clear (the AAD), and
 * writes the trailer: @counter, then the tag.
 *
 * Return: 0 or a negative errno.
 */
int mr_crypt_seal(const struct mr_crypt_dir *dir, u8 *pkt, u32 len,
		  u64 counter)
{
	u32 text_len = len - MR_AEAD_AAD_LEN;

	if (len < MR_AEAD_AAD_LEN + MR_AEAD_MIN_TEXT_LEN)
		return -EINVAL;
	pkt[2] |= MR_FLAG_ENCRYPTED;
	mr_aead_put_counter(pkt, text_len, counter);
	return mr_crypt_run(dir, pkt, text_len, counter, true);
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_seal);

/**
 * mr_crypt_open() - check and decrypt a packet in place
 * @dir: the key from the sender to us
 * @pkt: the packet as received, linear and writable
 * @len: its length, trailer included
 *
 * On success the packet is the clear one the sender encoded: ENCRYPTED is
 * cleared again, and the trailer is no longer part of it.
 *
 * Return: the clear packet's length, -EINVAL if @len cannot be an
 * encrypted packet, -EBADMSG if the tag does not check (tampered, or
 * another key), or another negative errno.
 */
int mr_crypt_open(const struct mr_crypt_dir *dir, u8 *pkt, u32 len)
{
	u32 text_len;
	int err;

	if (mr_aead_text_len(len, &text_len) || !mr_aead_is_encrypted(pkt))
		return -EINVAL;
	err = mr_crypt_run(dir, pkt, text_len,
			   mr_aead_get_counter(pkt, text_len), false);
	if (err)
		return err;
	pkt[2] &= ~MR_FLAG_ENCRYPTED;
	return (int)(MR_AEAD_AAD_LEN + text_len);
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_open);

static void mr_crypt_peer_free(struct mr_crypt_peer *peer)
{
	mr_crypt_dir_free(&peer->tx);
	mr_crypt_dir_free(&peer->rx);
	kfree(peer);
}

/*
 * Under @c->lock, sleeps: frees the least recently used peer unused since
 * @before. Return: whether one was.
 */
static bool mr_crypt_evict(struct mr_crypt *c, unsigned long before)
{
	struct mr_crypt_peer *peer, *lru = NULL;
	unsigned int i;

	for (i = 0; i < MR_CRYPT_BUCKETS; i++)
		hlist_for_each_entry(peer, &c->peers[i], node) {
			unsigned long used = READ_ONCE(peer->used);

			if (time_before(used, before) &&
			    (!lru || time_before(used, READ_ONCE(lru->used))))
				lru = peer;
		}
	if (!lru)
		return false;
	hlist_del_rcu(&lru->node);
	atomic_dec(&c->n_peers);
	/* Packets that found it are done with its keys. */
	synchronize_rcu();
	mr_crypt_peer_free(lru);
	mr_stats_inc(c->dev, MR_CNT_PEER_EVICTIONS);
	return true;
}

/*
 * Process context: the keys of @a, made unless they exist. With @pkt, the
 * received packet that asked for them, they are kept only if it opens
 * with them: a forged sender's packet leaves nothing behind.
 */
static int mr_crypt_peer_make(struct mr_crypt *c, const struct mr_crypt_addrs *a,
			      u8 *pkt, u32 len)
{
	struct mr_crypt_peer *peer;
	int err;

	mutex_lock(&c->lock);
	if (mr_crypt_find(c, a)) {
		err = 0;
		goto out;
	}
	if (atomic_read(&c->n_peers) >= c->max_peers &&
	    !mr_crypt_evict(c, jiffies - MR_CRYPT_IDLE)) {
		if (!c->full_warned)
			ibdev_warn(&c->dev->ib_dev, "keys for %u peers, none idle: packets of new peers are dropped (rx/tx_drop_no_key)\n",
				   c->max_peers);
		c->full_warned = true;
		mr_stats_inc(c->dev, MR_CNT_PEER_TABLE_FULL);
		err = -ENOSPC;
		goto out;
	}
	peer = kzalloc(sizeof(*peer), GFP_KERNEL);
	if (!peer) {
		err = -ENOMEM;
		goto out;
	}
	peer->addrs = *a;
	peer->used = jiffies;
	spin_lock_init(&peer->replay_lock);
	/* The receiving key first: a forged packet costs no more. */
	err = mr_crypt_dir_init(&peer->rx, c->psk, &a->peer, &a->local);
	if (!err && pkt && mr_crypt_open(&peer->rx, pkt, len) < 0) {
		mr_crypt_peer_free(peer);
		mr_stats_inc(c->dev, MR_CNT_RX_PEER_UNPROVEN);
		err = -EBADMSG;
		goto out;
	}
	if (!err)
		err = mr_crypt_dir_init(&peer->tx, c->psk, &a->local,
					&a->peer);
	if (err) {
		mr_crypt_peer_free(peer);
		ibdev_warn_ratelimited(&c->dev->ib_dev, "no key for %pI6c to %pI6c (%d)\n",
				       &a->local, &a->peer, err);
		goto out;
	}
	hlist_add_head_rcu(&peer->node, mr_crypt_bucket(c, a));
	atomic_inc(&c->n_peers);
out:
	mutex_unlock(&c->lock);
	return err;
}

static void mr_crypt_work(struct work_struct *work)
{
	struct mr_crypt *c = container_of(work, struct mr_crypt, work);
	struct mr_crypt_request r;

	for (;;) {
		spin_lock_irq(&c->pending_lock);
		if (!c->n_pending || c->dying) {
			spin_unlock_irq(&c->pending_lock);
			return;
		}
		r = c->pending[--c->n_pending];
		spin_unlock_irq(&c->pending_lock);
		mr_crypt_peer_make(c, &r.addrs, r.pkt, r.len);
		kfree(r.pkt);
	}
}

/*
 * Any context: ask the work item for the keys of @a (bounded), with a copy
 * of @pkt (@len bytes), the received packet that needs them, or NULL.
 */
static void mr_crypt_request(struct mr_crypt *c, const struct mr_crypt_addrs *a,
			     const u8 *pkt, u32 len)
{
	struct mr_crypt_request *r;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&c->pending_lock, flags);
	for (i = 0; i < c->n_pending; i++)
		if (!memcmp(&c->pending[i].addrs, a, sizeof(*a)))
			break;
	if (!c->dying && i == c->n_pending && i < MR_CRYPT_MAX_PENDING) {
		/* Outside the limit: dropped as without keys, and counted. */
		if (pkt && !__ratelimit(&c->rx_make)) {
			mr_stats_inc(c->dev, MR_CNT_RX_KEY_RATE_LIMITED);
			goto out;
		}
		r = &c->pending[i];
		r->addrs = *a;
		r->len = len;
		r->pkt = pkt ? kmemdup(pkt, len, GFP_ATOMIC) : NULL;
		if (!pkt || r->pkt) {
			c->n_pending++;
			queue_work(system_unbound_wq, &c->work);
		}
	}
out:
	spin_unlock_irqrestore(&c->pending_lock, flags);
}

/*
 * Under RCU: the keys of @a, or NULL (and they are asked for, with @pkt:
 * the received packet of @len bytes, or NULL when we send).
 */
static struct mr_crypt_peer *mr_crypt_lookup(struct mr_crypt *c,
					     const struct mr_crypt_addrs *a,
					     const u8 *pkt, u32 len)
{
	unsigned long now = jiffies;
	struct mr_crypt_peer *peer;

	peer = mr_crypt_find(c, a);
	if (!peer)
		mr_crypt_request(c, a, pkt, len);
	else if (READ_ONCE(peer->used) != now)	/* a write a tick at most */
		WRITE_ONCE(peer->used, now);
	return peer;
}

/*
 * A sleepable context knows a peer (modify_qp to RTR, a sleepable AH):
 * make its keys now, so that its first packets find them.
 */
void mr_crypt_peer_prepare(struct mr_dev *dev, const struct mr_flow *flow)
{
	struct mr_crypt_addrs a = {
		.local = flow->saddr,
		.peer = flow->daddr,
	};

	might_sleep();
	if (dev->crypt)
		mr_crypt_peer_make(dev->crypt, &a, NULL, 0);
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_peer_prepare);

/**
 * mr_crypt_tx() - encrypt a packet about to be sent, if the device does
 * @dev: the sending device
 * @skb: from mr_socket_new_pkt(), skb->data at the MetaRoCE headers
 * @flow: its addresses
 *
 * A packet to a peer whose keys are not made yet is dropped (and the
 * keys asked for): RC resends it, UD is unreliable. Drops are counted.
 *
 * Return: 0 (encrypted, or the device does not encrypt), or a negative
 * errno: the caller frees the packet.
 */
int mr_crypt_tx(struct mr_dev *dev, struct sk_buff *skb,
		const struct mr_flow *flow)
{
	struct mr_crypt_addrs a = {
		.local = flow->saddr,
		.peer = flow->daddr,
	};
	struct mr_crypt *c = dev->crypt;
	struct mr_crypt_peer *peer;
	u32 len = skb->len;
	int err;

	if (!c)
		return 0;
	/* mr_socket_new_pkt() leaves the room. */
	if (WARN_ON_ONCE(skb_is_nonlinear(skb) ||
			 skb_tailroom(skb) < MR_AEAD_TRAILER_LEN)) {
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		return -EINVAL;
	}
	rcu_read_lock();
	peer = mr_crypt_lookup(c, &a, NULL, 0);
	if (!peer) {
		rcu_read_unlock();
		mr_stats_inc(dev, MR_CNT_TX_DROP_NO_KEY);
		return -ENOKEY;
	}
	err = mr_crypt_seal(&peer->tx, skb->data, len,
			    mr_crypt_next_counter(&peer->tx));
	rcu_read_unlock();
	if (err) {
		mr_stats_inc(dev, MR_CNT_TX_DROP_ERROR);
		return err;
	}
	skb_put(skb, MR_AEAD_TRAILER_LEN);
	mr_stats_inc(dev, MR_CNT_TX_ENCRYPTED);
	return 0;
}

/* The addresses of a received datagram: ours is its destination. */
static void mr_crypt_rx_addrs(const struct sk_buff *skb,
			      struct mr_crypt_addrs *a)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr, &a->local);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr, &a->peer);
	} else {
		a->local = ipv6_hdr(skb)->daddr;
		a->peer = ipv6_hdr(skb)->saddr;
	}
}

/**
 * mr_crypt_rx() - check and decrypt a received packet, if the device
 * encrypts
 * @dev: the receiving device
 * @skb: the datagram, skb->data at the UDP header, the base header linear
 * @drop: set to the counter of the drop, on failure
 *
 * In softirq, before the packet is decoded or touches any state. On
 * success @skb holds the clear packet (trailer trimmed, ENCRYPTED
 * cleared) for the codec.
 *
 * A device without a key leaves every packet to the codec, which drops
 * the encrypted ones (ENCRYPTED is no flag of its), and counts those.
 *
 * A packet that opens is then checked against the replay window of its
 * key, which takes each counter once: a recorded packet sent again (UD and
 * QP1 have no sequence of their own) is dropped.
 *
 * Return: 0, or -EBADMSG when the packet must be dropped (*@drop says why).
 */
int mr_crypt_rx(struct mr_dev *dev, struct sk_buff *skb,
		enum mr_counter *drop)
{
	const unsigned int off = sizeof(struct udphdr);
	struct mr_crypt *c = dev->crypt;
	u32 len = skb->len - off, text_len;
	struct mr_crypt_peer *peer;
	struct mr_crypt_addrs a;
	bool encrypted;
	u64 counter;
	int n;

	encrypted = mr_aead_is_encrypted(skb->data + off);
	if (!c) {
		/*
		 * The codec drops it as any packet with an undefined flag
		 * (rx_drop_malformed, or short or version first), as a
		 * receiver that knows nothing of encryption would; this
		 * counter says which of those drops were encrypted.
		 */
		if (encrypted)
			mr_stats_inc(dev, MR_CNT_RX_DROP_ENCRYPTED);
		return 0;
	}
	if (!encrypted) {
		*drop = MR_CNT_RX_DROP_NOT_ENCRYPTED;
		return -EBADMSG;
	}
	if (mr_aead_text_len(len, &text_len)) {
		*drop = MR_CNT_RX_DROP_SHORT;
		return -EBADMSG;
	}
	mr_crypt_rx_addrs(skb, &a);
	/* Decrypted in place: linear, and ours alone. */
	if (skb_ensure_writable(skb, skb->len)) {
		*drop = MR_CNT_RX_DROP_SHORT;
		return -EBADMSG;
	}
	rcu_read_lock();
	peer = mr_crypt_lookup(c, &a, skb->data + off, len);
	if (!peer) {
		rcu_read_unlock();
		*drop = MR_CNT_RX_DROP_NO_KEY;
		return -EBADMSG;
	}
	counter = mr_aead_get_counter(skb->data + off, text_len);
	n = mr_crypt_open(&peer->rx, skb->data + off, len);
	/* Only a counter the tag vouches for moves the window. */
	if (n >= 0) {
		spin_lock_bh(&peer->replay_lock);
		if (mr_aead_replay_check(&peer->replay, counter))
			n = -EALREADY;
		spin_unlock_bh(&peer->replay_lock);
	}
	rcu_read_unlock();
	if (n < 0) {
		/* A failed tag, a replay, or (rarely) no memory. */
		*drop = n == -EBADMSG ? MR_CNT_RX_DROP_AUTH :
			n == -EALREADY ? MR_CNT_RX_DROP_REPLAY :
					MR_CNT_RX_DROP_SHORT;
		return -EBADMSG;
	}
	skb_trim(skb, off + n);
	mr_stats_inc(dev, MR_CNT_RX_DECRYPTED);
	return 0;
}

/*
 * Whether this kernel can give a device its cipher: a device that cannot
 * make keys must not be created, or every connection of it times out.
 */
static int mr_crypt_probe(const char *ibdev_name)
{
	struct crypto_aead *tfm;
	int err;

	tfm = crypto_alloc_aead("gcm(aes)", 0, CRYPTO_ALG_ASYNC);
	if (!IS_ERR(tfm)) {
		crypto_free_aead(tfm);
		return 0;
	}
	err = PTR_ERR(tfm);
	pr_err("%s: the psk is set but this kernel has no synchronous gcm(aes) (%d): load the gcm module, or clear the psk\n",
	       ibdev_name, err);
	/* "No such file or directory" would point at the netdev. */
	return err == -ENOENT ? -ENOPKG : err;
}

/*
 * At creation, before registration: a device added while the psk is set
 * encrypts with it for its whole life.
 */
int mr_crypt_dev_init(struct mr_dev *dev, const char *ibdev_name)
{
	u8 psk[MR_AEAD_PSK_LEN];
	bool set;
	int err = 0;

	mutex_lock(&mr_crypt_psk_lock);
	set = mr_crypt_psk_set;
	memcpy(psk, mr_crypt_psk, sizeof(psk));
	mutex_unlock(&mr_crypt_psk_lock);
	if (set)
		err = mr_crypt_dev_init_key(dev, ibdev_name, psk);
	memzero_explicit(psk, sizeof(psk));
	return err;
}

/* mr_crypt_dev_init() with @psk. */
int mr_crypt_dev_init_key(struct mr_dev *dev, const char *ibdev_name,
			  const u8 *psk)
{
	struct mr_crypt *c;
	int err;

	err = mr_crypt_probe(ibdev_name);
	if (err)
		return err;
	c = kzalloc(sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->dev = dev;
	mutex_init(&c->lock);
	spin_lock_init(&c->pending_lock);
	INIT_WORK(&c->work, mr_crypt_work);
	atomic_set(&c->n_peers, 0);
	c->max_peers = MR_CRYPT_MAX_PEERS;
	ratelimit_state_init(&c->rx_make, HZ, MR_CRYPT_RX_MAKE_PER_SEC);
	/* Counted, not logged. */
	ratelimit_set_flags(&c->rx_make, RATELIMIT_MSG_ON_RELEASE);
	memcpy(c->psk, psk, sizeof(c->psk));
	get_random_bytes(&c->hash_key, sizeof(c->hash_key));
	dev->crypt = c;
	dev->mtu_extra = MR_AEAD_MTU_EXTRA;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_dev_init_key);

/*
 * For tests: limit @dev's table to @max peers, and make the peer of
 * @flow look unused for @ago jiffies. Return: -ENOENT if it has no keys.
 */
void mr_crypt_set_max_peers(struct mr_dev *dev, unsigned int max)
{
	dev->crypt->max_peers = max;
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_set_max_peers);

int mr_crypt_peer_age(struct mr_dev *dev, const struct mr_flow *flow,
		      unsigned long ago)
{
	struct mr_crypt_addrs a = {
		.local = flow->saddr,
		.peer = flow->daddr,
	};
	struct mr_crypt_peer *peer;
	int err = -ENOENT;

	rcu_read_lock();
	peer = mr_crypt_find(dev->crypt, &a);
	if (peer) {
		WRITE_ONCE(peer->used, jiffies - ago);
		err = 0;
	}
	rcu_read_unlock();
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_peer_age);

/* From dealloc_driver: no packet reads the keys any more. */
void mr_crypt_dev_fini(struct mr_dev *dev)
{
	struct mr_crypt *c = dev->crypt;
	struct mr_crypt_peer *peer;
	struct hlist_node *next;
	unsigned int i;

	if (!c)
		return;
	spin_lock_irq(&c->pending_lock);
	c->dying = true;
	spin_unlock_irq(&c->pending_lock);
	cancel_work_sync(&c->work);
	dev->crypt = NULL;
	/* Lookups of the last packets are over before the keys go. */
	synchronize_rcu();
	for (i = 0; i < c->n_pending; i++)
		kfree(c->pending[i].pkt);
	for (i = 0; i < MR_CRYPT_BUCKETS; i++)
		hlist_for_each_entry_safe(peer, next, &c->peers[i], node)
			mr_crypt_peer_free(peer);
	memzero_explicit(c->psk, sizeof(c->psk));
	mutex_destroy(&c->lock);
	kfree(c);
}
EXPORT_SYMBOL_IF_KUNIT(mr_crypt_dev_fini);
