// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The requester engine's host in the tests: its environment
// (requester.h) is defined once, in sender_test.cc, and forwards to the
// RequesterSink of the test that owns the engine.
#ifndef METAROCE_PROTO_TESTS_REQUESTER_HOST_HH
#define METAROCE_PROTO_TESTS_REQUESTER_HOST_HH

#include <cstdint>

extern "C" {
#include "requester.h"
}

class RequesterSink
{
public:
	virtual ~RequesterSink() = default;
	// Messages posted from msn_head on.
	virtual uint32_t RequesterPosted() = 0;
	virtual mr_req_msg RequesterMsg(uint32_t msn) = 0;
	// Message @msn starts: its RSN (if it consumes) and order byte.
	virtual void RequesterStart(uint32_t, uint32_t, uint8_t) {}
	virtual bool RequesterResponseDue() { return false; }
	virtual mr_tx_pkt RequesterResponse() { return {}; }
};

// The engine and the way back to its sink: standard layout, so a pointer
// to `r` is one to the RequesterHost.
struct RequesterHost {
	mr_requester r;
	RequesterSink *sink;

	static RequesterSink &Of(mr_requester *r)
	{
		return *reinterpret_cast<RequesterHost *>(r)->sink;
	}
};

#endif // METAROCE_PROTO_TESTS_REQUESTER_HOST_HH
