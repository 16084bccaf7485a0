// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// Host tests of proto/aead.c: the pre-shared key's text form, the bytes
// the key derivation and the nonce are made of, where the trailer goes,
// and that the codec leaves the ENCRYPTED flag to the cipher layer.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "pkt_gen.hh"

extern "C" {
#include "aead.h"
#include "mtu.h"
}

namespace {

const std::string kHex =
	"000102030405060708090a0b0c0d0e0f"
	"F0E1D2C3B4A5968778695A4B3C2D1E0F";

int Parse(const std::string &s, std::array<uint8_t, MR_AEAD_PSK_LEN> *psk)
{
	return mr_aead_parse_psk(s.data(), (uint32_t)s.size(), psk->data());
}

TEST(AeadPsk, SixtyFourHexDigitsOfEitherCase)
{
	std::array<uint8_t, MR_AEAD_PSK_LEN> psk{};

	ASSERT_EQ(Parse(kHex, &psk), 0);
	for (unsigned i = 0; i < 16; i++)
		EXPECT_EQ(psk[i], i) << i;
	EXPECT_EQ(psk[16], 0xf0);
	EXPECT_EQ(psk[17], 0xe1);
	EXPECT_EQ(psk[31], 0x0f);
}

TEST(AeadPsk, WrongLengthIsRefusedAndLeavesTheKey)
{
	std::array<uint8_t, MR_AEAD_PSK_LEN> psk;

	psk.fill(0x55);
	EXPECT_EQ(Parse("", &psk), -MR_ELENGTH);
	EXPECT_EQ(Parse(kHex.substr(0, 63), &psk), -MR_ELENGTH);
	EXPECT_EQ(Parse(kHex + "0", &psk), -MR_ELENGTH);
	EXPECT_EQ(Parse(kHex.substr(0, 32), &psk), -MR_ELENGTH);
	for (uint8_t b : psk)
		EXPECT_EQ(b, 0x55);
}

TEST(AeadPsk, NonHexCharacterIsRefusedAndLeavesTheKey)
{
	std::array<uint8_t, MR_AEAD_PSK_LEN> psk;

	psk.fill(0x55);
	for (char bad : std::string("gG xz-\n\0", 8)) {
		for (size_t at : {size_t(0), size_t(1), size_t(40), size_t(63)}) {
			std::string s = kHex;

			s[at] = bad;
			EXPECT_EQ(Parse(s, &psk), -MR_EFIELD)
				<< int(bad) << " at " << at;
		}
	}
	for (uint8_t b : psk)
		EXPECT_EQ(b, 0x55);
}

TEST(AeadKdf, LabelThenSourceThenDestination)
{
	uint8_t src[MR_AEAD_ADDR_LEN], dst[MR_AEAD_ADDR_LEN];
	uint8_t in[MR_AEAD_KDF_IN_LEN + 1];

	for (unsigned i = 0; i < MR_AEAD_ADDR_LEN; i++) {
		src[i] = (uint8_t)(0x10 + i);
		dst[i] = (uint8_t)(0xa0 + i);
	}
	memset(in, 0xee, sizeof(in));
	EXPECT_EQ(mr_aead_kdf_input(in, src, dst), 55u);
	EXPECT_EQ(MR_AEAD_KDF_IN_LEN, 55u);
	EXPECT_EQ(memcmp(in, "MetaRoCE v2 AES-128-GCM", 23), 0);
	EXPECT_EQ(memcmp(in + 23, src, 16), 0);
	EXPECT_EQ(memcmp(in + 39, dst, 16), 0);
	EXPECT_EQ(in[55], 0xee); // nothing written past it
}

TEST(AeadKdf, DirectionsDiffer)
{
	uint8_t a[MR_AEAD_ADDR_LEN] = {0}, b[MR_AEAD_ADDR_LEN] = {0};
	uint8_t ab[MR_AEAD_KDF_IN_LEN], ba[MR_AEAD_KDF_IN_LEN];

	// 10.0.0.1 and 10.0.0.2, v4-mapped
	a[10] = a[11] = b[10] = b[11] = 0xff;
	a[12] = b[12] = 10;
	a[15] = 1;
	b[15] = 2;
	mr_aead_kdf_input(ab, a, b);
	mr_aead_kdf_input(ba, b, a);
	EXPECT_NE(memcmp(ab, ba, sizeof(ab)), 0);
}

std::string Hex(const uint8_t *p, size_t n)
{
	static const char d[] = "0123456789abcdef";
	std::string s;

	for (size_t i = 0; i < n; i++) {
		s += d[p[i] >> 4];
		s += d[p[i] & 15];
	}
	return s;
}

std::string Sha256(const std::string &msg, size_t chunk)
{
	mr_aead_sha256 s;
	uint8_t out[MR_AEAD_SHA256_LEN];

	mr_aead_sha256_init(&s);
	for (size_t at = 0; at < msg.size(); at += chunk)
		mr_aead_sha256_update(&s, (const uint8_t *)msg.data() + at,
				      (uint32_t)std::min(chunk, msg.size() - at));
	mr_aead_sha256_final(&s, out);
	return Hex(out, sizeof(out));
}

std::string Hmac(const std::string &key, const std::string &msg)
{
	uint8_t out[MR_AEAD_SHA256_LEN];

	mr_aead_hmac_sha256((const uint8_t *)key.data(), (uint32_t)key.size(),
			    (const uint8_t *)msg.data(), (uint32_t)msg.size(),
			    out);
	return Hex(out, sizeof(out));
}

// FIPS 180-4's examples (and the empty message), fed whole and in odd
// pieces: the block boundary and the padding's two cases.
TEST(AeadSha256, KnownDigests)
{
	const std::string two_blocks =
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

	for (size_t chunk : {size_t(1), size_t(7), size_t(64), size_t(1000)}) {
		EXPECT_EQ(Sha256("abc", chunk),
			  "ba7816bf8f01cfea414140de5dae2223"
			  "b00361a396177a9cb410ff61f20015ad");
		EXPECT_EQ(Sha256("", chunk),
			  "e3b0c44298fc1c149afbf4c8996fb924"
			  "27ae41e4649b934ca495991b7852b855");
		EXPECT_EQ(Sha256(two_blocks, chunk),
			  "248d6a61d20638b8e5c026930c3e6039"
			  "a33ce45964ff2167f6ecedd419db06c1");
	}
	EXPECT_EQ(Sha256(std::string(1000000, 'a'), 4096),
		  "cdc76e5c9914fb9281a1c7e284d73e67"
		  "f1809a48a497200e046d39ccc7112cd0");
}

// RFC 4231 test cases 1, 2 and 6 (a key longer than the block).
TEST(AeadHmac, Rfc4231)
{
	EXPECT_EQ(Hmac(std::string(20, '\x0b'), "Hi There"),
		  "b0344c61d8db38535ca8afceaf0bf12b"
		  "881dc200c9833da726e9376c2e32cff7");
	EXPECT_EQ(Hmac("Jefe", "what do ya want for nothing?"),
		  "5bdcc146bf60754e6a042426089575c7"
		  "5a003f089d2739839dec58b964ec3843");
	EXPECT_EQ(Hmac(std::string(131, '\xaa'),
		       "Test Using Larger Than Block-Size Key - Hash Key First"),
		  "60e431591ee0b67f0d8a26aacbf5b77f"
		  "8e0bc6213728c5140546040f0ee37f54");
}

// The derivation of protocol.rst, pinned: psk 00..1f, 10.0.0.1 to
// 10.0.0.2 (v4-mapped). Computed independently with Python's hmac.
TEST(AeadKdf, KnownKey)
{
	uint8_t psk[MR_AEAD_PSK_LEN], a[MR_AEAD_ADDR_LEN] = {0},
		b[MR_AEAD_ADDR_LEN] = {0}, out[MR_AEAD_KDF_OUT_LEN];

	for (unsigned i = 0; i < MR_AEAD_PSK_LEN; i++)
		psk[i] = (uint8_t)i;
	a[10] = a[11] = b[10] = b[11] = 0xff;
	a[12] = b[12] = 10;
	a[15] = 1;
	b[15] = 2;
	mr_aead_kdf(psk, a, b, out);
	EXPECT_EQ(Hex(out, sizeof(out)),
		  "bd53314c1b85e65b5bfd8d4c7c2bfb17"
		  "afcc7eca6d1d76ad61ac728193a543a5");
	uint8_t back[MR_AEAD_KDF_OUT_LEN];
	mr_aead_kdf(psk, b, a, back);
	EXPECT_NE(Hex(out, sizeof(out)), Hex(back, sizeof(back)));
}

TEST(AeadNonce, SaltThenBigEndianCounter)
{
	const uint8_t salt[MR_AEAD_SALT_LEN] = {0xde, 0xad, 0xbe, 0xef};
	uint8_t n[MR_AEAD_NONCE_LEN];

	mr_aead_nonce(n, salt, 0x0102030405060708ull);
	const uint8_t want[12] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4,
				  5, 6, 7, 8};
	EXPECT_EQ(memcmp(n, want, sizeof(want)), 0);
}

