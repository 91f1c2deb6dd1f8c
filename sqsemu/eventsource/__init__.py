"""Event source mappings: queues delivered to functions, as AWS Lambda's SQS poller does (docs/lambda.md).

A layer beside ``sqsemu.admin`` (docs/architecture.md, principle 14): it receives, deletes and leaves messages
through the broker's public calls, exactly as a client would, and knows nothing of the HTTP hot path.

- ``errors``: Lambda's error shapes (code, HTTP status, message).
- ``mapping``: one event source mapping, its parameters checked as CreateEventSourceMapping and
  UpdateEventSourceMapping check them, and its JSON shape.
- ``filters``: Lambda's event filtering patterns (FilterCriteria).
- ``event``: the SQS event a function receives (``Records``).
- ``functions``: what a function name invokes: a Python callable, or a Lambda Invoke API endpoint over HTTP; the
  account each function belongs to.
- ``poller``: the workers of one mapping (batching window, batch size, maximum concurrency, back-off, partial
  batch responses).
- ``registry``: every mapping of a server, kept in durable mode, declared in the config file.
- ``api``: the REST API under ``/2015-03-31/event-source-mappings`` and ``/2015-03-31/functions``, and the tagging
  API of mappings under ``/2017-03-31/tags/``.
- ``provisioned``: provisioned mode (``ProvisionedPollerConfig``) of an SQS mapping.
- ``tags``: tags of mappings, and the resource ARN of the tagging API.
- ``catalog``: GetFunction and ListFunctions, an account's functions.
- ``declare``: the config file's ``[[event_source_mappings]]`` and ``[functions.NAME]`` tables.
"""

LAMBDA_API_PREFIX = "/2015-03-31/"
"""The path prefix of the Lambda REST API (the API version of every Lambda operation's path)."""
LAMBDA_TAGS_PREFIX = "/2017-03-31/tags/"
"""The path prefix of Lambda's tagging API (TagResource, UntagResource, ListTags: botocore's ``requestUri``)."""
LAMBDA_API_PREFIXES = (LAMBDA_API_PREFIX, LAMBDA_TAGS_PREFIX)
"""Every path prefix the Lambda API app serves."""
