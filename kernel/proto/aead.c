// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The pure parts of packet encryption: what goes where in an encrypted
 * packet, and the bytes the key derivation and the nonce are made of.
 */
#include "aead.h"

static int mr_aead_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/**
 * mr_aead_parse_psk() - the pre-shared key from its text form
 * @text: exactly MR_AEAD_PSK_HEX_LEN hex digits, either case
 * @len: the length of @text, without any trailing newline
 * @psk: the key, written only on success
 *
 * Return: 0, -MR_ELENGTH for the wrong number of characters, or -MR_EFIELD
 * for a character that is not a hex digit.
 */
int mr_aead_parse_psk(const char *text, u32 len, u8 psk[MR_AEAD_PSK_LEN])
{
	u8 key[MR_AEAD_PSK_LEN];
	u32 i;

	if (len != MR_AEAD_PSK_HEX_LEN)
		return -MR_ELENGTH;
	for (i = 0; i < MR_AEAD_PSK_LEN; i++) {
		int hi = mr_aead_hex_digit(text[2 * i]);
		int lo = mr_aead_hex_digit(text[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -MR_EFIELD;
		key[i] = (u8)(hi << 4 | lo);
	}
	for (i = 0; i < MR_AEAD_PSK_LEN; i++)
		psk[i] = key[i];
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_parse_psk);

/**
 * mr_aead_kdf_input() - what HMAC-SHA256(psk, ...) derives a key from
 * @out: MR_AEAD_KDF_IN_LEN bytes: the label, then @src, then @dst
 * @src: the sending end's address (IPv4 v4-mapped)
 * @dst: the receiving end's
 *
 * Each direction of a pair of addresses has its own key: bytes 0-15 of
 * the HMAC are the AES key, 16-19 the nonce salt.
 *
 * Return: MR_AEAD_KDF_IN_LEN.
 */
u32 mr_aead_kdf_input(u8 out[MR_AEAD_KDF_IN_LEN],
		      const u8 src[MR_AEAD_ADDR_LEN],
		      const u8 dst[MR_AEAD_ADDR_LEN])
{
	static const char label[] = MR_AEAD_LABEL;
	u32 i;

	for (i = 0; i < MR_AEAD_LABEL_LEN; i++)
		out[i] = (u8)label[i];
	for (i = 0; i < MR_AEAD_ADDR_LEN; i++) {
		out[MR_AEAD_LABEL_LEN + i] = src[i];
		out[MR_AEAD_LABEL_LEN + MR_AEAD_ADDR_LEN + i] = dst[i];
	}
	return MR_AEAD_KDF_IN_LEN;
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_kdf_input);

/*
 * SHA-256 (FIPS 180-4) and HMAC (RFC 2104), for the key derivation only:
 * a few calls per peer, in process context. Here rather than the
 * kernel's crypto API so that the derivation is the same everywhere (the
 * debug test kernel has no hmac(sha256)) and testable on the host.
 */
static const u32 mr_aead_sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5,
	0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
	0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
	0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
	0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc,
	0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
	0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
	0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
	0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
	0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
	0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
	0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
	0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static u32 mr_aead_ror(u32 x, unsigned int n)
{
	return x >> n | x << (32 - n);
}

static void mr_aead_sha256_block(u32 h[8], const u8 *p)
{
	u32 w[64], v[8], t1, t2;
	unsigned int i;

	for (i = 0; i < 16; i++)
		w[i] = mr_get_be32(p + 4 * i);
	for (i = 16; i < 64; i++)
		w[i] = w[i - 16] + w[i - 7] +
		       (mr_aead_ror(w[i - 15], 7) ^ mr_aead_ror(w[i - 15], 18) ^
			w[i - 15] >> 3) +
		       (mr_aead_ror(w[i - 2], 17) ^ mr_aead_ror(w[i - 2], 19) ^
			w[i - 2] >> 10);
	for (i = 0; i < 8; i++)
		v[i] = h[i];
	for (i = 0; i < 64; i++) {
		t1 = v[7] + (mr_aead_ror(v[4], 6) ^ mr_aead_ror(v[4], 11) ^
			     mr_aead_ror(v[4], 25)) +
		     ((v[4] & v[5]) ^ (~v[4] & v[6])) + mr_aead_sha256_k[i] +
		     w[i];
		t2 = (mr_aead_ror(v[0], 2) ^ mr_aead_ror(v[0], 13) ^
		      mr_aead_ror(v[0], 22)) +
		     ((v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]));
		v[7] = v[6];
		v[6] = v[5];
		v[5] = v[4];
		v[4] = v[3] + t1;
		v[3] = v[2];
		v[2] = v[1];
		v[1] = v[0];
		v[0] = t1 + t2;
	}
	for (i = 0; i < 8; i++)
		h[i] += v[i];
}

void mr_aead_sha256_init(struct mr_aead_sha256 *s)
{
	static const u32 iv[8] = {
		0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
		0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
	};
	unsigned int i;

	for (i = 0; i < 8; i++)
		s->h[i] = iv[i];
	s->len = 0;
	s->fill = 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_sha256_init);

void mr_aead_sha256_update(struct mr_aead_sha256 *s, const u8 *data, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++) {
		s->buf[s->fill++] = data[i];
		if (s->fill == MR_AEAD_SHA256_BLOCK) {
			mr_aead_sha256_block(s->h, s->buf);
			s->fill = 0;
		}
	}
	s->len += len;
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_sha256_update);