TEST(AeadNonce, ConsecutiveCountersGiveDistinctNonces)
{
	const uint8_t salt[MR_AEAD_SALT_LEN] = {1, 2, 3, 4};
	uint8_t a[MR_AEAD_NONCE_LEN], b[MR_AEAD_NONCE_LEN];

	for (uint64_t c : {0ull, 0xffull, 0xffffffffull, ~0ull - 1}) {
		mr_aead_nonce(a, salt, c);
		mr_aead_nonce(b, salt, c + 1);
		EXPECT_NE(memcmp(a, b, sizeof(a)), 0) << c;
	}
}

// The replay window (protocol.rst, "Replay"): a recorded packet sent
// again is refused, in any order within the window.
TEST(AeadReplay, EachCounterOnceWithinTheWindow)
{
	mr_aead_replay r = {};
	const uint64_t base = 0x123456789000ull;

	EXPECT_EQ(mr_aead_replay_check(&r, base), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, base), -MR_ESTALE);
	EXPECT_EQ(mr_aead_replay_check(&r, base + 5), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, base + 5), -MR_ESTALE);
	// Reordered: below the highest, within the window, each once.
	for (uint64_t c = base + 1; c < base + 5; c++) {
		EXPECT_EQ(mr_aead_replay_check(&r, c), 0) << c;
		EXPECT_EQ(mr_aead_replay_check(&r, c), -MR_ESTALE) << c;
	}
	EXPECT_EQ(mr_aead_replay_check(&r, base - 1), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, base - 1), -MR_ESTALE);
}

