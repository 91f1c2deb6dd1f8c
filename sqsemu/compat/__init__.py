"""Drop-in compatibility with other local SQS emulators (docs/coming-from-localstack.md, coming-from-elasticmq.md,
coming-from-moto.md): each module answers one emulator's own surface on top of sqsemu's, never instead of it.

- :mod:`sqsemu.compat.moto`: ``POST /moto-api/reset`` (every mode).
- :mod:`sqsemu.compat.localstack`: ``/_localstack/health``, ``/_localstack/init``, ``/_aws/sqs/messages``
  (``--compat localstack``).
- :mod:`sqsemu.compat.initscripts`: LocalStack's ``ready.d`` init scripts and the ``Ready.`` line.
- :mod:`sqsemu.compat.foreign`: another AWS service's call answered with an error naming what sqsemu is.
- :mod:`sqsemu.compat.elasticmq`: ElasticMQ's HOCON ``.conf`` file read as sqsemu's configuration file.

The routes sit in the admin app (behind the admin gate: ``--no-admin`` and ``--admin-token`` apply to them, except
LocalStack's read-only ``/_localstack/health`` and ``/_localstack/init``, open like ``/health``).
"""
