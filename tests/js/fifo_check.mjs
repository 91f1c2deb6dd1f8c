// Drives a sqsemu FIFO queue with the AWS SDK for JavaScript v3 (@aws-sdk/client-sqs, AWS JSON 1.0 protocol).
//
//   node fifo_check.mjs <endpoint-url>
//
// Creates a FIFO queue, sends messages in two message groups with explicit deduplication ids (plus one duplicate
// that must be accepted but not delivered), receives them in per-group order, checks the SequenceNumber,
// MessageGroupId and MessageDeduplicationId system attributes, deletes everything and the queue.
// Prints one JSON summary line on success; exits non-zero with the reason on any failure.
import assert from "node:assert/strict";
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  SendMessageCommand,
  SendMessageBatchCommand,
  ReceiveMessageCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
} from "@aws-sdk/client-sqs";
import { clientFromArgs } from "./client.mjs";

const client = clientFromArgs("fifo_check.mjs");

async function receiveAll(QueueUrl) {
  const { Messages = [] } = await client.send(
    new ReceiveMessageCommand({
      QueueUrl,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: 30,
      MessageSystemAttributeNames: ["All"],
    }),
  );
  return Messages;
}

async function main() {
  const queueName = `js-fifo-${Date.now()}-${Math.floor(Math.random() * 1e9)}.fifo`;
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: queueName, Attributes: { FifoQueue: "true" } }),
  );
  assert.ok(QueueUrl.endsWith(`/${queueName}`), `unexpected QueueUrl ${QueueUrl}`);

  const { Attributes } = await client.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["All"] }));
  assert.equal(Attributes.FifoQueue, "true");
  assert.equal(Attributes.ContentBasedDeduplication, "false");
  assert.equal(Attributes.DeduplicationScope, "queue");

  // Interleaved sends in two groups; one duplicate (same dedup id as a-1) that must not be delivered.
  const plan = [
    { body: "a-1", group: "group-a", dedup: "dedup-a-1" },
    { body: "b-1", group: "group-b", dedup: "dedup-b-1" },
    { body: "a-2", group: "group-a", dedup: "dedup-a-2" },
    { body: "a-1 duplicate", group: "group-a", dedup: "dedup-a-1" },
    { body: "b-2", group: "group-b", dedup: "dedup-b-2" },
  ];
  const sent = new Map(); // body -> SendMessage result
  let lastSequence = -1n;
  for (const { body, group, dedup } of plan) {
    const result = await client.send(
      new SendMessageCommand({ QueueUrl, MessageBody: body, MessageGroupId: group, MessageDeduplicationId: dedup }),
    );
    assert.ok(result.MessageId, `no MessageId for ${body}`);
    if (body.endsWith("duplicate")) continue;
    assert.match(result.SequenceNumber ?? "", /^\d+$/, `SequenceNumber of ${body}: ${result.SequenceNumber}`);
    const sequence = BigInt(result.SequenceNumber);
    assert.ok(sequence > lastSequence, `SequenceNumber not increasing at ${body}`);
    lastSequence = sequence;
    sent.set(body, result);
  }

  const batch = await client.send(
    new SendMessageBatchCommand({
      QueueUrl,
      Entries: [
        { Id: "a3", MessageBody: "a-3", MessageGroupId: "group-a", MessageDeduplicationId: "dedup-a-3" },
        { Id: "b3", MessageBody: "b-3", MessageGroupId: "group-b", MessageDeduplicationId: "dedup-b-3" },
      ],
    }),
  );
  assert.equal(batch.Successful?.length, 2, `batch: ${JSON.stringify(batch)}`);
  for (const entry of batch.Successful) {
    assert.ok(BigInt(entry.SequenceNumber) > lastSequence, `batch SequenceNumber of ${entry.Id}`);
    sent.set(entry.Id === "a3" ? "a-3" : "b-3", entry);
  }

  // Everything is visible: one receive returns both groups, each contiguous and in send order.
  const messages = await receiveAll(QueueUrl);
  const bodies = messages.map((m) => m.Body);
  assert.equal(messages.length, 6, `expected 6 messages, got ${JSON.stringify(bodies)}`);
  const groupA = bodies.filter((b) => b.startsWith("a-"));
  const groupB = bodies.filter((b) => b.startsWith("b-"));
  assert.deepEqual(groupA, ["a-1", "a-2", "a-3"], `group-a order: ${JSON.stringify(bodies)}`);
  assert.deepEqual(groupB, ["b-1", "b-2", "b-3"], `group-b order: ${JSON.stringify(bodies)}`);
  const groupsInOrder = bodies.map((b) => b[0]).join("");
  assert.ok(["aaabbb", "bbbaaa"].includes(groupsInOrder), `groups interleaved: ${JSON.stringify(bodies)}`);
  assert.ok(!bodies.includes("a-1 duplicate"), "the duplicate was delivered");

  for (const message of messages) {
    const expected = sent.get(message.Body);
    assert.ok(expected, `unexpected message ${message.Body}`);
    assert.equal(message.MessageId, expected.MessageId, `MessageId of ${message.Body}`);
    const attrs = message.Attributes ?? {};
    assert.equal(attrs.SequenceNumber, expected.SequenceNumber, `SequenceNumber attribute of ${message.Body}`);
    assert.equal(attrs.MessageGroupId, message.Body.startsWith("a-") ? "group-a" : "group-b");
    assert.equal(attrs.MessageDeduplicationId, `dedup-${message.Body}`);
    assert.equal(attrs.ApproximateReceiveCount, "1");
  }

  // Both groups are in flight now: nothing more to receive until they are deleted.
  assert.equal((await receiveAll(QueueUrl)).length, 0, "a locked group was served again");
  for (const message of messages) {
    await client.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: message.ReceiptHandle }));
  }
  assert.equal((await receiveAll(QueueUrl)).length, 0, "queue not empty after deleting everything");

  await client.send(new DeleteQueueCommand({ QueueUrl }));
  console.log(JSON.stringify({ ok: true, queueUrl: QueueUrl, received: bodies, lastSequenceNumber: String(lastSequence) }));
}

main().catch((err) => {
  console.error(`JS SDK FIFO check failed: ${err?.name ?? "Error"}: ${err?.message ?? err}`);
  if (err?.$metadata) console.error(JSON.stringify(err.$metadata));
  process.exit(1);
});