TEST(AeadReplay, TooFarBelowTheHighestIsStale)
{
	mr_aead_replay r = {};
	const uint64_t top = 1000000;

	ASSERT_EQ(mr_aead_replay_check(&r, top), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, top - MR_AEAD_REPLAY_WINDOW), -MR_ESTALE);
	EXPECT_EQ(mr_aead_replay_check(&r, 5), -MR_ESTALE);
	EXPECT_EQ(mr_aead_replay_check(&r, top - MR_AEAD_REPLAY_WINDOW + 1), 0);
	// A jump of more than the window forgets all below it.
	ASSERT_EQ(mr_aead_replay_check(&r, top + 3 * MR_AEAD_REPLAY_WINDOW), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, top + 1), -MR_ESTALE);
	EXPECT_EQ(mr_aead_replay_check(&r, top + 2 * MR_AEAD_REPLAY_WINDOW + 1), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, top + 2 * MR_AEAD_REPLAY_WINDOW + 1),
		  -MR_ESTALE);
}

TEST(AeadReplay, SlidesBitByBitOverManyPackets)
{
	mr_aead_replay r = {};
	const uint64_t base = ~0ull - 5000;

	for (uint64_t i = 0; i < 5000; i += 2)
		ASSERT_EQ(mr_aead_replay_check(&r, base + i), 0) << i;
	// The odd ones within the window are new, the even ones seen.
	for (uint64_t i = 5000 - MR_AEAD_REPLAY_WINDOW + 2; i < 5000; i++)
		EXPECT_EQ(mr_aead_replay_check(&r, base + i), i % 2 ? 0 : -MR_ESTALE) << i;
	EXPECT_EQ(mr_aead_replay_check(&r, ~0ull), 0); // the last counter
	EXPECT_EQ(mr_aead_replay_check(&r, ~0ull), -MR_ESTALE);
}

