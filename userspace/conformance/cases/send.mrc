# SEND, SEND_IMM and SEND_INV at the responder.
section SEND, SEND_IMM, SEND_INV

case send-one-packet
post_recv wr=1 off=4096 len=1024
< SEND msn=0 rsn=0 payload=64 flags=ack_req
> ACK path=0 epoch=0 cum_psn=$rq+1 sack=none
cq wr=1 status=success opcode=recv len=64
mem off=4096 len=64 seed=1

case send-imm
post_recv wr=1 off=0 len=256
< SEND_IMM msn=0 rsn=0 imm=0xabcd1234 payload=100 flags=ack_req
> ACK cum_psn=$rq+1
cq wr=1 status=success opcode=recv len=100 imm=0xabcd1234
mem off=0 len=100 seed=1

case send-two-packets-reversed
post_recv wr=1 off=8192 len=4096
< SEND msn=0 rsn=0 length=2048 offset=1024 payload=1024 psn=$rq+1 flags=ack_req
< SEND msn=0 rsn=0 length=2048 offset=0 payload=1024 psn=$rq flags=ack_req
> ACK cum_psn=$rq+2 sack=none
cq wr=1 status=success opcode=recv len=2048
mem off=8192 len=2048 seed=1
