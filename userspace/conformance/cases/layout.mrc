# The shape of every packet, and the goals the format serves.
section Goals

# "Placement out of order. Every data packet says where its bytes go, so
# the receiver places it the moment it arrives": the second slice of a
# WRITE lands while the first is still missing.
case later-slice-placed-at-once
< WRITE msn=0 rkey=$rkey va=$va+4096 length=2048 offset=1024 payload=1024 psn=$rq+1 flags=ack_req
> ACK cum_psn=$rq sack=$rq+1
mem off=5120 len=1024 seed=1 at=1024
mem off=4096 len=1024

section Packet layout

# "a 24-byte base header, then the header of its opcode, then the payload".
case write-is-base-op-payload
post_send wr=1 op=write off=0 len=100 rkey=0x99 va=0x5000
> WRITE payload=100 wire_len=148 src=0

case ack-is-base-op
post_recv wr=1 off=0 len=64
< SEND msn=0 rsn=0 payload=8 flags=ack_req
> ACK wire_len=72 payload=0

section READ_REQ

# "A READ request is always one packet without payload", repeating the
# rkey, VA and length of the work request.
case qp-read-one-request
post_send wr=1 op=read off=0 len=3000 rkey=0x4321 va=0x900000
> READ_REQ msn=0 rkey=0x4321 va=0x900000 length=3000 payload=0 wire_len=44

# "Bytes to read ... 0 is allowed": a zero-length READ is answered.
case zero-length-read-answered
< READ_REQ msn=0 rkey=$rkey va=$va length=0 flags=ack_req
> READ_RESP msn=0 length=0 offset=0 payload=0

section ACK

# "Flags must be zero", and the ACK names the path epoch acknowledged.
case ack-flags-zero-path-epoch
post_recv wr=1 off=0 len=64
< SEND msn=0 rsn=0 payload=8 path=5 epoch=2 psn=0 flags=ack_req
> ACK flags=0 path=5 epoch=2 cum_psn=1 psn=0

# "cum PSN: every PSN of the path epoch before this one has arrived; this
# one has not", and the PSN field is the arrival that drew the ACK.
case ack-cum-not-arrived-psn-arrived
< WRITE msn=0 rkey=$rkey va=$va length=3072 offset=0 payload=1024 psn=$rq
< WRITE msn=0 rkey=$rkey va=$va length=3072 offset=2048 payload=1024 psn=$rq+2
> ACK cum_psn=$rq+1 sack=$rq+2 psn=$rq+2

# "Word w, bit b set: PSN cum + 64w + b arrived": a PSN in the second word.
case ack-map-second-word
< WRITE msn=0 rkey=$rkey va=$va length=1024 offset=0 payload=1024 psn=$rq+70 flags=ack_req
> ACK cum_psn=$rq sack=$rq+70 psn=$rq+70

section NAK

# "The base header's path, epoch and PSN name the packet that caused the
# NAK"; flags zero; no RNR delay but for RNR.
case nak-names-its-packet
< WRITE msn=0 rkey=$rkey+1 va=$va payload=64 path=9 epoch=0 psn=$rq
> NAK path=9 epoch=0 psn=$rq flags=0 msn=0 code=remote_access rnr_delay=0

# An RNR NAK carries the delay and names the packet too.
case rnr-nak-names-its-packet
qp rc min_rnr_timer=14
< SEND msn=0 rsn=0 payload=64 path=3 psn=$rq
> NAK path=3 psn=$rq flags=0 msn=0 code=rnr rnr_delay=1..65535

section Implementation notes

# "the requester sends it twice, on two paths ... with their own PSNs": a
# READ request goes on two paths, and executes once.
case read-request-sent-on-two-paths
post_send wr=1 op=read off=0 len=64 rkey=0x11 va=0x2000
> READ_REQ msn=0 path=?a psn=?x
> READ_REQ msn=0 path=!$a
< READ_RESP msn=0 length=64 offset=0 payload=64 path=0 psn=$rq
cq wr=1 status=success opcode=rdma_read
mem off=0 len=64 seed=1

section Planes

# "The wire does not name planes: a path is a (plane, source port) pair
# that only its sender knows": one path id from two source ports is one
# window at the receiver.
case one-path-two-ports-one-window
post_recv wr=1 off=0 len=4096
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 path=2 psn=$rq sport=50001
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 path=2 psn=$rq+1 sport=50002 flags=ack_req
> ACK path=2 cum_psn=$rq+2 sack=none
cq wr=1 status=success len=2048

section Windows and rounds

# "connection ... Initial 2": a new connection sends two packets of a
# long message, then waits for an ACK.
case connection-initial-window-two
post_send wr=1 op=write off=0 len=8192 rkey=0x99 va=0x5000
> WRITE offset=0 path=?a psn=?x
> WRITE offset=1024 path=?b psn=?y
> none WRITE offset=2048 for=1
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=0
< ACK path=$b psn=$y cum_psn=$y+1 msn_done=0
> WRITE offset=2048

section Reactions

# "CE marks: multiply by 1 - alpha / 2. A path always does": an ACK that
# reports a CE mark shrinks a window.
case ce-mark-shrinks-a-window
post_send wr=1 op=write off=0 len=1024 rkey=0x99 va=0x5000
> WRITE offset=0 path=?a psn=?x
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=1 ecn_count=1
cq wr=1 status=success
counter cc_decreases >=1

section Pacing

# "A connection sends at most at ... the hint's [rate]", in bursts of at
# most 4: under a hint of 1000 kbit/s an 8-packet WRITE waits for the pacer.
case hint-paces-the-sender
post_send wr=1 op=write off=0 len=8192 rkey=0x99 va=0x5000
> WRITE offset=0 path=?p0 psn=?n0 within=500
< ACK path=$p0 psn=$n0 cum_psn=$n0+1 msn_done=0 rate_hint=1000
> WRITE offset=1024 path=?p1 psn=?n1 within=500
< ACK path=$p1 psn=$n1 cum_psn=$n1+1 msn_done=0 rate_hint=1000
> WRITE offset=2048 path=?p2 psn=?n2 within=500
< ACK path=$p2 psn=$n2 cum_psn=$n2+1 msn_done=0 rate_hint=1000
> WRITE offset=3072 path=?p3 psn=?n3 within=500
< ACK path=$p3 psn=$n3 cum_psn=$n3+1 msn_done=0 rate_hint=1000
> WRITE offset=4096 path=?p4 psn=?n4 within=500
< ACK path=$p4 psn=$n4 cum_psn=$n4+1 msn_done=0 rate_hint=1000
> WRITE offset=5120 path=?p5 psn=?n5 within=500
< ACK path=$p5 psn=$n5 cum_psn=$n5+1 msn_done=0 rate_hint=1000
> WRITE offset=6144 path=?p6 psn=?n6 within=500
< ACK path=$p6 psn=$n6 cum_psn=$n6+1 msn_done=0 rate_hint=1000
> WRITE offset=7168 path=?p7 psn=?n7 within=500
< ACK path=$p7 psn=$n7 cum_psn=$n7+1 msn_done=0 rate_hint=1000
counter cc_paced >=1

section The receiver's share

# "The hint in an ACK is the share of the sender": present in the ACKs of
# data, not 0.
case ack-carries-share
post_recv wr=1 off=0 len=64
< SEND msn=0 rsn=0 payload=8 flags=ack_req
> ACK cum_psn=$rq+1 rate_hint=1..4294967295
