"""A second SQS client for the suites: Debian's python3-boto3 (botocore speaks SQS's query/XML
protocol at this version, where the AWS SDK for JavaScript speaks JSON), so a test's traffic
comes from a client this project did not write.

  boto3_sqs.py send ENDPOINT REGION QUEUE_URL MESSAGES_JSON
      MESSAGES_JSON: [{"body", "attributes": {name: {"type", "value" | "base64"}},
                       "group"?, "dedup"?}]; prints the message ids, one JSON list.
  boto3_sqs.py receive ENDPOINT REGION QUEUE_URL COUNT SECONDS
      receives and deletes until COUNT messages or SECONDS passed; prints
      [{"body", "attributes": {...}, "trace"?}] as one JSON list (Binary as base64).
"""
import base64
import json
import sys
import time

import boto3


def client(endpoint, region):
    return boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name=region,
        aws_access_key_id="queuesplit-test",
        aws_secret_access_key="queuesplit-test",
    )


def to_sqs(attributes):
    out = {}
    for name, a in attributes.items():
        if "base64" in a:
            out[name] = {"DataType": a["type"], "BinaryValue": base64.b64decode(a["base64"])}
        else:
            out[name] = {"DataType": a["type"], "StringValue": a["value"]}
    return out


def from_sqs(attributes):
    out = {}
    for name, a in (attributes or {}).items():
        if "BinaryValue" in a:
            out[name] = {"type": a["DataType"], "base64": base64.b64encode(a["BinaryValue"]).decode()}
        else:
            out[name] = {"type": a["DataType"], "value": a["StringValue"]}
    return out


def send(sqs, url, messages):
    ids = []
    for m in messages:
        kwargs = {"QueueUrl": url, "MessageBody": m["body"], "MessageAttributes": to_sqs(m.get("attributes", {}))}
        if "group" in m:
            kwargs["MessageGroupId"] = m["group"]
        if "dedup" in m:
            kwargs["MessageDeduplicationId"] = m["dedup"]
        ids.append(sqs.send_message(**kwargs)["MessageId"])
    print(json.dumps(ids))


def receive(sqs, url, count, seconds):
    got = []
    deadline = time.time() + seconds
    while len(got) < count and time.time() < deadline:
        answer = sqs.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=min(10, count - len(got)),
            MessageAttributeNames=["All"],
            AttributeNames=["All"],
            WaitTimeSeconds=1,
        )
        for m in answer.get("Messages", []):
            entry = {"body": m["Body"], "attributes": from_sqs(m.get("MessageAttributes"))}
            if "AWSTraceHeader" in m.get("Attributes", {}):
                entry["trace"] = m["Attributes"]["AWSTraceHeader"]
            got.append(entry)
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    print(json.dumps(got))


def main():
    command, endpoint, region, url = sys.argv[1:5]
    sqs = client(endpoint, region)
    if command == "send":
        send(sqs, url, json.loads(sys.argv[5]))
    elif command == "receive":
        receive(sqs, url, int(sys.argv[5]), float(sys.argv[6]))
    else:
        sys.exit(f"unknown command {command}: send or receive")


main()
