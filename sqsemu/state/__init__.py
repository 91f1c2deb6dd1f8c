"""Saved states: the whole state of a server as one versioned file, saved from a running server and loaded into one.

- :mod:`.form`: the file (JSON lines: a header, one record per row or document, an end line) and its reader;
- :mod:`.export`: the engine, SNS and the event source mappings written as that file, in slices of the event loop;
- :mod:`.load`: a file checked in full (a scratch engine restores it), then swapped in for the whole state;
- :mod:`.routes`: ``GET`` and ``POST /_sqsemu/state``;
- :mod:`.client`: ``sqsemu state save`` and ``sqsemu state load`` against a running server.

"The state" has one definition, durable mode's: the rows of :mod:`sqsemu.persistence.rowforms` (queues, messages,
deduplication keys, sequence numbers, move tasks), the mappings' saved documents (``Mapping.saved``) and the topics'
(``Topic.to_doc``). A file holds exactly those, and a load goes through the functions durable mode restores with.
docs/state.md is the user's page.
"""
