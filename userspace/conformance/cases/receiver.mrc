# The path-level receiver (protocol.rst, "Reliability", "ACK").
section Receiver

# "cum ... the oldest PSN not yet arrived": one packet with ACK_REQ moves it.
case cum-advances-over-arrival
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req
> ACK path=0 epoch=0 psn=$rq cum_psn=$rq+1 sack=none

# cum advances over every PSN present: three in order give cum + 3.
case cum-advances-over-run
< WRITE msn=0 rkey=$rkey va=$va payload=64
< WRITE msn=1 rkey=$rkey va=$va+64 payload=64
< WRITE msn=2 rkey=$rkey va=$va+128 payload=64 flags=ack_req
> ACK cum_psn=$rq+3 sack=none within=5

# A packet beyond a hole is SACKed: the map names it, cum stays at the hole.
case hole-sacked
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq+1 flags=ack_req
> ACK psn=$rq+1 cum_psn=$rq sack=$rq+1

# The map reaches 255 PSNs beyond cum (word 3, bit 63).
case sack-map-last-bit
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq+255 flags=ack_req
> ACK psn=$rq+255 cum_psn=$rq sack=$rq+255

# Two holes: the map names every arrival beyond cum.
case sack-two-holes
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq+2
< WRITE msn=1 rkey=$rkey va=$va payload=64 psn=$rq+5 flags=ack_req
> ACK cum_psn=$rq sack=$rq+2,$rq+5 within=5

# A fill of the hole makes cum jump over everything present.
case fill-jumps-cum
< WRITE msn=1 rkey=$rkey va=$va payload=64 psn=$rq+1
< WRITE msn=2 rkey=$rkey va=$va payload=64 psn=$rq+2
> ACK cum_psn=$rq sack=$rq+1,$rq+2 within=5
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq
> ACK psn=$rq cum_psn=$rq+3 sack=none within=1

# A packet that leaves a new hole behind it draws an ACK without ACK_REQ.
case ack-for-new-hole
< WRITE msn=0 rkey=$rkey va=$va length=8192 offset=0 payload=1024
> ACK cum_psn=$rq+1 within=1
< WRITE msn=0 rkey=$rkey va=$va length=8192 offset=2048 payload=1024 psn=$rq+2
> ACK psn=$rq+2 cum_psn=$rq+1 sack=$rq+2 within=0.1

# A packet that fills a hole draws an ACK at once, without ACK_REQ.
case ack-for-fill
< WRITE msn=0 rkey=$rkey va=$va length=8192 offset=1024 payload=1024 psn=$rq+1
> ACK cum_psn=$rq sack=$rq+1 within=1
< WRITE msn=0 rkey=$rkey va=$va length=8192 offset=0 payload=1024 psn=$rq
> ACK psn=$rq cum_psn=$rq+2 sack=none within=0.1

# A duplicate (before cum) is dropped but acknowledged at once, and counted.
case duplicate-before-cum-acked
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req
> ACK cum_psn=$rq+1
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq seed=2
> ACK psn=$rq cum_psn=$rq+1 within=0.1
counter duplicate_packets 1
mem off=0 len=64 seed=1

# A duplicate of a SACKed packet (already seen, beyond cum) is acknowledged too.
case duplicate-sacked-acked
< WRITE msn=1 rkey=$rkey va=$va payload=64 psn=$rq+3 flags=ack_req
> ACK cum_psn=$rq sack=$rq+3
< WRITE msn=1 rkey=$rkey va=$va payload=64 psn=$rq+3
> ACK psn=$rq+3 cum_psn=$rq sack=$rq+3 within=0.1
counter duplicate_packets 1

# A packet at cum + 256 or later is beyond the window: dropped silently.
case beyond-window-dropped
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq+256 flags=ack_req
> none for=100
mem off=0 len=64

# A packet following the previous arrival past an older hole needs no ACK
# of its own (the sender knows of the hole); ACK_REQ still asks for one.
case follow-past-hole-coalesced
needs instant
< WRITE msn=0 rkey=$rkey va=$va length=8192 offset=1024 payload=1024 psn=$rq+1
> ACK cum_psn=$rq sack=$rq+1 within=1
< WRITE msn=0 rkey=$rkey va=$va length=8192 offset=2048 payload=1024 psn=$rq+2
> none ACK for=0.1
< WRITE msn=0 rkey=$rkey va=$va length=8192 offset=3072 payload=1024 psn=$rq+3 flags=ack_req
> ACK psn=$rq+3 cum_psn=$rq sack=$rq+1,$rq+2,$rq+3 within=0.1

# An in-order arrival without ACK_REQ may wait, but the coalesced ACK comes.
case coalesced-ack-comes
needs instant
< WRITE msn=0 rkey=$rkey va=$va length=8192 offset=0 payload=1024
> ACK cum_psn=$rq+1 within=1
< WRITE msn=0 rkey=$rkey va=$va length=8192 offset=1024 payload=1024
> none ACK for=0.1
> ACK psn=$rq+1 cum_psn=$rq+2 within=5

# The ACK's PSN names a packet it reports as arrived: the one that drew it.
case ack-psn-names-arrival
< WRITE msn=0 rkey=$rkey va=$va payload=64 psn=$rq+7 flags=ack_req
> ACK path=0 epoch=0 psn=$rq+7 cum_psn=$rq sack=$rq+7

# MSN done: every request before it completed at the responder.
case msn-done-counts-complete
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=1
< WRITE msn=1 rkey=$rkey va=$va payload=64 flags=ack_req
> ACK cum_psn=$rq+2 msn_done=2

# MSN done stays at the oldest incomplete request (a slice still missing).
case msn-done-waits-incomplete
< WRITE msn=0 rkey=$rkey va=$va length=2048 offset=1024 payload=1024 psn=$rq+1 flags=ack_req
> ACK cum_psn=$rq sack=$rq+1 msn_done=0

# Flags must be zero in an ACK the receiver sends.
case ack-flags-zero
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req
> ACK flags=0 cum_psn=$rq+1

# An ACK carries the QP's peer's tag and the peer's QPN (checked by default)
# and the receiver's rate hint field is present.
case ack-rate-hint-present
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req
> ACK cum_psn=$rq+1 rate_hint=*

# The first packet of a new epoch is acknowledged at once, without ACK_REQ.
case ack-first-of-new-epoch
< WRITE msn=0 rkey=$rkey va=$va payload=64 epoch=1 psn=0
> ACK path=0 epoch=1 psn=0 cum_psn=1 sack=none within=0.1

# "a duplicate if it is before cum or already seen: dropped": a second
# packet with a PSN already seen above cum is dropped whole, even when it
# carries another slice, which is then not placed.
case seen-psn-above-cum-dropped
< WRITE msn=0 rkey=$rkey va=$va length=3072 offset=2048 payload=1024 psn=$rq+2
> ACK cum_psn=$rq sack=$rq+2
< WRITE msn=0 rkey=$rkey va=$va length=3072 offset=1024 payload=1024 psn=$rq+2 seed=2
> ACK cum_psn=$rq sack=$rq+2
counter duplicate_packets 1
mem off=1024 len=1024
