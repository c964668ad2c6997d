"""Redis as the bot's processes reach it: the connection a command or a server opens (``REDIS_URL``,
else the embedded server of ``DELIBERATE_HOME``), the embedded server itself, the look over
every workspace's keys (``census``) and the rules' job queue (``queues``)."""
