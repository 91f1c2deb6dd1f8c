// Drives sqsemu's SNS with the AWS SDK for JavaScript v3 (@aws-sdk/client-sns, AWS Query protocol; the queues with
// @aws-sdk/client-sqs, AWS JSON 1.0), run by tests/integration/test_sns_clients.py.
//
//   node sns_check.mjs <endpoint-url>
//
// One standard topic fanning out to two queues (one subscription with the JSON envelope, one with raw delivery), a
// publish with a String, a Number and a Binary message attribute, both deliveries received; then a FIFO topic with
// content-based deduplication to a FIFO queue: three messages of one group and a duplicate, received in order.
// The SQS client verifies the MD5OfBody of what it receives itself (not MD5OfMessageAttributes: docs/behaviour.md 8.1).
// Prints one JSON summary
// line (what was published and received, binary values in base64) that the Python test checks further; exits
// non-zero with the reason on any failure.
import assert from "node:assert/strict";
import {
  CreateTopicCommand,
  DeleteTopicCommand,
  GetSubscriptionAttributesCommand,
  ListSubscriptionsByTopicCommand,
  PublishCommand,
  SNSClient,
  SubscribeCommand,
} from "@aws-sdk/client-sns";
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from "@aws-sdk/client-sqs";

const endpoint = process.argv[2];
if (!endpoint) {
  console.error("usage: node sns_check.mjs <endpoint-url>");
  process.exit(64);
}
const settings = {
  region: "us-east-1",
  endpoint,
  credentials: { accessKeyId: "test", secretAccessKey: "test" },
  maxAttempts: 1,
};
const sns = new SNSClient(settings);
const sqs = new SQSClient(settings);
const suffix = `${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
const MESSAGE = "hello from the JavaScript SDK";
const BLOB = Uint8Array.from([2, 3, 4]);

async function queue(name, attributes = {}) {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }));
  return { url: QueueUrl, arn: Attributes.QueueArn };
}

async function receive(QueueUrl, wanted) {
  const messages = [];
  for (let tries = 0; tries < 5 && messages.length < wanted; tries++) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 5,
        MessageAttributeNames: ["All"],
        MessageSystemAttributeNames: ["All"],
      }),
    );
    messages.push(...Messages);
  }
  return messages;
}

function plainAttributes(attributes = {}) {
  const out = {};
  for (const [name, value] of Object.entries(attributes)) {
    out[name] = { DataType: value.DataType };
    if (value.StringValue !== undefined) out[name].StringValue = value.StringValue;
    if (value.BinaryValue !== undefined) out[name].BinaryValue = Buffer.from(value.BinaryValue).toString("base64");
  }
  return out;
}

async function main() {
  const created = [];
  const topics = [];
  try {
    // A standard topic, two queues: the envelope and raw delivery.
    const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `js-sns-${suffix}` }));
    topics.push(TopicArn);
    const envelopeQueue = await queue(`js-sns-envelope-${suffix}`);
    const rawQueue = await queue(`js-sns-raw-${suffix}`);
    created.push(envelopeQueue.url, rawQueue.url);
    const envelopeSub = await sns.send(
      new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: envelopeQueue.arn, ReturnSubscriptionArn: true }),
    );
    const rawSub = await sns.send(
      new SubscribeCommand({
        TopicArn,
        Protocol: "sqs",
        Endpoint: rawQueue.arn,
        Attributes: { RawMessageDelivery: "true" },
      }),
    );
    assert.ok(rawSub.SubscriptionArn.startsWith(`${TopicArn}:`), `raw subscription: ${rawSub.SubscriptionArn}`);
    const { Attributes: rawAttributes } = await sns.send(
      new GetSubscriptionAttributesCommand({ SubscriptionArn: rawSub.SubscriptionArn }),
    );
    assert.equal(rawAttributes.RawMessageDelivery, "true");
    assert.equal(rawAttributes.PendingConfirmation, "false");
    const { Subscriptions } = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn }));
    assert.equal(Subscriptions.length, 2);

    const published = await sns.send(
      new PublishCommand({
        TopicArn,
        Message: MESSAGE,
        Subject: "greeting",
        MessageAttributes: {
          colour: { DataType: "String", StringValue: "blue" },
          size: { DataType: "Number", StringValue: "3" },
          blob: { DataType: "Binary", BinaryValue: BLOB },
        },
      }),
    );
    const [envelope] = await receive(envelopeQueue.url, 1);
    const [raw] = await receive(rawQueue.url, 1);
    assert.ok(envelope, "nothing reached the envelope subscription's queue");
    assert.ok(raw, "nothing reached the raw subscription's queue");

    // A FIFO topic with content-based deduplication, to a FIFO queue.
    const fifoTopic = await sns.send(
      new CreateTopicCommand({
        Name: `js-sns-${suffix}.fifo`,
        Attributes: { FifoTopic: "true", ContentBasedDeduplication: "true" },
      }),
    );
    topics.push(fifoTopic.TopicArn);
    const fifoQueue = await queue(`js-sns-${suffix}.fifo`, { FifoQueue: "true" });
    created.push(fifoQueue.url);
    await sns.send(
      new SubscribeCommand({
        TopicArn: fifoTopic.TopicArn,
        Protocol: "sqs",
        Endpoint: fifoQueue.arn,
        Attributes: { RawMessageDelivery: "true" },
      }),
    );
    const fifoPublished = [];
    for (const body of ["first", "second", "third", "first"]) {
      const result = await sns.send(
        new PublishCommand({ TopicArn: fifoTopic.TopicArn, Message: body, MessageGroupId: "group-1" }),
      );
      fifoPublished.push({ MessageId: result.MessageId, SequenceNumber: result.SequenceNumber });
    }
    const fifoReceived = await receive(fifoQueue.url, 3);

    console.log(
      JSON.stringify({
        ok: true,
        message: MESSAGE,
        blob: Buffer.from(BLOB).toString("base64"),
        topicArn: TopicArn,
        envelopeQueueArn: envelopeQueue.arn,
        envelopeSubscriptionArn: envelopeSub.SubscriptionArn,
        rawSubscriptionArn: rawSub.SubscriptionArn,
        messageId: published.MessageId,
        envelopeBody: envelope.Body,
        envelopeMessageAttributes: plainAttributes(envelope.MessageAttributes),
        raw: { Body: raw.Body, MessageAttributes: plainAttributes(raw.MessageAttributes) },
        fifoTopicArn: fifoTopic.TopicArn,
        fifoPublished,
        fifoReceived: fifoReceived.map((m) => ({ Body: m.Body, Attributes: m.Attributes })),
      }),
    );
  } finally {
    for (const QueueUrl of created) await sqs.send(new DeleteQueueCommand({ QueueUrl }));
    for (const TopicArn of topics) await sns.send(new DeleteTopicCommand({ TopicArn }));
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
