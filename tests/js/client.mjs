// The SQS client both checks use: the endpoint from the command line, dummy credentials, no retries.
import { SQSClient } from "@aws-sdk/client-sqs";

export function clientFromArgs(script) {
  const endpoint = process.argv[2];
  if (!endpoint) {
    console.error(`usage: node ${script} <endpoint-url>`);
    process.exit(64);
  }
  return new SQSClient({
    region: "us-east-1",
    endpoint,
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
    maxAttempts: 1,
  });
}
