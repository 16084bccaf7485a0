// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
//
// The receiver engine's host in the tests: its environment
// (receiver.h) is defined once, in receiver_test.cc, and forwards to the
// ReceiverSink of the test that owns the engine. Tests may call through
// a virtual function; the kernel and the model bind at link time.
#ifndef METAROCE_PROTO_TESTS_RECEIVER_HOST_HH
#define METAROCE_PROTO_TESTS_RECEIVER_HOST_HH

#include <cstdint>

extern "C" {
#include "receiver.h"
}

class ReceiverSink
{
public:
	virtual ~ReceiverSink() = default;
	// An ACK or NAK the engine sends to the peer's UDP port @sport.
	virtual void ReceiverSend(const mr_pkt &pkt, uint16_t sport) = 0;
	virtual uint32_t ReceiverMsnDone() = 0;
	virtual uint32_t ReceiverHint() { return 0; }
	virtual uint64_t ReceiverAckDelay() { return MR_ACK_DELAY_NS; }
	virtual void ReceiverEvent(mr_receiver_event, uint32_t) {}
};

// The engine and the way back to its sink: standard layout, so a pointer
// to `r` is one to the ReceiverHost.
struct ReceiverHost {
	mr_receiver r;
	ReceiverSink *sink;

	static ReceiverSink &Of(mr_receiver *r)
	{
		return *reinterpret_cast<ReceiverHost *>(r)->sink;
	}
};

#endif // METAROCE_PROTO_TESTS_RECEIVER_HOST_HH