// A sender that derives the key again (a reboot, a clone) starts a new
// stream at a random counter: taken, and the old stream's recordings are
// refused from then on, whichever side of the new one they lie.
TEST(AeadReplay, NewStreamReplacesTheOldOneForGood)
{
	mr_aead_replay r = {};
	const uint64_t old = 0x9000000000000000ull, fresh = 0x1234567800000010ull;

	ASSERT_EQ(mr_aead_replay_check(&r, old), 0);
	ASSERT_EQ(mr_aead_replay_check(&r, old + 1), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, fresh), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, fresh + 1), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, old + 2), -MR_ESTALE);  // never sent, yet old
	EXPECT_EQ(mr_aead_replay_check(&r, old), -MR_ESTALE);
	EXPECT_EQ(mr_aead_replay_check(&r, fresh + 1), -MR_ESTALE);
	// A third stream above both; the first two stay refused.
	const uint64_t third = 0xa000000000000000ull;
	EXPECT_EQ(mr_aead_replay_check(&r, third), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, fresh + 2), -MR_ESTALE);
	EXPECT_EQ(mr_aead_replay_check(&r, old + 3), -MR_ESTALE);
	EXPECT_EQ(mr_aead_replay_check(&r, third + 1), 0);
}

// A stream that carries into its high 32 bits stays one stream, and all
// of it is refused once it is left.
TEST(AeadReplay, StreamAcrossACarryIsOneStream)
{
	mr_aead_replay r = {};
	const uint64_t s = 0x00000005fffffff0ull;

	for (uint64_t i = 0; i < 32; i++)
		ASSERT_EQ(mr_aead_replay_check(&r, s + i), 0) << i;
	ASSERT_EQ(mr_aead_replay_check(&r, 0x7700000000000000ull), 0);
	EXPECT_EQ(mr_aead_replay_check(&r, s + 40), -MR_ESTALE);
	EXPECT_EQ(mr_aead_replay_check(&r, s - 100), -MR_ESTALE);
}

TEST(AeadLayout, LengthsAndTrailer)
{
	uint32_t text = 12345;

	EXPECT_EQ(MR_AEAD_TRAILER_LEN, 24u);
	EXPECT_EQ(MR_AEAD_MIN_LEN, 24u + 8u + 24u);
	EXPECT_EQ(mr_aead_text_len(MR_AEAD_MIN_LEN - 1, &text), -MR_ETRUNC);
	EXPECT_EQ(text, 12345u); // untouched on failure
	EXPECT_EQ(mr_aead_text_len(0, &text), -MR_ETRUNC);
	ASSERT_EQ(mr_aead_text_len(MR_AEAD_MIN_LEN, &text), 0);
	EXPECT_EQ(text, 8u);
	ASSERT_EQ(mr_aead_text_len(56 + 4096 + 24, &text), 0);
	EXPECT_EQ(text, 32u + 4096u);

	std::vector<uint8_t> pkt(24 + 100 + 24, 0);
	mr_aead_put_counter(pkt.data(), 100, 0x1122334455667788ull);
	EXPECT_EQ(pkt[124], 0x11);
	EXPECT_EQ(pkt[131], 0x88);
	EXPECT_EQ(pkt[123], 0);
	EXPECT_EQ(pkt[132], 0);
	EXPECT_EQ(mr_aead_get_counter(pkt.data(), 100), 0x1122334455667788ull);
}

