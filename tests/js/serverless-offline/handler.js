// An SQS consumer with partial batch responses: the records whose body holds "bad" are reported as failed.
module.exports.consume = async (event) => {
  const failed = event.Records.filter((record) => record.body.includes("bad"));
  console.log(JSON.stringify({ received: event.Records.map((record) => record.body) }));
  return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.messageId })) };
};
