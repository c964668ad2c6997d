"""Redis as the core speaks to it: the client it is given (one server or a cluster), sending
again what Redis cut off, and scripts sent on a connection without redis-py's per-call layers."""