void mr_aead_sha256_final(struct mr_aead_sha256 *s,
			  u8 out[MR_AEAD_SHA256_LEN])
{
	u64 bits = s->len * 8;
	unsigned int i;

	s->buf[s->fill++] = 0x80;
	if (s->fill > MR_AEAD_SHA256_BLOCK - 8) {
		while (s->fill < MR_AEAD_SHA256_BLOCK)
			s->buf[s->fill++] = 0;
		mr_aead_sha256_block(s->h, s->buf);
		s->fill = 0;
	}
	while (s->fill < MR_AEAD_SHA256_BLOCK - 8)
		s->buf[s->fill++] = 0;
	mr_put_be64(s->buf + MR_AEAD_SHA256_BLOCK - 8, bits);
	mr_aead_sha256_block(s->h, s->buf);
	for (i = 0; i < 8; i++)
		mr_put_be32(out + 4 * i, s->h[i]);
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_sha256_final);

/* HMAC-SHA256 of @msg under @key (of any length). */
void mr_aead_hmac_sha256(const u8 *key, u32 key_len, const u8 *msg,
			 u32 msg_len, u8 out[MR_AEAD_SHA256_LEN])
{
	u8 k[MR_AEAD_SHA256_BLOCK] = { 0 }, pad[MR_AEAD_SHA256_BLOCK];
	u8 inner[MR_AEAD_SHA256_LEN];
	struct mr_aead_sha256 s;
	u32 i;

	if (key_len > MR_AEAD_SHA256_BLOCK) {
		mr_aead_sha256_init(&s);
		mr_aead_sha256_update(&s, key, key_len);
		mr_aead_sha256_final(&s, k);
	} else {
		for (i = 0; i < key_len; i++)
			k[i] = key[i];
	}
	for (i = 0; i < MR_AEAD_SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	mr_aead_sha256_init(&s);
	mr_aead_sha256_update(&s, pad, sizeof(pad));
	mr_aead_sha256_update(&s, msg, msg_len);
	mr_aead_sha256_final(&s, inner);
	for (i = 0; i < MR_AEAD_SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	mr_aead_sha256_init(&s);
	mr_aead_sha256_update(&s, pad, sizeof(pad));
	mr_aead_sha256_update(&s, inner, sizeof(inner));
	mr_aead_sha256_final(&s, out);
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_hmac_sha256);

/**
 * mr_aead_kdf() - the key material of packets from @src to @dst
 * @psk: the pre-shared key
 * @src: the sender's address (IPv4 v4-mapped)
 * @dst: the receiver's
 * @out: HMAC-SHA256(psk, label || src || dst): bytes 0-15 the AES key,
 *	 16-19 the nonce salt
 */
void mr_aead_kdf(const u8 psk[MR_AEAD_PSK_LEN], const u8 src[MR_AEAD_ADDR_LEN],
		 const u8 dst[MR_AEAD_ADDR_LEN], u8 out[MR_AEAD_KDF_OUT_LEN])
{
	u8 in[MR_AEAD_KDF_IN_LEN];

	mr_aead_kdf_input(in, src, dst);
	mr_aead_hmac_sha256(psk, MR_AEAD_PSK_LEN, in, sizeof(in), out);
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_kdf);

/* The GCM nonce: the direction's salt, then the packet's counter. */
void mr_aead_nonce(u8 nonce[MR_AEAD_NONCE_LEN],
		   const u8 salt[MR_AEAD_SALT_LEN], u64 counter)
{
	u32 i;

	for (i = 0; i < MR_AEAD_SALT_LEN; i++)
		nonce[i] = salt[i];
	mr_put_be64(nonce + MR_AEAD_SALT_LEN, counter);
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_nonce);

/**
 * mr_aead_text_len() - the ciphertext length of an encrypted packet
 * @len: the packet's length (the UDP payload), trailer included
 * @text_len: set to the bytes between the base header and the trailer
 *
 * Return: 0, or -MR_ETRUNC when the packet cannot hold the clear base
 * header, the shortest opcode header and the trailer.
 */
int mr_aead_text_len(u32 len, u32 *text_len)
{
	if (len < MR_AEAD_MIN_LEN)
		return -MR_ETRUNC;
	*text_len = len - MR_AEAD_AAD_LEN - MR_AEAD_TRAILER_LEN;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_text_len);

/* The trailer's counter, right after the @text_len bytes of ciphertext. */
void mr_aead_put_counter(u8 *pkt, u32 text_len, u64 counter)
{
	mr_put_be64(pkt + MR_AEAD_AAD_LEN + text_len, counter);
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_put_counter);

u64 mr_aead_get_counter(const u8 *pkt, u32 text_len)
{
	return mr_get_be64(pkt + MR_AEAD_AAD_LEN + text_len);
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_get_counter);

static u64 *mr_aead_replay_word(struct mr_aead_replay *r, u64 counter,
				u64 *bit)
{
	*bit = 1ull << (counter % 64);
	return &r->seen[counter / 64 % (MR_AEAD_REPLAY_WINDOW / 64)];
}

/* @counter opens a stream: the window holds it alone. */
static void mr_aead_replay_start(struct mr_aead_replay *r, u64 counter)
{
	u64 *w, bit;
	u32 i;

	for (i = 0; i < MR_AEAD_REPLAY_WINDOW / 64; i++)
		r->seen[i] = 0;
	r->top = counter;
	r->first = (u32)(counter >> 32);
	r->started = true;
	w = mr_aead_replay_word(r, counter, &bit);
	*w |= bit;
}

static bool mr_aead_span_has(u32 lo, u32 hi, u32 x)
{
	return (u32)(x - lo) <= (u32)(hi - lo);
}

/* Whether @counter's high bits belong to this stream or one left before. */
static bool mr_aead_replay_known(const struct mr_aead_replay *r, u64 counter)
{
	u32 x = (u32)(counter >> 32), i, n;

	if (mr_aead_span_has(r->first, (u32)(r->top >> 32), x))
		return true;
	n = r->n_retired < MR_AEAD_REPLAY_RETIRED ? r->n_retired :
						    MR_AEAD_REPLAY_RETIRED;
	for (i = 0; i < n; i++)
		if (mr_aead_span_has(r->retired[i].lo, r->retired[i].hi, x))
			return true;
	return false;
}

/**
 * mr_aead_replay_check() - take a counter of an authenticated packet once
 * @r: the window of the key the packet opened with (zeroed: empty)
 * @counter: the packet's nonce counter
 *
 * Call only for a packet whose tag checked: the window trusts @counter.
 *
 * Return: 0 (the packet is new; recorded), or -MR_ESTALE: a counter taken
 * before, one too far below the highest, or of a stream left before.
 */
int mr_aead_replay_check(struct mr_aead_replay *r, u64 counter)
{
	u64 *w, bit, d, c;

	if (!r->started) {
		mr_aead_replay_start(r, counter);
		return 0;
	}
	if (counter > r->top && counter - r->top < MR_AEAD_STREAM_SPAN) {
		d = counter - r->top;
		if (d >= MR_AEAD_REPLAY_WINDOW) {
			for (c = 0; c < MR_AEAD_REPLAY_WINDOW / 64; c++)
				r->seen[c] = 0;
		} else {
			for (c = 1; c <= d; c++) {
				w = mr_aead_replay_word(r, r->top + c, &bit);
				*w &= ~bit;
			}
		}
		r->top = counter;
		w = mr_aead_replay_word(r, counter, &bit);
		*w |= bit;
		return 0;
	}
	if (counter <= r->top && r->top - counter < MR_AEAD_STREAM_SPAN) {
		if (r->top - counter >= MR_AEAD_REPLAY_WINDOW)
			return -MR_ESTALE;
		w = mr_aead_replay_word(r, counter, &bit);
		if (*w & bit)
			return -MR_ESTALE;
		*w |= bit;
		return 0;
	}
	/* Another stream: the sender's new one, or a recording of an old. */
	if (mr_aead_replay_known(r, counter))
		return -MR_ESTALE;
	r->retired[r->n_retired % MR_AEAD_REPLAY_RETIRED] = (struct mr_aead_span){
		.lo = r->first,
		.hi = (u32)(r->top >> 32),
	};
	r->n_retired++;
	mr_aead_replay_start(r, counter);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mr_aead_replay_check);
