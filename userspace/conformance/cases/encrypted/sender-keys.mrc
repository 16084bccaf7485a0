# 3. A sender whose keys the receiver does not have yet (protocol.rst,
# "Receiving"): its packet is dropped and the keys derived, kept only if
# that packet opens with them. From the foreign address, to a UD QP (which
# takes datagrams from anyone). Runs only with --psk, and needs --foreign-ip
# on a live device.
#
# These cases need a device that has no keys for the foreign address yet:
# the first run after the device is added (keys live as long as the
# device). The forged case must run first.
section Receiving

# A forged sender (sealed with the peer's key) leaves nothing behind: its
# next packet finds no key either.
case forged-sender-unproven
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=$peer_qpn qkey=$qkey payload=32 foreign key=peer
wait 20
< UD_SEND src_qpn=$peer_qpn qkey=$qkey payload=32 foreign key=peer
wait 20
counter rx_drop_no_key 2
counter rx_peer_unproven 2
counter rx_drop_auth 0
cq none

# A new sender: its first packet is dropped, the next one passes.
case new-sender-derived
qp ud
post_recv wr=1 off=0 len=1024
< UD_SEND src_qpn=$peer_qpn qkey=$qkey payload=32 seed=1 foreign
wait 20
counter rx_drop_no_key 1
counter rx_peer_unproven 0
cq none
< UD_SEND src_qpn=$peer_qpn qkey=$qkey payload=48 seed=2 foreign
cq wr=1 status=success opcode=recv len=40+48
mem off=40 len=48 seed=2
counter rx_decrypted 1
