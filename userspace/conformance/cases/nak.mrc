# NAKs (protocol.rst, "NAK semantics").
section NAK semantics

# REMOTE_ACCESS: the range lies outside the memory region. Fatal.
case write-out-of-bounds-remote-access
< WRITE msn=0 rkey=$rkey va=$va+65504 payload=64 flags=ack_req
> NAK msn=0 code=remote_access rnr_delay=0 flags=0
state err
mem off=65504 len=32

# REMOTE_ACCESS: the region does not allow the operation (no remote write).
case write-no-rights-remote-access
qp rc access=ra
< WRITE msn=0 rkey=$rkey va=$va payload=64 flags=ack_req
> NAK msn=0 code=remote_access
mem off=0 len=64

# REMOTE_ACCESS: a READ with an unknown rkey.
case read-bad-rkey-remote-access
< READ_REQ msn=0 rkey=$rkey+7 va=$va length=64
> NAK msn=0 code=remote_access
> none READ_RESP for=20

# REMOTE_ACCESS for an atomic outside the region.
case atomic-out-of-bounds-remote-access
< FETCH_ADD msn=0 rkey=$rkey va=$va+65536 add=1
> NAK msn=0 code=remote_access

# INVALID_REQUEST: an atomic address that is not 8-byte aligned.
case atomic-misaligned-invalid-request
< FETCH_ADD msn=0 rkey=$rkey va=$va+4 add=1
> NAK msn=0 code=invalid_request rnr_delay=0
mem off=0 len=16

# INVALID_REQUEST: the opcode is not enabled on the QP (no remote read).
case read-not-enabled-invalid-request
qp rc access=wa
< READ_REQ msn=0 rkey=$rkey va=$va length=64
> NAK msn=0 code=invalid_request

# The NAK names the refused request by its MSN; its packet path and PSN
# name the packet that caused it.
case nak-names-msn-and-packet
< WRITE msn=0 rkey=$rkey va=$va payload=64
> ACK cum_psn=$rq+1 msn_done=1 within=5
< WRITE msn=1 rkey=$rkey+1 va=$va payload=64 path=4 flags=ack_req
> NAK msn=1 code=remote_access path=4 psn=$rq

# The packets of a refused message are still acknowledged at the path level.
case refused-packet-acked
< WRITE msn=0 rkey=$rkey+1 va=$va payload=64 flags=ack_req
> NAK msn=0 code=remote_access
> ACK cum_psn=$rq+1

# After a fatal NAK the connection's packets draw the NAK again, at most
# one per 5 ms; the others are dropped.
case fatal-nak-repeated-rate-limited
< WRITE msn=0 rkey=$rkey+1 va=$va payload=64
> NAK msn=0 code=remote_access
< WRITE msn=1 rkey=$rkey va=$va payload=64
> none NAK for=1
counter fatal_naks_suppressed 1
+6 < WRITE msn=2 rkey=$rkey va=$va payload=64
> NAK msn=0 code=remote_access within=1
counter fatal_naks 1

# RNR: the message needs a receive that is not posted.
case rnr-no-receive
< SEND msn=0 rsn=0 payload=64 flags=ack_req
> NAK msn=0 code=rnr rnr_delay=1
counter rnr_naks 1
state rts

# The RNR delay is the QP's minimum RNR timer, in units of 10 us (code 14: 1.28 ms).
case rnr-delay-from-min-rnr-timer
qp rc min_rnr_timer=14
< SEND msn=0 rsn=0 payload=64
> NAK msn=0 code=rnr rnr_delay=128

# RNR is not fatal: the message sent again once a receive is posted lands.
case rnr-then-resent-lands
< SEND msn=0 rsn=0 payload=64
> NAK msn=0 code=rnr
post_recv wr=1 off=0 len=128
< SEND msn=0 rsn=0 payload=64 flags=ack_req
> ACK cum_psn=$rq+2 msn_done=1
cq wr=1 status=success len=64

# Every further packet of a refused message draws the same NAK.
case rnr-every-packet-naked
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024
> NAK msn=0 code=rnr
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024
> NAK msn=0 code=rnr within=1
counter rnr_naks 2

# A SEND_INV whose rkey names no fast-registration region is not NAKed: it
# lands, and its receive completes with a local protection error.
case send-inv-unknown-rkey-not-naked
post_recv wr=1 off=0 len=128
< SEND_INV msn=0 rsn=0 inv_rkey=0x4242 payload=64 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=1
> none NAK for=20
cq wr=1 status=loc_prot_err

# A NAK REMOTE_ACCESS to the QP's own WRITE: remote access error, QP in error.
case own-write-nak-remote-access
post_send wr=1 op=write off=0 len=64
> WRITE msn=0 path=?a psn=?x
< NAK msn=0 code=remote_access path=$a psn=$x
cq wr=1 status=rem_access_err opcode=rdma_write within=5
state err

# A NAK INVALID_REQUEST to its own atomic: remote invalid request error.
case own-atomic-nak-invalid-request
post_send wr=1 op=faa off=0 len=8 va=0x7000000 add=1
> FETCH_ADD msn=0 path=?a psn=?x
< NAK msn=0 code=invalid_request path=$a psn=$x
cq wr=1 status=rem_inv_req_err opcode=fetch_add within=5
state err

# RNR to its own SEND: after the delay the whole message goes again as new
# packets with new PSNs; the ACK then completes it.
case own-send-rnr-resent-new-psn
post_send wr=1 op=send off=0 len=64
> SEND msn=0 rsn=0 path=?a psn=?x
< NAK msn=0 code=rnr rnr_delay=100 path=$a psn=$x
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=0
# The SEND's tail probe (the same path and PSN) may cross the NAK.
> none SEND for=0.5 but_path=$a but_psn=$x
> SEND msn=0 rsn=0 payload=64 path=?b psn=?y within=50
< ACK path=$b psn=$y cum_psn=$y+1 msn_done=1
cq wr=1 status=success opcode=send within=5

# RNR retries spent: the work request fails with an RNR retry error.
case own-send-rnr-retry-exhausted
qp rc rnr_retry=0
post_send wr=1 op=send off=0 len=64
> SEND msn=0 path=?a psn=?x
< NAK msn=0 code=rnr rnr_delay=1 path=$a psn=$x
cq wr=1 status=rnr_retry_exc_err within=50
state err
