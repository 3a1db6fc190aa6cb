"""A second AMQP client (Debian's python3-pika, not amqplib) for the header-type fidelity test.

publish URL QUEUE ID:USER ...   publishes one message per ID to QUEUE through the default
                                exchange, with the header `x-queue-split-user: USER` and one
                                header of every AMQP field type (TYPED below); prints, as JSON,
                                the exact encoding of every header it sent.
read URL QUEUE COUNT            takes COUNT messages off QUEUE (acked) and prints, per message,
                                its id, routing key and the exact encoding of every header.

An encoding is the field value as it travels: its one-byte type tag and its bytes (hex), so a
comparison checks the AMQP type and the value at once. pika itself decodes every integer width
to `int` and cannot send some types (short, float, double, unsigned): `Raw` values are written
as given, and the read side records each header's bytes before pika decodes them.
"""

import json
import struct
import sys
from datetime import datetime, timezone
from decimal import Decimal

import pika
import pika.data
import pika.spec


class Raw:
    """A field value given as its type tag and its encoded bytes."""

    def __init__(self, tag, payload):
        self.encoded = tag + payload


_encode_value = pika.data.encode_value


def encode_value(pieces, value):
    if isinstance(value, Raw):
        pieces.append(value.encoded)
        return len(value.encoded)
    return _encode_value(pieces, value)


# pika looks encode_value up in its module on every call (tables and arrays recurse through it).
pika.data.encode_value = encode_value


def encoded(value):
    pieces = []
    encode_value(pieces, value)
    return b"".join(pieces)


TYPED = {
    "h-bool": True,
    "h-byte": Raw(b"b", struct.pack(">b", -5)),
    "h-ubyte": Raw(b"B", struct.pack(">B", 200)),
    "h-short": Raw(b"s", struct.pack(">h", -1234)),
    "h-ushort": Raw(b"u", struct.pack(">H", 60000)),
    "h-long": 7,  # pika sends an int that fits 32 bits as a long (I)
    "h-ulong": Raw(b"i", struct.pack(">I", 4000000000)),
    "h-longlong-small": Raw(b"l", struct.pack(">q", 5)),
    "h-longlong-big": 2**62 + 1,  # beyond 2^53; pika sends it as a longlong (l)
    "h-float": Raw(b"f", struct.pack(">f", 1.5)),
    "h-double": Raw(b"d", struct.pack(">d", 3.25)),
    "h-double-integral": Raw(b"d", struct.pack(">d", 2.0)),
    "h-decimal": Decimal("123.45"),
    "h-decimal-negative": Decimal("-1.5"),
    "h-timestamp": datetime(2023, 11, 14, 22, 13, 20, tzinfo=timezone.utc),
    "h-longstr": "h\u00e9llo",
    "h-bytes": b"\x00\x01\xfe\xff",
    "h-void": None,
    "h-table": {"n": Raw(b"s", struct.pack(">h", 7)), "inner": {"b": True}, "!": "bang", "big": 2**40},
    "h-array": [Raw(b"B", struct.pack(">B", 9)), "two", Raw(b"d", struct.pack(">d", 3.0)), [1], {"k": Raw(b"f", struct.pack(">f", 0.25))}],
}


def connect(url):
    connection = pika.BlockingConnection(pika.URLParameters(url))
    return connection, connection.channel()


def publish(url, queue, specs):
    connection, channel = connect(url)
    channel.confirm_delivery()
    for spec in specs:
        message_id, user = spec.split(":", 1)
        headers = dict(TYPED, **{"x-queue-split-user": user})
        properties = pika.BasicProperties(message_id=message_id, delivery_mode=2, headers=headers)
        channel.basic_publish("", queue, b"body of " + message_id.encode(), properties, mandatory=True)
    connection.close()
    print(json.dumps({key: encoded(value).hex() for key, value in TYPED.items()}))


# The read side: keep the raw header table of every content header pika decodes.
_decode_properties = pika.spec.BasicProperties.decode


def decode_properties(self, data, offset=0):
    self.raw = bytes(data[offset:])
    return _decode_properties(self, data, offset)


pika.spec.BasicProperties.decode = decode_properties


def raw_headers(raw):
    """Header name -> the field value's encoding, from the raw basic properties."""
    flags = struct.unpack_from(">H", raw, 0)[0]
    offset = 2
    for bit in (15, 14):  # content-type, content-encoding: short strings before the headers
        if flags & (1 << bit):
            offset += 1 + raw[offset]
    if not flags & (1 << 13):
        return {}
    size = struct.unpack_from(">I", raw, offset)[0]
    offset += 4
    end = offset + size
    fields = {}
    while offset < end:
        key, offset = pika.data.decode_short_string(raw, offset)
        start = offset
        _, offset = pika.data.decode_value(raw, offset)
        fields[key] = raw[start:offset].hex()
    return fields


def read(url, queue, count):
    connection, channel = connect(url)
    out = []
    for _ in range(600):  # up to 60 s: copies may lag under CI load
        if len(out) == count:
            break
        method, properties, _body = channel.basic_get(queue, auto_ack=True)
        if method is None:
            connection.sleep(0.1)
            continue
        out.append(
            {
                "id": properties.message_id,
                "exchange": method.exchange,
                "routingKey": method.routing_key,
                "headers": raw_headers(properties.raw),
            }
        )
    connection.close()
    print(json.dumps(out))


if __name__ == "__main__":
    command, url, queue, *rest = sys.argv[1:]
    if command == "publish":
        publish(url, queue, rest)
    elif command == "read":
        read(url, queue, int(rest[0]))
    else:
        sys.exit(f"unknown command {command}: publish or read")
