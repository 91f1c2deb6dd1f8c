"""The queue engine: pure asyncio state machines, no HTTP and no wire formats, time only from an injected clock.

``broker.Broker`` is the facade the protocol layer calls; ``queue.Queue`` and ``fifo.FifoQueue`` are the state
machines. See docs/architecture.md for the layout.
"""
