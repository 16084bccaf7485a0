# What a peer can make a responder hold (protocol.rst, "Responder bounds").
section Responder bounds

# A message of the largest length the protocol allows (2^31) fits the slice
# maps: it is accepted (its first slice placed), not refused.
case largest-message-accepted
< WRITE msn=0 rkey=$rkey va=$va length=0x80000000 offset=0 payload=1024 flags=ack_req
> ACK cum_psn=$rq+1 msn_done=0
wait 5
counter rx_refused_map_budget 0
counter fatal_naks 0
state rts
mem off=0 len=1024 seed=1

# Slices are the agreed MTU: a short slice that is not the last one does not
# fit its message and is refused with INVALID_REQUEST.
case short-middle-slice-invalid-request
< WRITE msn=0 rkey=$rkey va=$va length=4096 offset=0 payload=64
> NAK msn=0 code=invalid_request

# One packet draws at most 16 ACKs at once: a completion acknowledges at
# most 16 paths at once (here 18 have held ACKs), the others after the
# coalescing delay.
case completion-acks-at-most-16-paths
needs instant
post_recv wr=1 off=0 len=65536
< SEND msn=0 rsn=0 length=36864 offset=0 payload=1024 path=0
< SEND msn=0 rsn=0 length=36864 offset=1024 payload=1024 path=1
< SEND msn=0 rsn=0 length=36864 offset=2048 payload=1024 path=2
< SEND msn=0 rsn=0 length=36864 offset=3072 payload=1024 path=3
< SEND msn=0 rsn=0 length=36864 offset=4096 payload=1024 path=4
< SEND msn=0 rsn=0 length=36864 offset=5120 payload=1024 path=5
< SEND msn=0 rsn=0 length=36864 offset=6144 payload=1024 path=6
< SEND msn=0 rsn=0 length=36864 offset=7168 payload=1024 path=7
< SEND msn=0 rsn=0 length=36864 offset=8192 payload=1024 path=8
< SEND msn=0 rsn=0 length=36864 offset=9216 payload=1024 path=9
< SEND msn=0 rsn=0 length=36864 offset=10240 payload=1024 path=10
< SEND msn=0 rsn=0 length=36864 offset=11264 payload=1024 path=11
< SEND msn=0 rsn=0 length=36864 offset=12288 payload=1024 path=12
< SEND msn=0 rsn=0 length=36864 offset=13312 payload=1024 path=13
< SEND msn=0 rsn=0 length=36864 offset=14336 payload=1024 path=14
< SEND msn=0 rsn=0 length=36864 offset=15360 payload=1024 path=15
< SEND msn=0 rsn=0 length=36864 offset=16384 payload=1024 path=16
< SEND msn=0 rsn=0 length=36864 offset=17408 payload=1024 path=17
< SEND msn=0 rsn=0 length=36864 offset=18432 payload=1024 path=0
< SEND msn=0 rsn=0 length=36864 offset=19456 payload=1024 path=1
< SEND msn=0 rsn=0 length=36864 offset=20480 payload=1024 path=2
< SEND msn=0 rsn=0 length=36864 offset=21504 payload=1024 path=3
< SEND msn=0 rsn=0 length=36864 offset=22528 payload=1024 path=4
< SEND msn=0 rsn=0 length=36864 offset=23552 payload=1024 path=5
< SEND msn=0 rsn=0 length=36864 offset=24576 payload=1024 path=6
< SEND msn=0 rsn=0 length=36864 offset=25600 payload=1024 path=7
< SEND msn=0 rsn=0 length=36864 offset=26624 payload=1024 path=8
< SEND msn=0 rsn=0 length=36864 offset=27648 payload=1024 path=9
< SEND msn=0 rsn=0 length=36864 offset=28672 payload=1024 path=10
< SEND msn=0 rsn=0 length=36864 offset=29696 payload=1024 path=11
< SEND msn=0 rsn=0 length=36864 offset=30720 payload=1024 path=12
< SEND msn=0 rsn=0 length=36864 offset=31744 payload=1024 path=13
< SEND msn=0 rsn=0 length=36864 offset=32768 payload=1024 path=14
< SEND msn=0 rsn=0 length=36864 offset=33792 payload=1024 path=15
< SEND msn=0 rsn=0 length=36864 offset=34816 payload=1024 path=16
< SEND msn=0 rsn=0 length=36864 offset=35840 payload=1024 path=17
counter acks_held >=1 within=0
cq wr=1 status=success len=36864

# After a fatal NAK, at most one NAK per 5 ms.
case fatal-nak-at-most-one-per-5ms
< WRITE msn=0 rkey=$rkey+1 va=$va payload=64
> NAK msn=0 code=remote_access
< WRITE msn=1 rkey=$rkey va=$va payload=64
< WRITE msn=2 rkey=$rkey va=$va payload=64
< WRITE msn=3 rkey=$rkey va=$va payload=64
> none NAK for=2
counter fatal_naks_suppressed 3

# READs and atomics beyond max_dest_rd_atomic: one that finds the responder
# holding that many (open, or with a response not wholly sent) is dropped
# unacknowledged, and taken when its resend finds room.
case read-beyond-max-dest-rd-atomic-dropped
qp rc max_dest_rd_atomic=1
< READ_REQ msn=1 rkey=$rkey va=$va length=64 path=0
< READ_REQ msn=2 rkey=$rkey va=$va+64 length=64 path=1 psn=$rq flags=ack_req
> none ACK for=5 but_path=0
counter rx_drop_rd_excess 1
< WRITE msn=0 rkey=$rkey va=$va+4096 length=64 offset=0 payload=64 path=2
> READ_RESP msn=1 length=64 offset=0 payload=64 src=0
< READ_REQ msn=2 rkey=$rkey va=$va+64 length=64 path=1 psn=$rq flags=ack_req
> READ_RESP msn=2 length=64 offset=0 payload=64 src=64
counter rx_drop_rd_excess 1
state rts

# A response sent whole no longer counts, acknowledged or not: a
# requester's next READ may overtake the ACK of the last response.
case read-after-unacknowledged-response-taken
qp rc max_dest_rd_atomic=1
< READ_REQ msn=0 rkey=$rkey va=$va length=64 path=0
> READ_RESP msn=0 length=64 offset=0 payload=64 src=0 path=?a psn=?x
< FETCH_ADD msn=1 rkey=$rkey va=$va+128 add=1 path=0
> ATOMIC_RESP msn=1 path=?b psn=?y
< ACK path=$a psn=$x cum_psn=$x+1 msn_done=0
< ACK path=$b psn=$y cum_psn=$y+1 msn_done=0
counter rx_drop_rd_excess 0
