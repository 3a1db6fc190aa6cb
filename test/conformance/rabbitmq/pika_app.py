"""An application nobody here wrote the client of (Debian's python3-pika, not amqplib), for the
test of what the shadows reproduce of a source's rules (dead-lettering, TTL, limits, priority).

declare URL QUEUE ARGS_JSON      declares QUEUE durable with the given arguments, as an app does
publish URL QUEUE MESSAGES_JSON  publishes [{id, expiration?, priority?, headers?}] to QUEUE through
                                 the default exchange, confirmed
reject URL QUEUE COUNT           consumes COUNT messages and rejects each (requeue=False), as an
                                 app that cannot process them; prints their ids as JSON
read URL QUEUE COUNT             consumes COUNT messages, acks them, prints [{id, priority}] as JSON
"""

import json
import sys

import pika


def channel(url):
    conn = pika.BlockingConnection(pika.URLParameters(url))
    return conn, conn.channel()


def take(ch, queue, count, settle):
    out = []
    ch.basic_qos(prefetch_count=1)
    for method, props, _body in ch.consume(queue, inactivity_timeout=30):
        if method is None:
            raise SystemExit(f"only {len(out)} of {count} messages arrived on {queue} within 30 s")
        settle(method.delivery_tag)
        out.append({"id": props.message_id, "priority": props.priority})
        if len(out) == count:
            break
    ch.cancel()
    return out


def main(argv):
    command, url, queue = argv[1], argv[2], argv[3]
    conn, ch = channel(url)
    try:
        if command == "declare":
            ch.queue_declare(queue, durable=True, arguments=json.loads(argv[4]))
        elif command == "publish":
            ch.confirm_delivery()
            for m in json.loads(argv[4]):
                props = pika.BasicProperties(
                    message_id=m["id"],
                    delivery_mode=2,
                    expiration=m.get("expiration"),
                    priority=m.get("priority"),
                    headers=m.get("headers"),
                )
                ch.basic_publish("", queue, f"body of {m['id']}".encode(), props, mandatory=True)
        elif command == "reject":
            got = take(ch, queue, int(argv[4]), lambda tag: ch.basic_reject(tag, requeue=False))
            print(json.dumps([m["id"] for m in got]))
        elif command == "read":
            print(json.dumps(take(ch, queue, int(argv[4]), lambda tag: ch.basic_ack(tag))))
        else:
            raise SystemExit(f"unknown command {command}")
    finally:
        conn.close()


if __name__ == "__main__":
    main(sys.argv)
