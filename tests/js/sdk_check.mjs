// Drives sqsemu with the AWS SDK for JavaScript v3 (@aws-sdk/client-sqs, AWS JSON 1.0 protocol).
//
//   node sdk_check.mjs <endpoint-url>
//
// Sends a message with String, Number and Binary message attributes, receives it and checks every value and
// digest. The SDK itself also verifies MD5OfMessageBody on send and receive, so a wrong digest fails the call.
// Prints one JSON summary line on success; exits non-zero with the reason on any failure.
import { createHash } from "node:crypto";
import assert from "node:assert/strict";
import {
  CreateQueueCommand,
  SendMessageCommand,
  SendMessageBatchCommand,
  ReceiveMessageCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  DeleteQueueCommand,
} from "@aws-sdk/client-sqs";
import { clientFromArgs } from "./client.mjs";

const client = clientFromArgs("sdk_check.mjs");

const md5 = (data) => createHash("md5").update(data).digest("hex");

// The MD5OfMessageAttributes algorithm: names sorted; each of name, data type and value length-prefixed
// (4-byte big-endian); a transport byte 1 (string) or 2 (binary) before the value.
function md5OfAttributes(attributes) {
  const parts = [];
  const prefixed = (buf) => {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(buf.length);
    parts.push(len, buf);
  };
  for (const name of Object.keys(attributes).sort()) {
    const { DataType, StringValue, BinaryValue } = attributes[name];
    prefixed(Buffer.from(name, "utf8"));
    prefixed(Buffer.from(DataType, "utf8"));
    if (StringValue !== undefined) {
      parts.push(Buffer.from([1]));
      prefixed(Buffer.from(StringValue, "utf8"));
    } else {
      parts.push(Buffer.from([2]));
      prefixed(Buffer.from(BinaryValue));
    }
  }
  return md5(Buffer.concat(parts));
}

async function main() {
  const queueName = `js-sdk-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
  const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: queueName }));
  assert.ok(QueueUrl.endsWith(`/${queueName}`), `unexpected QueueUrl ${QueueUrl}`);

  const body = "hello from the JS SDK v3: ünïcödé ✓";
  const binary = Uint8Array.from([0, 1, 2, 253, 254, 255]);
  const attributes = {
    color: { DataType: "String", StringValue: "red" },
    count: { DataType: "Number", StringValue: "42" },
    blob: { DataType: "Binary", BinaryValue: binary },
  };

  const sent = await client.send(
    new SendMessageCommand({ QueueUrl, MessageBody: body, MessageAttributes: attributes }),
  );
  assert.ok(sent.MessageId, "SendMessage returned no MessageId");
  assert.equal(sent.MD5OfMessageBody, md5(Buffer.from(body, "utf8")), "MD5OfMessageBody (send)");
  assert.equal(sent.MD5OfMessageAttributes, md5OfAttributes(attributes), "MD5OfMessageAttributes (send)");

  const received = await client.send(
    new ReceiveMessageCommand({
      QueueUrl,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 5,
      MessageAttributeNames: ["All"],
      MessageSystemAttributeNames: ["All"],
    }),
  );
  assert.equal(received.Messages?.length, 1, `expected 1 message, got ${JSON.stringify(received.Messages)}`);
  const [message] = received.Messages;
  assert.equal(message.MessageId, sent.MessageId);
  assert.equal(message.Body, body);
  assert.equal(message.MD5OfBody, sent.MD5OfMessageBody, "MD5OfBody (receive)");
  assert.equal(message.MD5OfMessageAttributes, sent.MD5OfMessageAttributes, "MD5OfMessageAttributes (receive)");
  const got = message.MessageAttributes;
  assert.deepEqual(got.color, { DataType: "String", StringValue: "red" });
  assert.deepEqual(got.count, { DataType: "Number", StringValue: "42" });
  assert.equal(got.blob.DataType, "Binary");
  assert.deepEqual(Buffer.from(got.blob.BinaryValue), Buffer.from(binary), "Binary attribute value");
  assert.equal(message.Attributes?.ApproximateReceiveCount, "1");

  await client.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: message.ReceiptHandle }));

  const batch = await client.send(
    new SendMessageBatchCommand({
      QueueUrl,
      Entries: [
        { Id: "a", MessageBody: "first" },
        { Id: "b", MessageBody: "second", MessageAttributes: { n: { DataType: "Number", StringValue: "7" } } },
      ],
    }),
  );
  assert.equal(batch.Successful?.length, 2, `batch: ${JSON.stringify(batch)}`);
  assert.equal((batch.Failed ?? []).length, 0);

  const { Attributes } = await client.send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["ApproximateNumberOfMessages"] }),
  );
  assert.equal(Attributes.ApproximateNumberOfMessages, "2");

  await client.send(new DeleteQueueCommand({ QueueUrl }));
  console.log(
    JSON.stringify({
      ok: true,
      queueUrl: QueueUrl,
      messageId: sent.MessageId,
      md5OfBody: message.MD5OfBody,
      md5OfMessageAttributes: message.MD5OfMessageAttributes,
    }),
  );
}

main().catch((err) => {
  console.error(`JS SDK check failed: ${err?.name ?? "Error"}: ${err?.message ?? err}`);
  if (err?.$metadata) console.error(JSON.stringify(err.$metadata));
  process.exit(1);
});
