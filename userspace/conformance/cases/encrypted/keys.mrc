# One key per direction (protocol.rst, "Keys"). Runs only with --psk.
section Keys

# Sealed with K(qp, peer), the key of the other direction: no tag checks.
case wrong-direction-key
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=64 flags=ack_req key=reverse
> none for=100
counter rx_drop_auth 1
counter rx_decrypted 0
cq none
# The right key, same PSN: it was never received.
< SEND msn=0 rsn=0 payload=64 flags=ack_req psn=$rq
> ACK cum_psn=$rq+1 sack=none
cq wr=1 status=success opcode=recv len=64

# Sealed with the key of another sender's address, sent from the peer's.
case other-address-key
post_recv wr=1 off=0 len=1024
< SEND msn=0 rsn=0 payload=64 flags=ack_req key=foreign
> none for=100
counter rx_drop_auth 1
cq none
