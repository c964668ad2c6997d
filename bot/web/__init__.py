"""The operator's window (``deliberate web``): a small server-rendered web application over
the same Redis, config and gateway as the bots. Per workspace: its state, its mutation log,
one turn's or proposal's trace, the inbox of pending proposals (applied, edited or rejected
through the gateway, as a chat click is), and the rules' recent evaluations. People sign in
with Slack (OpenID Connect) or Discord (OAuth2) and act as the person they are in chat; an
operator token reads without acting. ``/metrics`` serves Prometheus, ``/health`` the
platform's router."""
