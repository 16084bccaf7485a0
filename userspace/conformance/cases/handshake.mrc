# The HELLO handshake (protocol.rst, "HELLO").
section HELLO

# "It waits 10 ms after the first, doubling": HELLOs at 0, 10, 30, 70 ms.
# Never early; late=10: a live QP's timer ticks (4 ms at HZ=250), and an
# emulated guest delays it further.
case hello-retry-intervals
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
+10 > HELLO tag=0 src_tag=$tag late=10
+20 > HELLO tag=0 src_tag=$tag late=10
+40 > HELLO tag=0 src_tag=$tag late=10

# "uses path i mod P for its i-th HELLO": each retry from another port.
case hello-retry-other-path
qp rc no_handshake
> HELLO src_tag=?tag sport=?s0
> HELLO src_tag=$tag sport=!$s0 within=20

# The QP's first HELLO lost: the retry is answered and ends the handshake.
case first-hello-lost
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
+10 > HELLO tag=0 src_tag=$tag
< HELLO tag=$tag src_tag=$ptag hflags=reply|known
post_send wr=1 op=send off=0 len=16
> SEND tag=$ptag payload=16 within=5

# Our proven answer (without KNOWN) lost: the QP asks again, now with our
# tag and KNOWN, as a HELLO that is no REPLY.
case our-reply-lost-asks-again
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
< HELLO tag=$tag src_tag=$ptag hflags=0
> HELLO tag=$ptag src_tag=$tag hflags=reply|known within=1
> HELLO tag=$ptag src_tag=$tag hflags=known within=500

# "A proven HELLO ... is answered with HELLO{REPLY, KNOWN, tag: the peer's}".
case proven-hello-reply-known
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
< HELLO tag=$tag src_tag=$ptag hflags=known
> HELLO tag=$ptag src_tag=$tag hflags=reply|known within=1
> none HELLO for=100

# "An unproven HELLO ... is answered with HELLO{REPLY, tag: its source
# tag ...; KNOWN if that is the peer tag we hold}": not held, no KNOWN.
case unproven-hello-answered-not-known
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
< HELLO tag=0 src_tag=0x1234 hflags=0
> HELLO tag=0x1234 src_tag=$tag hflags=reply within=1

# ... held: KNOWN.
case unproven-hello-answered-known
< HELLO tag=0 src_tag=$ptag hflags=0
> HELLO tag=$ptag src_tag=$tag hflags=reply|known within=1

# An unproven HELLO with a wrong (non-zero) tag is unproven too.
case wrong-tag-hello-unproven
< HELLO tag=$tag+1 src_tag=$ptag hflags=0
> HELLO tag=$ptag src_tag=$tag hflags=reply|known within=1

# "An unproven HELLO ... changes nothing": the QP still asks with tag 0.
case unproven-hello-changes-nothing
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
< HELLO tag=0 src_tag=0x1234 hflags=0
> HELLO tag=0x1234 hflags=reply within=1
> HELLO tag=0 src_tag=$tag hflags=0 within=50

# "at most one answer per 100 us per QP".
case unproven-answers-rate-limited
needs instant
< HELLO tag=0 src_tag=$ptag hflags=0
< HELLO tag=0 src_tag=$ptag hflags=0
> HELLO tag=$ptag hflags=reply|known within=1
> none HELLO for=5

# ... and again after the gap.
case unproven-answer-after-gap
< HELLO tag=0 src_tag=$ptag hflags=0
> HELLO tag=$ptag hflags=reply|known within=1
+1 < HELLO tag=0 src_tag=$ptag hflags=0
> HELLO tag=$ptag hflags=reply|known within=1

# "once we hold the peer's tag, only a HELLO whose source tag is that tag
# is answered".
case unproven-other-source-unanswered
< HELLO tag=0 src_tag=0x1234 hflags=0
> none for=100

# "A proven HELLO naming another source tag than the one already held is
# dropped": no answer, and the held tag stays.
case proven-other-source-dropped
< HELLO tag=$tag src_tag=0x1234 hflags=0
> none for=100
< HELLO tag=$tag src_tag=$ptag hflags=0
> HELLO tag=$ptag src_tag=$tag hflags=reply|known within=1
post_send wr=1 op=send off=0 len=8
> SEND tag=$ptag

# "... unless it is itself a REPLY with KNOWN": a REPLY without KNOWN
# is answered.
case proven-reply-without-known-answered
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
< HELLO tag=$tag src_tag=$ptag hflags=reply
> HELLO tag=$ptag src_tag=$tag hflags=reply|known within=1

# "until it holds the peer's tag and has proof ...": then it stops.
case hellos-stop-after-handshake
> none HELLO for=1000

# "Any other packet that carries our tag shows that the peer holds it":
# after a proven HELLO without KNOWN, a data packet ends the HELLOs.
case data-packet-is-proof
qp rc no_handshake
> HELLO tag=0 src_tag=?tag
< HELLO tag=$tag src_tag=$ptag hflags=0
> HELLO tag=$ptag hflags=reply|known within=1
post_recv wr=1 off=0 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req
> ACK cum_psn=$rq+1 tag=$ptag
flush
> none HELLO for=500

# The QP's HELLOs go to the peer's QPN, PSN and epoch zero. (The retry's
# time is hello-retry-intervals' to check: here a late timer of a busy
# guest would fail a case about fields.)
case hello-psn-epoch-zero
qp rc no_handshake
> HELLO qpn=$peer_qpn psn=0 epoch=0 src_tag=?tag
> HELLO qpn=$peer_qpn psn=0 epoch=0 src_tag=$tag within=100

# "A path restart changes nothing of the tags": a packet of a new epoch
# with our tag is taken, and answered with the same peer tag.
case path-restart-keeps-tags
post_recv wr=1 off=0 len=256
post_recv wr=2 off=256 len=256
< SEND msn=0 rsn=0 payload=8 flags=ack_req path=3
> ACK path=3 epoch=0 cum_psn=$rq+1
< SEND msn=1 rsn=1 payload=8 flags=ack_req path=3 epoch=1
> ACK path=3 epoch=1 cum_psn=1 tag=$ptag
cq wr=1 status=success
cq wr=2 status=success
> none HELLO for=100
