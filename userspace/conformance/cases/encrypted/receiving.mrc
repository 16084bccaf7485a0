# A receiver's checks, in their order (protocol.rst, "Receiving"): each
# dropped packet is counted and touches no state (the same PSN is then
# accepted). Runs only with --psk.
section Receiving

# 1. A packet in the clear.
case clear-dropped
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=64 flags=ack_req clear
> none for=100
counter rx_drop_not_encrypted 1
cq none
< SEND msn=0 rsn=0 payload=64 flags=ack_req psn=$rq
> ACK cum_psn=$rq+1 sack=none
cq wr=1 status=success opcode=recv len=64

# 2. Shorter than base header, 8 bytes of ciphertext and the trailer (a
# SEND cut to 4 bytes of its header, sealed: 52 bytes); the shortest (a
# UD_SEND without payload, 56 bytes) passes.
case too-short-dropped
< SEND msn=0 rsn=0 flags=ack_req trunc=24+4
> none for=100
counter rx_drop_short 1
counter rx_drop_auth 0

case shortest-accepted
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=$peer_qpn qkey=$qkey trunc=24+4
< UD_SEND src_qpn=$peer_qpn qkey=$qkey
cq wr=1 status=success opcode=recv len=40
counter rx_drop_short 1
counter rx_decrypted 1

# 4. A bit flipped in the ciphertext, the tag, the trailer's counter (the
# nonce) or the clear base header (the AAD).
case tampered-ciphertext
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=64 flags=ack_req tamper=ct
> none for=100
counter rx_drop_auth 1
cq none
< SEND msn=0 rsn=0 payload=64 flags=ack_req psn=$rq
> ACK cum_psn=$rq+1 sack=none
cq wr=1 status=success opcode=recv len=64

case tampered-tag
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=64 flags=ack_req tamper=tag
> none for=100
counter rx_drop_auth 1
cq none
< SEND msn=0 rsn=0 payload=64 flags=ack_req psn=$rq
> ACK cum_psn=$rq+1 sack=none
cq wr=1 status=success opcode=recv len=64

case tampered-counter
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=64 flags=ack_req tamper=counter
> none for=100
counter rx_drop_auth 1
cq none
< SEND msn=0 rsn=0 payload=64 flags=ack_req psn=$rq
> ACK cum_psn=$rq+1 sack=none
cq wr=1 status=success opcode=recv len=64

case tampered-base-header
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=64 flags=ack_req tamper=base
> none for=100
counter rx_drop_auth 1
cq none
< SEND msn=0 rsn=0 payload=64 flags=ack_req psn=$rq
> ACK cum_psn=$rq+1 sack=none
cq wr=1 status=success opcode=recv len=64
