"""The admin layer: ``/health`` and the ``/_sqsemu/*`` routes (clock control, and more as the testing aids grow).

It sits beside the SQS endpoint, never inside the engine: routes call the broker's and clock's public methods.
"""