// Encrypted data packets fit one netdev MTU 8 bytes larger than clear
// ones; the extra is what a WRITE_IMM's headers and the trailer take
// beyond the reserve.
TEST(AeadLayout, MtuExtra)
{
	EXPECT_EQ(MR_AEAD_MTU_EXTRA, 8u);
	for (unsigned op = 0; op <= MR_OP_MAX; op++) {
		unsigned len = mr_wire_hdr_len(op);

		if (!len)
			continue;
		if (mrtest::HasPayload(op)) {
			EXPECT_LE(len + MR_AEAD_TRAILER_LEN,
				  MR_TRANSPORT_HDR_RESERVE + MR_AEAD_MTU_EXTRA)
				<< op;
		}
	}
}

// An encrypting port's active MTU: 8 bytes less room than a clear one's,
// and a clear one's arithmetic unchanged.
TEST(AeadLayout, MtuFit)
{
	for (unsigned m = 0; m < 10000; m++)
		ASSERT_EQ(mr_mtu_fit(m, 0), mr_mtu_from_netdev_mtu(m)) << m;
	EXPECT_EQ(mr_mtu_fit(1500, MR_AEAD_MTU_EXTRA), MR_MTU_1024);
	EXPECT_EQ(mr_mtu_fit(1024 + 128, MR_AEAD_MTU_EXTRA), MR_MTU_1024);
	EXPECT_EQ(mr_mtu_fit(1024 + 127, MR_AEAD_MTU_EXTRA), MR_MTU_512);
	EXPECT_EQ(mr_mtu_fit(1024 + 127, 0), MR_MTU_1024);
	EXPECT_EQ(mr_mtu_fit(4096 + 128, MR_AEAD_MTU_EXTRA), MR_MTU_4096);
	EXPECT_EQ(mr_mtu_fit(256 + 127, MR_AEAD_MTU_EXTRA), MR_MTU_NONE);
	EXPECT_EQ(mr_mtu_fit(256 + 128, MR_AEAD_MTU_EXTRA), MR_MTU_256);
	EXPECT_EQ(mr_mtu_min_netdev() + MR_AEAD_MTU_EXTRA, 384u);
	EXPECT_EQ(mr_mtu_fit(0, MR_AEAD_MTU_EXTRA), MR_MTU_NONE);
}

// The flag belongs to the cipher layer: a packet reaching the codec with
// it was not decrypted, and is refused like any undefined flag.
TEST(AeadFlag, CodecRefusesEncryptedFlag)
{
	mrtest::Gen g(7);

	for (unsigned op = 0; op <= MR_OP_MAX; op++) {
		if (!mr_wire_hdr_len(op))
			continue;
		mr_pkt p = g.Valid((uint8_t)op);
		uint8_t buf[MR_MAX_HDR_LEN + MR_WIRE_MAX_PAYLOAD] = {};
		mr_pkt out;

		int n = mr_wire_encode(&p, buf, sizeof(buf));
		ASSERT_GT(n, 0) << op;
		uint32_t len = (uint32_t)n + p.payload_len;
		ASSERT_EQ(mr_wire_decode(buf, len, &out), 0) << op;
		EXPECT_FALSE(mr_aead_is_encrypted(buf));
		buf[2] |= MR_FLAG_ENCRYPTED;
		EXPECT_TRUE(mr_aead_is_encrypted(buf));
		EXPECT_EQ(mr_wire_decode(buf, len, &out), -MR_EFLAGS) << op;
		p.base.flags |= MR_FLAG_ENCRYPTED;
		EXPECT_EQ(mr_wire_encode(&p, buf, sizeof(buf)), -MR_EFLAGS)
			<< op;
	}
}

} // namespace
