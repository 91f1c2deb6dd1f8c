"""The web console at ``/_sqsemu/ui/``: server-rendered pages (Starlette and Jinja2) over the running server.

The console is part of the server and has no implementation of its own (docs/architecture.md, principle 10). What it
shows comes from the admin functions (``sqsemu.admin.peek``: the queue list and the side-effect-free peek; the clock;
the fault rules) and from the SQS operations table (``sqsemu.protocol.operations``: GetQueueAttributes, ListQueueTags,
ListMessageMoveTasks); what it does goes through the same operation handlers with typed request objects (SendMessage,
SetQueueAttributes, PurgeQueue, DeleteQueue, CreateQueue, TagQueue, UntagQueue, StartMessageMoveTask,
CancelMessageMoveTask) and the same admin functions (advance the clock, add and remove fault rules, reset). Validation
and errors are therefore the engine's, shown on the page.

- :mod:`~sqsemu.console.views`: what the templates show, built from the admin views (times, bodies, links).
- :mod:`~sqsemu.console.actions`: form fields to typed requests, run through the operations table.
- :mod:`~sqsemu.console.routes`: the pages, the form posts and the live-update answers.
- :mod:`~sqsemu.console.assets`: ``templates/`` (Jinja2) and ``static/`` (one CSS file, one plain JavaScript file,
  an icon), read into memory when the server is made: no build step, no CDN, the console works offline, and an
  install that moves the package folder under a running server leaves its console working.

The console sits behind the admin routes' gate (:mod:`sqsemu.security.admin`): cross-site browser requests are
refused, ``--no-admin`` switches it off, and with ``--admin-token`` a login form sets a session cookie
(:mod:`sqsemu.security.console`). ``--no-console`` switches the console alone off.
"""
