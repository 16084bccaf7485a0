section Sender

case write-sent-and-acked
post_send wr=7 op=write off=0 len=256 rkey=0x99 va=0x5000
> WRITE msn=0 rkey=0x99 va=0x5000 length=256 offset=0 payload=256 src=0 path=?p psn=?n epoch=0
< ACK path=$p psn=$n cum_psn=$n+1 msn_done=1
cq wr=7 status=success opcode=rdma_write
