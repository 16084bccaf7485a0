# QP1: connection management rides UD_SEND datagrams between the QPs
# numbered 1, Q_Key 0x80010000 (protocol.rst, "Not yet specified"). The
# MAD layer behind QP1 is the kernel's (ib_core), so the host target skips.
section Not yet specified

# A GET of a management class nobody serves is answered, from QP 1 to the
# sender's QP 1, with GET_RESP and status "unsupported method/attribute".
case qp1-mad-get-answered
needs mad
qp ud
< UD_SEND qpn=1 src_qpn=1 qkey=0x80010000 data=01.2a.01.01.0000.0000.00000000c0ffee01.0010.0000.00000000 extra=232
> UD_SEND qpn=1 src_qpn=1 qkey=0x80010000 data=01.2a.01.81.000c.0000.00000000c0ffee01 payload=256
counter gsi_rx_packets 1
counter gsi_tx_packets 1

# QP1 takes only its own Q_Key.
case qp1-wrong-qkey-dropped
needs mad
qp ud
< UD_SEND qpn=1 src_qpn=1 qkey=0x1234 data=01.2a.01.01.0000.0000.00000000c0ffee02.0010.0000.00000000 extra=232
> none UD_SEND for=200
counter gsi_rx_packets 0
counter ud_rx_drop_qkey 1
