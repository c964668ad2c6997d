"""The configuration file: one YAML document validated at start-up, its source positions (so
errors name file, line and field), ``${ENV}`` references, and role bindings.

Its modules are imported by name (``core.config.core_config``...): this package imports
none of them, so that a command needs only what it reads."""
